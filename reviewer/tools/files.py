"""The tools that read files and list the tree: read_file, read_file_lines, list_files,
get_file_structure."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import field_validator

from reviewer.errors import ToolError
from reviewer.safety.redact import mask_private_keys
from reviewer.tools.base import END_ALIASES, PATH_ALIASES, START_ALIASES, Tool, param
from reviewer.tools.text import (
    cut_line,
    decode,
    echo_path,
    human_size,
    is_binary,
    quote_path,
    split_lines,
)
from reviewer.wording import plural
from reviewer.workspace import Kind, Listing, Workspace
from reviewer.workspace.globs import glob_matcher, required_text
from reviewer.workspace.paths import check_glob

MAX_READ_CHARS = 50_000
# Enough bytes for MAX_READ_CHARS characters of any UTF-8 text, and to count the lines of
# most files so the truncation notice can say how many there are.
_READ_FILE_BYTES = 2 * 1024 * 1024
# read_file_lines scans from the start of the file; past this, a file is too big to scan.
MAX_SCAN_BYTES = 32 * 1024 * 1024
MAX_ENTRIES = 200
STRUCTURE_DEPTH = 3
MAX_STRUCTURE_LINES = 400
MAX_STRUCTURE_CHILDREN = 60


def read_text(workspace: Workspace, rel: str, shown: str, limit: int) -> tuple[str, int]:
    """The decoded start of a text file (at most `limit` bytes) and the file's full size.
    `shown` is the file as messages name it (echo_path or quote_path made it)."""
    size = workspace.file_size(rel)
    data = workspace.read_bytes(rel, min(size, limit))
    if is_binary(data):
        raise ToolError(
            f"'{shown}' is a binary file ({human_size(size)}); it cannot be shown as text."
        )
    return mask_private_keys(decode(data)), size


class ReadFile(Tool):
    """Read a whole text file of the repository at the reviewed revision. Files over 50,000
    characters are cut, with a notice saying which lines were shown; read the rest with
    read_file_lines. Lines over 2,000 characters are cut."""

    name: ClassVar[str] = "read_file"
    path: str = param("File path relative to the repository root.", *PATH_ALIASES)

    def run(self, workspace: Workspace) -> str:
        rel = workspace.resolve_file(self.path)
        shown = echo_path(self.path)
        text, size = read_text(workspace, rel, shown, _READ_FILE_BYTES)
        if not text:
            return f"(empty file: {shown})"
        lines = split_lines(text)
        complete = size <= _READ_FILE_BYTES
        out: list[str] = []
        used = 0
        for line in lines:
            line = cut_line(line)
            if used + len(line) + 1 > MAX_READ_CHARS:
                break
            out.append(line)
            used += len(line) + 1
        if complete and len(out) == len(lines):
            return "\n".join(out)
        # The last line of a partial read may itself be partial: leave it for the next call.
        if not complete and len(out) == len(lines):
            out.pop()
        total = plural(len(lines), "line") if complete else f"{human_size(size)}"
        notice = (
            f"[Truncated: showing lines 1-{len(out)} of '{shown}' ({total}). "
            f"Read more with read_file_lines(path, startLine={len(out) + 1}, "
            f"endLine={len(out) + 500}).]"
        )
        return "\n".join(out) + "\n\n" + notice


class ReadFileLines(Tool):
    """Read a range of lines of a text file, 1-indexed and inclusive, each shown as
    `42: text`. Use it for large files and to look at code around a change. With side
    LEFT it reads the file as it was before the change, where removed lines (-N in the
    diff) have their numbers."""

    name: ClassVar[str] = "read_file_lines"
    path: str = param("File path relative to the repository root.", *PATH_ALIASES)
    startLine: int = param("First line to show (1-indexed).", *START_ALIASES, ge=1)
    endLine: int = param("Last line to show (inclusive).", *END_ALIASES, ge=1)
    side: Literal["RIGHT", "LEFT"] = param(
        "RIGHT (default): the reviewed revision. LEFT: the base, before the change.",
        "side",
        "version",
        default="RIGHT",
    )

    @field_validator("side", mode="before")
    @classmethod
    def _upper_side(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    def run(self, workspace: Workspace) -> str:
        if self.endLine < self.startLine:
            raise ToolError(
                f"endLine ({self.endLine}) is before startLine ({self.startLine}); "
                "give startLine <= endLine."
            )
        if self.side == "LEFT":
            if workspace.base is None:
                raise ToolError(
                    "side LEFT reads the base of a change, and none was given "
                    "(`reviewer tool` takes it as --base REV)."
                )
            workspace = workspace.base
        rel = workspace.resolve_file(self.path)
        shown = echo_path(self.path)
        text, size = read_text(workspace, rel, shown, MAX_SCAN_BYTES)
        lines = split_lines(text)
        complete = size <= MAX_SCAN_BYTES
        if not complete:
            lines.pop()  # may be cut mid-line
        if self.startLine > len(lines):
            if not complete:
                raise ToolError(
                    f"'{shown}' is {human_size(size)}; only its first {plural(len(lines), 'line')} "
                    "can be read."
                )
            raise ToolError(
                f"startLine {self.startLine} is past the end of '{shown}', which has "
                f"{plural(len(lines), 'line')}."
            )
        last = min(self.endLine, len(lines))
        out: list[str] = []
        used = 0
        for number in range(self.startLine, last + 1):
            entry = f"{number}: {cut_line(lines[number - 1])}"
            if used + len(entry) + 1 > MAX_READ_CHARS and out:
                out.append(
                    f"\n[Truncated at 50,000 characters: showing lines {self.startLine}-"
                    f"{number - 1}. Continue with startLine={number}.]"
                )
                return "\n".join(out)
            out.append(entry)
            used += len(entry) + 1
        if self.endLine > last and complete:
            out.append(f"\n[End of file: '{shown}' has {plural(len(lines), 'line')}.]")
        return "\n".join(out)


class ListFiles(Tool):
    """List files of the repository. Without a pattern, the entries directly inside
    `directory` (subdirectories end with `/`). With a glob pattern, the files under
    `directory` whose path relative to it matches: `*` stays within one directory, `**`
    spans any depth (`**/*.py`), `{a,b}` alternatives. At most 200 entries, sorted; paths are
    relative to the repository root."""

    name: ClassVar[str] = "list_files"
    directory: str | None = param(
        "Directory relative to the repository root; the root when omitted.",
        "directory",
        "dir",
        "path",
        "folder",
        default=None,
    )
    pattern: str | None = param(
        "Glob matched against paths relative to `directory`, e.g. `**/*.py`.",
        "pattern",
        "glob",
        default=None,
    )

    def run(self, workspace: Workspace) -> str:
        base = workspace.resolve_dir(self.directory or "")
        where = f"'{quote_path(base)}'" if base else "the repository root"
        listing = workspace.listing
        if self.pattern:
            glob = check_glob(self.pattern)
            matcher = glob_matcher(glob)
            offset = len(base) + 1 if base else 0
            needle = required_text(glob)
            entries = [
                p for p in listing.under(base) if needle in p and matcher.fullmatch(p, offset)
            ]
            if not entries:
                hint = ""
                if "/" not in glob:
                    hint = f" A pattern without '/' matches only directly in it: try '**/{glob}'."
                return f"No files match '{glob}' in {where}.{hint}"
        else:
            dirs, files = listing.entries(base)
            prefix = f"{base}/" if base else ""
            entries = sorted([f"{prefix}{d}/" for d, _ in dirs] + [prefix + f for f in files])
            if not entries:
                return f"{where} is empty."
        total = len(entries)
        shown = [_label(listing.kinds.get(e), e) for e in entries[:MAX_ENTRIES]]
        if total > MAX_ENTRIES:
            shown.append(
                f"\n[Showing {MAX_ENTRIES} of {plural(total, 'entry', 'entries')}. "
                "Narrow with directory or pattern.]"
            )
        return "\n".join(shown)


def _label(kind: Kind | None, path: str) -> str:
    # Names come from the repository: quoted when they hold a line break or the like, so a
    # name can never read as another line of output (tools/text.py: the tool-output sink).
    if path.endswith("/"):  # a directory: its `/` outside the quotes, as in the tree view
        return f"{quote_path(path[:-1])}/"
    if kind is Kind.LINK:
        return f"{quote_path(path)} (symlink)"
    if kind is Kind.SUBMODULE:
        return f"{quote_path(path)}/ (submodule, not readable)"
    return quote_path(path)


class GetFileStructure(Tool):
    """Show the directory tree under `path` (the repository root by default), three levels
    deep, directories first. Hidden entries (names starting with `.`) are left out; deeper
    directories show how many files they hold."""

    name: ClassVar[str] = "get_file_structure"
    path: str | None = param(
        "Directory relative to the repository root; the root when omitted.",
        "path",
        "directory",
        "dir",
        "folder",
        default=None,
    )

    def run(self, workspace: Workspace) -> str:
        base = workspace.resolve_dir(self.path or "")
        lines = [f"{quote_path(base)}/" if base else "./"]
        omitted = _render_level(workspace.listing, base, lines, indent=1)
        if omitted:
            lines.append(
                f"\n[Showing {MAX_STRUCTURE_LINES} lines; "
                f"{plural(omitted, 'more entry', 'more entries')} left out. "
                "Ask for a subdirectory with path.]"
            )
        return "\n".join(lines)


def _render_level(listing: Listing, rel: str, lines: list[str], indent: int) -> int:
    """Append the entries of directory `rel`; return how many entries did not fit."""
    dirs, files = listing.entries(rel)
    visible = [(n, c) for n, c in sorted(dirs) if not n.startswith(".")]
    entries: list[tuple[str, int | None]] = [
        *visible,
        *((name, None) for name in sorted(files) if not name.startswith(".")),
    ]
    pad = "  " * indent
    omitted = 0
    for index, (name, count) in enumerate(entries):
        if len(lines) >= MAX_STRUCTURE_LINES or index >= MAX_STRUCTURE_CHILDREN:
            rest = len(entries) - index
            if len(lines) < MAX_STRUCTURE_LINES + 1:
                lines.append(f"{pad}… {rest:,} more")
            return omitted + rest
        shown = quote_path(name)
        if count is None:
            lines.append(f"{pad}{shown}")
        elif indent >= STRUCTURE_DEPTH:
            lines.append(f"{pad}{shown}/ ({plural(count, 'file')})")
        else:
            lines.append(f"{pad}{shown}/")
            child = f"{rel}/{name}" if rel else name
            omitted += _render_level(listing, child, lines, indent + 1)
    return omitted
