"""The progress line: its clock keeps running while a request is out, on a terminal and
(as an occasional line) in a log."""

from __future__ import annotations

import io
import re
import time

from reviewer.findings import Usage
from reviewer.review.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def seconds_shown(text: str) -> list[int]:
    return [int(s) for s in re.findall(r" · (\d+)s · waiting for the model", text)]


def test_the_live_line_is_redrawn_while_the_model_is_waited_for() -> None:
    stream = Terminal()
    progress = Progress(stream, tick=0.05)
    progress.started -= 7  # a review seven seconds in
    progress.turn_started(3, Usage(100, 5, 3), 2)
    time.sleep(0.4)
    progress.started -= 5  # five more seconds pass during the same request
    time.sleep(0.3)
    progress.done()
    shown = seconds_shown(stream.getvalue())
    assert len(shown) >= 4, stream.getvalue()
    assert shown[0] == 7 and shown[-1] in (12, 13)
    assert stream.getvalue().endswith("\r\x1b[2K")
    # Nothing is drawn after done().
    after = stream.getvalue()
    time.sleep(0.15)
    assert stream.getvalue() == after


def test_a_long_wait_in_a_log_adds_a_line_now_and_then() -> None:
    stream = io.StringIO()
    progress = Progress(stream, tick=0.02, heartbeat=0.1)
    progress.turn_started(1, Usage(), 0)
    time.sleep(0.35)
    progress.done()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("reviewer: turn 1 · 0 tool calls")
    waits = [line for line in lines[1:] if "waiting for the model (for " in line]
    assert 2 <= len(waits) <= 4, lines
    assert all("\r" not in line and "\x1b" not in line for line in lines)


def test_parts_share_one_ticker_and_one_clock() -> None:
    stream = Terminal()
    progress = Progress(stream, tick=0.05)
    first = progress.for_part(1, 2, "a/")
    second = progress.for_part(2, 2, "b/")
    first.turn_started(1, Usage(), 0)
    second.turn_started(1, Usage(), 0)
    time.sleep(0.2)
    progress.done()
    text = stream.getvalue()
    # The ticker redraws the part that spoke last.
    assert text.count("part 2/2 (b/)") >= 3
    assert first._ticker is second._ticker is progress._ticker
