"""Grounding a finding in the code: its `quote` must be in the file it names.

A model often cites a line a few lines off; the quote says which code it meant. A quote not
at the cited lines is looked for in the same hunk (or, for a line outside the diff, a few
lines around it) and the finding is moved there, with a note for the reports. A quote that
is elsewhere in the file, or nowhere, is refused back to the model with the reason, like
any invalid finding. A finding without a quote is left as it is (verification checks it).

Comparison is per line and whitespace-insensitive: runs of spaces and tabs fold to one, ends
are stripped, blank lines at the quote's ends are dropped, and `"` and `'` are one mark (a
model writing JSON swaps them rather than escape them: Qwen2.5-Coder-1.5B quoted a
docstring's triple double quotes as triple single quotes). A one-line quote may also be a
part of a line when it is long enough to mean one place (MIN_FRAGMENT_CHARS); a shorter
fragment (`)`, `return x`) would match anywhere. Such a quote may also be a few lines
written as one (the same model joined a `def` line and its docstring): it is then at the
fewest consecutive lines that hold it.

The work is bounded: a quote is compared with at most MAX_COMPARED_LINES lines of its file,
those around the cited line. In a longer file a quote not found there may be in the rest,
which was not compared: that is not "nowhere", so the finding is not sent back; it is kept,
its placement note says how far the quote was looked for, and it is sent to verification.
(A quote found nowhere in a 32 MB file cost about 18 s per finding before.)
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from reviewer.change import Change
from reviewer.change.lines import LineCounter
from reviewer.checks.finding_in import FindingIn
from reviewer.errors import ToolError
from reviewer.findings import Side

MIN_FRAGMENT_CHARS = 12
# A one-line quote is looked for across at most this many consecutive lines written as one.
MAX_JOINED_LINES = 6
# For a cited line outside the diff: how far around it a quote is looked for.
NEARBY_LINES = 10
# Where a quote found elsewhere is, at most this many places named to the model.
_MAX_PLACES_NAMED = 3
# The lines of a file a quote is compared with, at most: those around the cited line.
MAX_COMPARED_LINES = 100_000

# The lines of a file on one side (RIGHT: the reviewed revision; LEFT: the base).
LinesOf = Callable[[str, Side], list[str]]


def fold(text: str) -> str:
    return " ".join(text.split()).replace('"', "'")


def quote_lines(quote: str | None) -> list[str]:
    """The quote's lines, folded, without blank lines at its ends."""
    lines = [fold(line) for line in (quote or "").splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(quoted: list[str], folded: list[str]) -> list[tuple[int, int]]:
    """Where the quote is in the folded file lines: (first line, 1-based; lines it covers)."""
    size = len(quoted)
    if size == 1 and len(quoted[0]) >= MIN_FRAGMENT_CHARS:
        inside = [(n, 1) for n, line in enumerate(folded, 1) if quoted[0] in line]
        return inside or _joined(quoted[0], folded)
    return [
        (start + 1, size)
        for start in range(len(folded) - size + 1)
        if folded[start : start + size] == quoted
    ]


def _joined(fragment: str, folded: list[str]) -> list[tuple[int, int]]:
    """The fewest consecutive lines (2 to MAX_JOINED_LINES) that, written as one, hold
    `fragment`; none of them is inside another. The non-blank lines are written as one text
    once and searched, so the cost is one pass, not one per line and count."""
    numbers = [n for n, line in enumerate(folded) if line]
    starts, offset = [], 0
    for n in numbers:
        starts.append(offset)
        offset += len(folded[n]) + 1
    text = " ".join(folded[n] for n in numbers)
    fewest: dict[int, int] = {}  # first line (1-based) -> the fewest lines from it
    found = text.find(fragment)
    while found >= 0:
        first = numbers[bisect.bisect_right(starts, found) - 1]
        last = numbers[bisect.bisect_right(starts, found + len(fragment) - 1) - 1]
        count = last - first + 1
        if 2 <= count <= MAX_JOINED_LINES:
            fewest[first + 1] = min(count, fewest.get(first + 1, count))
        found = text.find(fragment, found + 1)
    spans = sorted(fewest.items())
    # A span that holds a shorter one found from a later line is not the fewest lines.
    return [
        (first, count)
        for first, count in spans
        if not any(
            other > first and other + more <= first + count for other, more in spans
        )
    ]


UNQUOTED = (
    "its quote was not in the file, and the model sent it again after it was told so: "
    "kept without the quote"
)


def ground(
    finding: FindingIn, change: Change, lines_of: LinesOf, refused: set[tuple[str, ...]]
) -> str | None:
    """Check the finding's quote, moving the finding to it when it is near; the problem the
    model is told, or None. What grounding did is recorded on the finding (`_grounding`)
    for the reports.

    A quote found nowhere is sent back once; sent again (`refused`: the quotes this loop
    refused), the submission is taken and the finding kept without its quote, as if the
    model had left it out (which the first refusal offers): a small model that cannot copy
    code would otherwise resubmit it until a budget ends the review, and lose every finding
    with it. Qwen2.5-Coder-1.5B found a real command injection and quoted `18: command: `
    twice (bench/README.md): the finding is the review's worth, the quote only its
    evidence, and a finding without evidence is what verification checks."""
    quoted = quote_lines(finding.quote)
    if not quoted:
        return None
    try:
        lines = lines_of(finding.path, finding.side)
    except ToolError as exc:
        return str(exc)
    low, high = compared_lines(len(lines), finding.line)
    folded = [fold(line) for line in lines[low - 1 : high]]
    spans = [(start + low - 1, size) for start, size in matches(quoted, folded)]
    which = "base revision" if finding.side == "LEFT" else "reviewed revision"
    if not spans and high - low + 1 < len(lines):
        # Not in the lines compared; the rest was not: kept, said, and verified.
        finding._grounding = (
            f"its quote was not found in lines {low:,}-{high:,} of the file's {len(lines):,} "
            f"(at most {MAX_COMPARED_LINES:,} lines are compared); the rest was not compared"
        )
        finding._verify = True
        return None
    if not spans:
        key = (finding.path, finding.side, *quoted)
        if key in refused:
            finding.quote = None
            finding._grounding = UNQUOTED
            return None
        refused.add(key)
        return (
            f"its quote is not in the file at the {which} (compared line by line, spaces "
            "ignored): copy the code exactly as the file has it, or leave quote out"
        )
    first = finding.line
    last = finding.end_line or finding.line
    if any(start <= last and start + size - 1 >= first for start, size in spans):
        return None  # at the cited lines
    low, high = _nearby(change, finding.path, finding.side, first, last)
    near = [(start, size) for start, size in spans if low <= start and start + size - 1 <= high]
    if not near:
        named = ", ".join(str(start) for start, _ in spans[:_MAX_PLACES_NAMED])
        more = len(spans) - _MAX_PLACES_NAMED
        return (
            f"its quote is not at line {first} but at {'line' if len(spans) == 1 else 'lines'}"
            f" {named}{f' and {more} more' if more > 0 else ''} of the file, away from the "
            "lines it cites: cite the lines the quote is on, or quote the code at the cited "
            "lines"
        )
    start, size = min(near, key=lambda span: abs(span[0] - first))
    shift = start - first
    finding._grounding = f"moved from line {first} to line {start}, where its quote is"
    finding.line = start
    if finding.end_line is not None:
        # The range keeps its length (a suggestion replaces as many lines), inside the room.
        end = min(finding.end_line + shift, high)
        finding.end_line = end if end > start else None
    elif size > 1 and finding.suggestion is None:
        finding.end_line = start + size - 1
    return None


def compared_lines(count: int, cited: int) -> tuple[int, int]:
    """The lines (first, last; 1-based) a quote is compared with in a file of `count` lines
    cited at line `cited`: all of them, or MAX_COMPARED_LINES around the cited line."""
    if count <= MAX_COMPARED_LINES:
        return 1, count
    low = max(1, min(cited - MAX_COMPARED_LINES // 2, count - MAX_COMPARED_LINES + 1))
    return low, low + MAX_COMPARED_LINES - 1


def side_lines(path: str, side: Side, change: Change, counter: LineCounter) -> list[str]:
    """The lines of `path` on `side`: the reviewed revision's, or the base's (under the
    file's old name, for a renamed file)."""
    if side == "RIGHT":
        return counter.lines(path)
    entry = change.file(path, "LEFT")
    base = counter.base()
    if base is None or entry is None:
        return []
    return base.lines(entry.old_path or path)


def _nearby(change: Change, path: str, side: Side, first: int, last: int) -> tuple[int, int]:
    """The lines a quote may be moved within: the hunk holding the cited line, else a few
    lines around the cited range."""
    file = change.file(path, side)
    hunk = file.hunk_at(first, side) if file is not None else None
    if hunk is None:
        return max(1, first - NEARBY_LINES), last + NEARBY_LINES
    numbers = [
        number
        for line in hunk.lines
        if (number := line.new_line if side == "RIGHT" else line.old_line) is not None
    ]
    return min(numbers), max(numbers)
