"""The search_text tool."""

from __future__ import annotations

from typing import ClassVar

from reviewer.errors import ToolError
from reviewer.safety.redact import PEM_BODY_LINE, REDACTED
from reviewer.tools.base import Tool, param
from reviewer.tools.files import MAX_SCAN_BYTES, read_text
from reviewer.tools.text import cut_line, quote_path, split_lines, visible
from reviewer.workspace import Workspace
from reviewer.workspace.paths import check_glob
from reviewer.workspace.search import Hit, search

MAX_MATCHES = 100
SEARCH_SECONDS = 5.0
MAX_PATTERN_CHARS = 1000


class SearchText(Tool):
    """Search file contents with a regular expression (Rust/RE2 syntax: no lookaround or
    backreferences; `(?i)` for case-insensitive). Returns at most 100 matches as
    `file:line: text`. Narrow with `path` (a file or directory) and `filePattern` (a glob such
    as `*.py`, matched against file names, or against paths below `path` when it has a `/`).
    Binary files are skipped; a search stops after 5 seconds."""

    name: ClassVar[str] = "search_text"
    pattern: str = param("Regular expression to look for.", "pattern", "regex", "query")
    path: str | None = param(
        "File or directory to search, relative to the repository root; everything when omitted.",
        "path",
        "directory",
        "dir",
        "file_path",
        default=None,
    )
    filePattern: str | None = param(
        "Glob that file names must match, e.g. `*.py` or `src/**/*.ts`.",
        "filePattern",
        "file_pattern",
        "glob",
        "include",
        default=None,
    )

    def run(self, workspace: Workspace) -> str:
        if not self.pattern:
            raise ToolError("pattern is empty; give a regular expression to search for.")
        if len(self.pattern) > MAX_PATTERN_CHARS:
            raise ToolError(f"pattern is longer than {MAX_PATTERN_CHARS} characters.")
        if "\x00" in self.pattern:
            raise ToolError("pattern contains a NUL byte.")
        base, is_file = workspace.resolve_any(self.path or "")
        file_glob = check_glob(self.filePattern, "filePattern") if self.filePattern else None
        outcome = search(
            workspace,
            self.pattern,
            base=base,
            base_is_file=is_file,
            file_glob=file_glob,
            max_hits=MAX_MATCHES,
            timeout=SEARCH_SECONDS,
        )
        _mask_key_lines(workspace, outcome.hits)
        lines = [f"{quote_path(hit.path)}:{hit.line}: {cut_line(hit.text)}" for hit in outcome.hits]
        if outcome.timed_out:
            lines.append(
                f"\n[Search stopped after {SEARCH_SECONDS:.0f} s; results are incomplete. "
                "Narrow it with path or filePattern, or simplify the pattern.]"
            )
        elif outcome.more:
            lines.append(
                f"\n[Showing the first {MAX_MATCHES} matches; there are more. "
                "Narrow with path or filePattern.]"
            )
        if not outcome.hits and not outcome.timed_out:
            where = f" in '{quote_path(base)}'" if base else ""
            only = f" (files matching '{file_glob}')" if file_glob else ""
            # The pattern may hold a raw \r or escape: shown like file text.
            return f"No matches for /{visible(self.pattern)}/{where}{only}."
        return "\n".join(lines)


def _mask_key_lines(workspace: Workspace, hits: list[Hit]) -> None:
    """A hit inside a private-key block has no BEGIN line around it: look at its file."""
    masked: dict[str, list[str]] = {}
    for hit in hits:
        if not PEM_BODY_LINE.match(hit.text) and "PRIVATE KEY" not in hit.text:
            continue
        if hit.path not in masked:
            try:
                text, _size = read_text(workspace, hit.path, quote_path(hit.path), MAX_SCAN_BYTES)
            except ToolError:
                text = ""
            masked[hit.path] = split_lines(text)
        lines = masked[hit.path]
        hit.text = lines[hit.line - 1] if hit.line <= len(lines) else REDACTED
