"""A file's diff lines as GitLab numbers them: each line with GitLab's running counters and its
line code, computed here from the fake's own diff (not from reviewer's client).

GitLab's parser (gitlabhq lib/gitlab/diff/parser.rb) walks a file's patch with two counters,
`line_old` and `line_new`, set from each `@@ -OLD,n +NEW,m @@` header. Every line after it is
a `Gitlab::Diff::Line` with `old_pos` and `new_pos` = the counters at that line; then `+`
advances `line_new`, `-` advances `line_old`, `\\` ("No newline at end of file", a meta line)
advances neither, and a context line advances both. So an added line carries the old-side
counter where it was inserted, and a removed line the new-side counter it sits before.

Its line code (lib/gitlab/diff/file.rb `line_code`, lib/gitlab/diff/line_code.rb):
`Gitlab::Diff::LineCode.generate(file_path, line.new_pos, line.old_pos)` =
`"#{Digest::SHA1.hexdigest(file_path)}_#{old_pos}_#{new_pos}"`, with `file_path` =
`new_path.presence || old_path` (lib/gitlab/diff/position.rb); meta lines have none. A line's
role (lib/gitlab/diff/line.rb): `old_line` is `old_pos` unless the line is added, `new_line`
is `new_pos` unless it is removed. GitLab's API docs give the same example: an added line 5 at
old position 5 has the code `<sha>_5_5` (doc/api/discussions.md, "Line code"). A counter is 0
only where git's own header says 0: the `-0,0` of a new file, the `+0,0` of a deleted one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from reviewer.testing._gh_diff import FileDiff

_HEADER = re.compile(rb"^@@ -(\d*)(?:,\d+)? \+(\d*)(?:,\d+)? @@")


@dataclass(frozen=True)
class GitLabLine:
    """One discussable line of a file's diff, as GitLab sees it."""

    kind: str  # "+", "-" or " "
    old_pos: int
    new_pos: int
    index: int  # order in the file's diff (a range's start is not after its end)

    @property
    def old_line(self) -> int | None:
        return None if self.kind == "+" else self.old_pos

    @property
    def new_line(self) -> int | None:
        return None if self.kind == "-" else self.new_pos

    @property
    def type(self) -> str | None:
        """`type` of a line_range end: `new` added, `old` removed, none for context."""
        return {"+": "new", "-": "old"}.get(self.kind)


def line_code(file_path: str, old_pos: int, new_pos: int) -> str:
    """Gitlab::Diff::LineCode.generate(file_path, new_pos, old_pos)."""
    digest = hashlib.sha1(file_path.encode("utf-8", "surrogateescape")).hexdigest()
    return f"{digest}_{old_pos}_{new_pos}"


def gitlab_lines(file: FileDiff) -> dict[str, GitLabLine]:
    """Every discussable line of the file's diff by its line code, in diff order."""
    lines: dict[str, GitLabLine] = {}
    old = new = 1
    for raw in file.patch_lines:
        header = _HEADER.match(raw)
        if header:
            old, new = int(header[1] or 0), int(header[2] or 0)
            continue
        kind = raw[:1].decode("latin-1") or " "
        if kind == "\\":
            continue  # a meta line: no code, no counter moves
        if kind not in "+-":
            kind = " "
        lines[line_code(file.filename, old, new)] = GitLabLine(kind, old, new, len(lines))
        if kind != "-":
            new += 1
        if kind != "+":
            old += 1
    return lines


def line_at(
    file: FileDiff, old_line: int | None, new_line: int | None
) -> tuple[str, GitLabLine] | None:
    """The line with exactly this role (added: new only; removed: old only; context: both)
    and its code, as DiffNote finds the line of a position (`line_for_position`)."""
    for code, line in gitlab_lines(file).items():
        if (line.old_line, line.new_line) == (old_line, new_line):
            return code, line
    return None
