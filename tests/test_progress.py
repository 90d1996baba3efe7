"""The progress line: its clock keeps running while a request is out, on a terminal and
(as an occasional line) in a log.

No test here sleeps or reads the wall clock: the progress module's clock is a fake the test
moves, and the test waits for what the ticker writes (an order of events), under a guard that
only a ticker that never writes reaches."""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Callable

import pytest

import reviewer.review.progress as progress_module
from reviewer.findings import Usage
from reviewer.review.progress import Progress

GUARD_SECONDS = 60.0


class Clock:
    """Stands for the `time` module inside reviewer.review.progress: time moves when the test
    says, and the test can wait until the clock has been read (the ticker reads it every tick)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.reads = 0
        self.read = threading.Condition()

    def monotonic(self) -> float:
        with self.read:
            self.reads += 1
            self.read.notify_all()
            return self.now

    def wait_for_reads(self, count: int) -> None:
        with self.read:
            target = self.reads + count
            assert self.read.wait_for(lambda: self.reads >= target, GUARD_SECONDS)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress_module, "time", fake)
    return fake


class Stream(io.StringIO):
    """A stream the test can wait on: each write wakes whoever waits for some text."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty
        self.written = threading.Condition()

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        with self.written:
            count = super().write(text)
            self.written.notify_all()
            return count

    def wait_for(self, holds: Callable[[str], bool]) -> None:
        with self.written:
            if not self.written.wait_for(lambda: holds(self.getvalue()), GUARD_SECONDS):
                raise AssertionError(f"never written; the stream holds:\n{self.getvalue()!r}")


def seconds_shown(text: str) -> list[int]:
    return [int(s) for s in re.findall(r" · (\d+)s · waiting for the model", text)]


def test_the_live_line_is_redrawn_while_the_model_is_waited_for(clock: Clock) -> None:
    stream = Stream(tty=True)
    progress = Progress(stream, tick=0.01)
    clock.now += 7  # a review seven seconds in
    progress.turn_started(3, Usage(100, 5, 3), 2)
    assert seconds_shown(stream.getvalue()) == [7]  # drawn at once, by the turn itself
    # The ticker redraws while the request is out, with nothing else happening...
    stream.wait_for(lambda text: len(seconds_shown(text)) >= 3)
    clock.now += 5  # five more seconds pass during the same request
    # ...and its redraws show the time moving on.
    stream.wait_for(lambda text: seconds_shown(text)[-1] == 12)
    progress.done()
    shown = seconds_shown(stream.getvalue())
    assert set(shown) == {7, 12} and shown == sorted(shown), shown
    assert stream.getvalue().endswith("\r\x1b[2K")
    # Nothing is drawn after done(): the ticker's thread has ended, so nothing can draw.
    ticker = progress._ticker.thread
    assert ticker is not None and not ticker.is_alive()


def test_a_long_wait_in_a_log_adds_a_line_now_and_then(clock: Clock) -> None:
    stream = Stream(tty=False)
    progress = Progress(stream, tick=0.01, heartbeat=30)
    progress.turn_started(1, Usage(), 0)

    def waits(text: str) -> list[str]:
        return [line for line in text.splitlines() if "waiting for the model (for " in line]

    # Quiet for less than the heartbeat: the ticker looks at the clock, tick after tick, and
    # adds nothing. Then, each time the clock passes the heartbeat, exactly one line.
    clock.now += 29
    clock.wait_for_reads(3)
    assert not waits(stream.getvalue())
    clock.now += 2  # 31 s without a word
    stream.wait_for(lambda text: len(waits(text)) == 1)
    clock.now += 31
    stream.wait_for(lambda text: len(waits(text)) == 2)
    progress.done()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("reviewer: turn 1 · 0 tool calls")
    assert [line.rsplit(" (for ", 1)[1] for line in waits(stream.getvalue())] == ["31s)", "31s)"]
    assert len(lines) == 3, lines
    assert all("\r" not in line and "\x1b" not in line for line in lines)


def test_parts_share_one_ticker_and_one_clock(clock: Clock) -> None:
    stream = Stream(tty=True)
    progress = Progress(stream, tick=0.01)
    first = progress.for_part(1, 2, "a/")
    second = progress.for_part(2, 2, "b/")
    first.turn_started(1, Usage(), 0)
    second.turn_started(1, Usage(), 0)
    # The ticker redraws the part that spoke last, and only it.
    stream.wait_for(lambda text: text.count("part 2/2 (b/)") >= 3)
    progress.done()
    text = stream.getvalue()
    assert text.count("part 1/2 (a/)") == 1, text
    assert first._ticker is second._ticker is progress._ticker
