"""The merge request's diff as GitLab anchors on it: for each line of each file, the pair
(old_line, new_line) a position names it by, the hunk it is in, and GitLab's line code.

A position names a line by its role (docs.gitlab.com/api/discussions/, "Create a new thread in
the merge request diff"): an added line `new_line` only, a removed line `old_line` only, an
unchanged line both. A range (`position[line_range]`) names its two ends by line code and, for
a changed line, type (`new` added, `old` removed; a context line has none).

Line codes are GitLab's own (lib/gitlab/diff/line_code.rb, lib/gitlab/diff/parser.rb):
`SHA1(file path)_OLD_NEW`, where OLD and NEW are the diff's running counters at that line,
set by each `@@ -OLD,n +NEW,m @@` header, `+` moving NEW only, `-` OLD only, a context line
both. So an added line carries the old-side counter where it was inserted and a removed line
the new-side counter it sits before: they are built here from the diff GitLab serves
(`GET .../merge_requests/:iid/diffs`), never from the line numbers alone (`_0_N` is no line
GitLab knows unless its own header says 0: a new file's `@@ -0,0 +1,n @@`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.change import parse_hunks
from reviewer.findings import Finding
from reviewer.gitlab.objects import Position, RangeEnd

# A range end's `type` by the line's kind: a context line has none.
_TYPES = {"add": "new", "del": "old", "context": None}


@dataclass(frozen=True)
class _Line:
    old_line: int | None
    new_line: int | None
    hunk: int
    end: RangeEnd  # the line as an end of a line_range


def line_code(file_path: str, old_pos: int, new_pos: int) -> str:
    """Gitlab::Diff::LineCode.generate(file_path, new_pos, old_pos)."""
    digest = hashlib.sha1(file_path.encode("utf-8", "surrogateescape")).hexdigest()
    return f"{digest}_{old_pos}_{new_pos}"


class LineMap:
    """Per (path, side, line), where GitLab takes a thread on it."""

    def __init__(self, files: Sequence[tuple[str, str, str]]) -> None:
        self._lines: dict[tuple[str, str, int], _Line] = {}
        self.old_paths: dict[str, str] = {}
        for old_path, new_path, patch in files:
            self.old_paths[new_path] = old_path
            hunks, _, _ = parse_hunks(patch.encode("utf-8", "surrogateescape"), new_path)
            for index, hunk in enumerate(hunks):
                old_pos, new_pos = hunk.old_start, hunk.new_start  # GitLab's counters
                for line in hunk.lines:
                    code = line_code(new_path, old_pos, new_pos)
                    found = _Line(line.old_line, line.new_line, index,
                                  RangeEnd(code, _TYPES[line.kind]))  # fmt: skip
                    if line.new_line is not None:
                        self._lines[(new_path, "RIGHT", line.new_line)] = found
                    if line.old_line is not None:
                        self._lines[(new_path, "LEFT", line.old_line)] = found
                    old_pos += line.kind != "add"
                    new_pos += line.kind != "del"

    def accepts(self, path: str, side: str, line: int, start_line: int | None = None) -> bool:
        end = self._lines.get((path, side, line))
        if end is None:
            return False
        start = self._lines.get((path, side, start_line)) if start_line is not None else end
        return start is not None and start.hunk == end.hunk

    def position(self, finding: Finding) -> Position | None:
        """Where GitLab takes the finding's thread, or None when the diff has no such line:
        its last line by role, and for a range both ends by line code."""
        end = self._lines.get((finding.path, finding.side, finding.last_line))
        if end is None:
            return None
        line_range = None
        if finding.end_line and finding.end_line != finding.line:
            first = self._lines.get((finding.path, finding.side, finding.line))
            if first is None or first.hunk != end.hunk:
                return None
            line_range = (first.end, end.end)
        old_path = self.old_paths.get(finding.path, finding.path)
        return Position(old_path, finding.path, end.old_line, end.new_line, line_range)
