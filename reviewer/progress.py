"""What the user sees on stderr while the model works: turns, tool calls, tokens, time.

On a terminal one status line is redrawn in place; in a log (CI) each turn is one line, so
the log stays readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from reviewer.findings import Usage
from reviewer.report.common import plural
from reviewer.sinks import log_line

_MAX_ARGS_SHOWN = 90


class Progress:
    def __init__(
        self, stream: TextIO | None = None, *, enabled: bool = True, part: str = ""
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.live = enabled and self.stream.isatty()
        self.started = time.monotonic()
        self.turn = 0
        self.usage = Usage()
        self.tool_calls = 0
        # "part 2/14 (src/api/)": which loop of a large review a line is about.
        self.part = part

    def for_part(self, number: int, total: int, label: str) -> Progress:
        """The progress of one part of a review split into several: its own counters, its
        lines labelled, the review's clock."""
        if total <= 1:
            return self
        child = Progress(self.stream, enabled=self.enabled, part=f"part {number}/{total} ({label})")
        child.started = self.started
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
        if self.live:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

    def _status(self, activity: str) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        where = f"{self.part} · " if self.part else ""
        text = (
            f"{where}turn {self.turn} · {plural(self.tool_calls, 'tool call')} · "
            f"{self.usage.total_tokens:,} tokens · {elapsed:.0f}s · {activity}"
        )
        if self.live:
            width = 118
            self.stream.write("\r\x1b[2K" + log_line(text)[:width])
            self.stream.flush()
        else:
            self._line(text)

    def _line(self, text: str) -> None:
        if not self.enabled:
            return
        if self.live:
            self.stream.write("\r\x1b[2K")
        # The model's tool names and arguments pass through here: one way in (sinks.log_line).
        self.stream.write(log_line(text) + "\n")
        self.stream.flush()
