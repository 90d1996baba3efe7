"""The lines of each file at the reviewed revision, read once each, that a finding's place is
checked against and anchored to (a changed symlink or submodule: the lines its diff shows).
"""

from __future__ import annotations

from reviewer.change import SUBMODULE_MODE, SYMLINK_MODE, Change
from reviewer.tools.files import MAX_SCAN_BYTES, read_text
from reviewer.tools.text import split_lines
from reviewer.workspace import Workspace
from reviewer.workspace.paths import quote_path

# A changed symlink or submodule is one line of text as GitHub shows it in the pull request
# (the link's target, `Subproject commit <id>`), which is where a comment on it sits; the
# diff holds that line, so it is read from there, never by following the link.
_LINE_KINDS = frozenset({SYMLINK_MODE, SUBMODULE_MODE})


class LineCounter:
    """Lines per file at the reviewed revision, read once each. With the change, a changed
    symlink or submodule has the lines its diff shows on the new side."""

    def __init__(self, workspace: Workspace, change: Change | None = None) -> None:
        self.workspace = workspace
        self.change = change
        self._lines: dict[str, list[str]] = {}
        self._base: LineCounter | None = None

    def base(self) -> LineCounter | None:
        """The lines per file at the workspace's base revision (read once each, like these);
        None without a base."""
        if self._base is None and self.workspace.base is not None:
            self._base = LineCounter(self.workspace.base)
        return self._base

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            self._lines[path] = self._diff_lines(path) or self._file_lines(path)
        return self._lines[path]

    def _diff_lines(self, path: str) -> list[str] | None:
        entry = self.change.file(path) if self.change is not None else None
        if entry is None or entry.status == "deleted" or entry.new_mode not in _LINE_KINDS:
            return None
        numbered = {
            line.new_line: line.text
            for hunk in entry.hunks
            for line in hunk.lines
            if line.new_line is not None
        }
        return [numbered[n] for n in sorted(numbered)] or None

    def _file_lines(self, path: str) -> list[str]:
        rel = self.workspace.resolve_file(path)
        text, _size = read_text(self.workspace, rel, quote_path(path), MAX_SCAN_BYTES)
        return split_lines(text)
