"""What the user sees on stderr while the model works: turns, tool calls, tokens, time.

On a terminal one status line is redrawn in place, and a ticker keeps its clock running
while a request is out (a request can take minutes); in a log (CI) each turn is one line,
so the log stays readable, and a long wait adds a line now and then so the job is seen alive.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from reviewer.findings import Usage
from reviewer.safety.sinks import log_line
from reviewer.wording import plural

_MAX_ARGS_SHOWN = 90
# The live line is redrawn this often while nothing else happens.
TICK_SECONDS = 1.0
# In a log, a request still out after this long gets a line (and again after as long).
HEARTBEAT_SECONDS = 30.0


class _Ticker:
    """One per review, shared by the parts: it owns the stream's last status line and
    redraws it with the time so far until the review is done."""

    def __init__(self, tick: float, heartbeat: float) -> None:
        # Re-entrant: the heartbeat writes its line through Progress._line under it.
        self.lock = threading.RLock()
        self.tick = tick
        self.heartbeat = heartbeat
        self.latest: Progress | None = None
        self.since = time.monotonic()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def show(self, progress: Progress) -> None:
        with self.lock:
            self.latest = progress
            self.since = time.monotonic()
            if self.thread is None and not self.stop.is_set():
                self.thread = threading.Thread(target=self._run, name="progress", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.tick):
            with self.lock:
                progress = self.latest
                quiet = time.monotonic() - self.since
                if progress is None or self.stop.is_set():
                    continue
                if progress.live:
                    progress._draw()
                elif quiet >= self.heartbeat:
                    self.since = time.monotonic()
                    progress._line(progress._text(progress.activity + f" (for {quiet:.0f}s)"))

    def close(self) -> None:
        self.stop.set()
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2 * self.tick + 1)


class Progress:
    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool = True,
        part: str = "",
        tick: float = TICK_SECONDS,
        heartbeat: float = HEARTBEAT_SECONDS,
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.live = enabled and self.stream.isatty()
        self.started = time.monotonic()
        self.turn = 0
        self.usage = Usage()
        self.tool_calls = 0
        self.activity = ""
        # "part 2/14 (src/api/)": which loop of a large review a line is about.
        self.part = part
        self._ticker = _Ticker(tick, heartbeat)

    def for_part(self, number: int, total: int, label: str) -> Progress:
        """The progress of one part of a review split into several: its own counters, its
        lines labelled, the review's clock and ticker."""
        if total <= 1:
            return self
        child = Progress(self.stream, enabled=self.enabled, part=f"part {number}/{total} ({label})")
        child.started = self.started
        child._ticker = self._ticker
        return child

    def turn_started(self, turn: int, usage: Usage, tool_calls: int) -> None:
        self.turn, self.usage, self.tool_calls = turn, usage, tool_calls
        self._status("waiting for the model")

    def tool_called(self, name: str, arguments: str, cached: bool) -> None:
        self.tool_calls += 1
        shown = " ".join(arguments.split())
        if len(shown) > _MAX_ARGS_SHOWN:
            shown = shown[: _MAX_ARGS_SHOWN - 1] + "…"
        self._status(f"{name} {shown}{' (repeat)' if cached else ''}")

    def note(self, text: str) -> None:
        self._line(text)

    def retrying(self, reason: str, delay: float) -> None:
        self._line(f"model endpoint: {reason}; retrying in {delay:.1f} s")

    def done(self) -> None:
        self._ticker.close()
        if self.live:
            with self._ticker.lock:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()

    def _status(self, activity: str) -> None:
        if not self.enabled:
            return
        self.activity = activity
        if self.live:
            with self._ticker.lock:
                self._draw()
        else:
            self._line(self._text(activity))
        self._ticker.show(self)

    def _text(self, activity: str) -> str:
        elapsed = time.monotonic() - self.started
        where = f"{self.part} · " if self.part else ""
        return (
            f"{where}turn {self.turn} · {plural(self.tool_calls, 'tool call')} · "
            f"{self.usage.total_tokens:,} tokens · {elapsed:.0f}s · {activity}"
        )

    def _draw(self) -> None:
        """Redraw the live line (the caller holds the ticker's lock)."""
        width = 118
        self.stream.write("\r\x1b[2K" + log_line(self._text(self.activity))[:width])
        self.stream.flush()

    def _line(self, text: str) -> None:
        if not self.enabled:
            return
        # The model's tool names and arguments pass through here: one way in (sinks.log_line).
        line = ("\r\x1b[2K" if self.live else "") + log_line(text) + "\n"
        with self._ticker.lock:
            self.stream.write(line)
            self.stream.flush()
