"""The change as the model reads it: each file's hunks as numbered diff text, and a part of a
file (a piece) cut to a character budget at line boundaries, with the lines it shows.
"""

from __future__ import annotations

from reviewer.change import FileChange, Hunk
from reviewer.change.batching import Piece
from reviewer.wording import plural
from reviewer.workspace.paths import quote_path


def render_hunk(hunk: Hunk) -> list[str]:
    """A hunk with the new-file line number on every line the model can point at.

    Added and context lines carry their new line number; removed lines carry their old
    number after a minus, so a LEFT finding can name it.
    """
    out = [_hunk_header(hunk)]
    append = out.append
    old_no, new_no = hunk.old_start, hunk.new_start
    # Straight from the hunk's text (no line objects): this runs for every line of every
    # part, and once more to measure it.
    for line in hunk.lines_text():
        marker = line[:1]
        if marker == "+":
            append(f"{new_no:>6} + {line[1:]}")
            new_no += 1
        elif marker == "-":
            append(f"{'-' + str(old_no):>6} - {line[1:]}")
            old_no += 1
        else:
            append(f"{new_no:>6}   {line[1:]}")
            old_no += 1
            new_no += 1
    return out


def _hunk_header(hunk: Hunk) -> str:
    ranges = f"-{hunk.old_start},{hunk.old_count} +{hunk.new_start},{hunk.new_count}"
    return f"@@ {ranges} @@ {hunk.section}".rstrip()


def rendered_size(piece: Piece) -> int:
    """At most the length of the piece's rendering, computed without rendering it: a line
    renders as its number (6 wide) and 3 more characters in place of its marker."""
    file = piece.file
    hunks = file.hunks if piece.hunks is None else piece.hunks
    if piece.hunks is None and (file.status == "deleted" or not hunks):
        return len(render_file(file))
    size = len(_file_header(file, piece.part or "x" * 20))
    for hunk in hunks:
        body = hunk.body
        rows = body.count("\n") + 1 if body else 0
        size += 1 + len(_hunk_header(hunk)) + 1 + len(body) + 8 * rows + 8
    return size


def render_file(file: FileChange) -> str:
    header = _file_header(file, f"+{file.additions} -{file.deletions}")
    if file.status == "deleted":
        return f"{header}\nThe file is deleted ({plural(file.deletions, 'line')} removed)."
    if not file.hunks:
        return f"{header}\nNo content change."
    lines = [header]
    for hunk in file.hunks:
        lines.extend(render_hunk(hunk))
    return "\n".join(lines)


def _file_header(file: FileChange, detail: str) -> str:
    """A file's heading in the prompt: its name as the tools print it, what changed, and
    `detail` (its line counts, or which part of it this is)."""
    return f"### {quote_path(file.path)} ({_describe(file)}, {detail})"


def _describe(file: FileChange) -> str:
    parts = [file.status]
    if file.status in ("renamed", "copied") and file.old_path:
        parts = [f"{file.status} from {quote_path(file.old_path)}"]
    if file.mode_changed:
        parts.append(f"mode {file.old_mode} -> {file.new_mode}")
    return ", ".join(parts)


def _piece_text(piece: Piece) -> str:
    file = piece.file
    if piece.hunks is None:
        return render_file(file)
    header = _file_header(file, piece.part)
    return "\n".join([header, *(ln for hunk in piece.hunks for ln in render_hunk(hunk))])


def _cut_at(text: str, budget: int) -> int:
    """Where a rendering longer than `budget` is cut: at a line end, room left for the note."""
    return max(text.rfind("\n", 0, budget - 200), 0)


def shown_lines(piece: Piece, budget: int) -> tuple[tuple[int, int], ...] | None:
    """None when the piece is shown whole; else the new-file line ranges of the part of its
    diff the model is shown (render_piece cuts the rest). Rendered only when its size
    estimate (an upper bound) says it may not fit."""
    if rendered_size(piece) <= budget:
        return None
    text = _piece_text(piece)
    if len(text) <= budget:
        return None
    numbers = []
    for row in text[: _cut_at(text, budget)].split("\n"):
        first = row.lstrip().split(" ", 1)[0]
        # A numbered diff row (render_hunk): a removed line's number starts with a minus.
        if row[:6].strip().isdigit() and first.isdigit():
            numbers.append(int(first))
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return tuple((a, b) for a, b in spans)


def render_piece(piece: Piece, budget: int) -> str:
    """A file's diff, or some of its hunks; cut with directions when even one hunk is
    larger than the budget (the model can read the rest with the tools)."""
    text = _piece_text(piece)
    if len(text) <= budget:
        return text
    shown = text[: _cut_at(text, budget)]
    last = shown.rsplit("\n", 1)[-1].strip().split(" ", 1)[0]
    return (
        f"{shown}\n[The rest of this diff does not fit in one request ({len(text) - len(shown):,} "
        f"more characters, after line {last}); read the new file's lines with "
        "read_file_lines, and removed lines (-N) with read_file_lines and side LEFT.]"
    )
