"""The parsed change: files, hunks and lines, and GitHub's rule for where a comment may sit.

Pure data, no I/O. Everything is frozen so that one `Change` can be shared by the prompt
renderer, the anchoring step and every reporter without anyone editing it under the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

LineKind = Literal["add", "del", "context"]
Side = Literal["RIGHT", "LEFT"]
Status = Literal["added", "deleted", "modified", "renamed", "copied"]

SIDES: tuple[Side, ...] = ("RIGHT", "LEFT")
SYMLINK_MODE = "120000"
SUBMODULE_MODE = "160000"


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: LineKind
    old_line: int | None  # None for added lines
    new_line: int | None  # None for deleted lines
    # Without the +/-/space marker and the line ending (a trailing \r of CRLF removed);
    # bytes decoded as UTF-8 with replacement characters.
    text: str
    # The "\ No newline at end of file" marker followed this line.
    no_newline_at_eof: bool = False


_MARKERS = {"add": "+", "del": "-", "context": " "}
_FAST_LINE = (
    object.__new__,
    DiffLine.kind.__set__,  # type: ignore[attr-defined]
    DiffLine.old_line.__set__,  # type: ignore[attr-defined]
    DiffLine.new_line.__set__,  # type: ignore[attr-defined]
    DiffLine.text.__set__,  # type: ignore[attr-defined]
    DiffLine.no_newline_at_eof.__set__,  # type: ignore[attr-defined]
)
_NO_NEWLINE = "\\ No newline at end of file"


class Hunk:
    """One hunk, held as the patch's own text (its lines with their `+`/`-`/` ` markers,
    "\\ No newline" lines included): about one byte per byte of diff. `lines` builds the
    DiffLines when asked, so a change of 600,000 lines is not 600,000 objects held for the
    whole review; only the files someone looks lines up in (FileChange's index) keep theirs.
    Immutable, like every part of a Change."""

    __slots__ = ("body", "new_count", "new_start", "old_count", "old_start", "section")

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str  # the text after the second @@ (the enclosing function, if git found one)
    body: str

    def __init__(
        self,
        old_start: int,
        old_count: int,
        new_start: int,
        new_count: int,
        section: str,
        lines: tuple[DiffLine, ...] = (),
        *,
        body: str | None = None,
    ) -> None:
        if body is None:
            rows: list[str] = []
            for line in lines:
                rows.append(_MARKERS[line.kind] + line.text)
                if line.no_newline_at_eof:
                    rows.append(_NO_NEWLINE)
            body = "\n".join(rows)
        for name, value in (
            ("old_start", old_start),
            ("old_count", old_count),
            ("new_start", new_start),
            ("new_count", new_count),
            ("section", section),
            ("body", body),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Hunk is immutable (cannot set {name})")

    def lines_text(self) -> list[str]:
        """The hunk's lines as the patch has them, each with its marker, "\\ No newline"
        lines left out, and the \\r ending a CRLF line removed as `lines` removes it: what
        a reader is shown, without building a line object each."""
        body = self.body
        if not body:
            return []
        if "\r" in body:  # rare: let `lines` decide which \r is a line ending
            return [_MARKERS[line.kind] + line.text for line in self.lines]
        rows = body.split("\n")
        if "\n\\" in body or body[:1] == "\\":
            rows = [row for row in rows if row[:1] != "\\"]
        return rows

    @property
    def lines(self) -> tuple[DiffLine, ...]:
        """The hunk's lines, numbered: built from the text on each call (callers that look
        lines up often go through FileChange.line, which indexes them once)."""
        body = self.body
        if not body:
            return ()
        rows = body.split("\n")
        has_cr = "\r" in body
        marked = "\n\\" in body
        out: list[DiffLine] = []
        append = out.append
        old_no, new_no = self.old_start, self.new_start
        last = len(rows) - 1
        # The frozen dataclass __init__ (object.__setattr__ per field) would be most of the
        # cost; filling the slots through their descriptors builds the same objects.
        new, kind_of, old_of, new_of, text_of, eof_of = _FAST_LINE
        for index, row in enumerate(rows):
            first = row[:1]
            if first == "\\":
                continue
            eof = marked and index < last and rows[index + 1][:1] == "\\"
            text = row[1:]
            # A \r ending a line of a CRLF file is its line ending, unless the line had no
            # ending at all ("\ No newline" follows): then the \r is content.
            if has_cr and not eof and text[-1:] == "\r":
                text = text[:-1]
            item = new(DiffLine)
            text_of(item, text)
            eof_of(item, eof)
            if first == "+":
                kind_of(item, "add")
                old_of(item, None)
                new_of(item, new_no)
                new_no += 1
            elif first == "-":
                kind_of(item, "del")
                old_of(item, old_no)
                new_of(item, None)
                old_no += 1
            else:  # " ", or "" when diff.suppressBlankEmpty dropped the space
                kind_of(item, "context")
                old_of(item, old_no)
                new_of(item, new_no)
                old_no += 1
                new_no += 1
            append(item)
        return tuple(out)

    def _key(self) -> tuple[int, int, int, int, str, tuple[DiffLine, ...]]:
        return (
            self.old_start,
            self.old_count,
            self.new_start,
            self.new_count,
            self.section,
            self.lines,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hunk):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.old_start, self.new_start, self.section, self.body))

    def __repr__(self) -> str:
        return (
            f"Hunk(-{self.old_start},{self.old_count} +{self.new_start},{self.new_count}, "
            f"{self.section!r}, {len(self.body):,} characters)"
        )


# Number -> (index of the hunk, the line), for one side of one file.
_LineIndex = dict[int, tuple[int, DiffLine]]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    path: str  # the new path; for a deleted file, the old path
    old_path: (
        str | None
    )  # previous path (renames/copies), the path (modified/deleted), None (added)
    status: Status
    old_mode: str | None = None  # "100644", "100755", "120000" (symlink), "160000" (submodule)
    new_mode: str | None = None
    binary: bool = False
    similarity: int | None = None  # rename/copy similarity, percent
    hunks: tuple[Hunk, ...] = ()
    additions: int = 0
    deletions: int = 0
    # The patch was over the size limit: hunks dropped, the file still listed, counts kept.
    oversized: bool = False
    # Built on first lookup: most files are never asked about, and the line objects are
    # already held by the hunks, so the index costs one dict entry per line when it exists.
    _right: _LineIndex | None = field(default=None, init=False, repr=False, compare=False)
    _left: _LineIndex | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def mode_changed(self) -> bool:
        return (
            self.old_mode is not None
            and self.new_mode is not None
            and self.old_mode != self.new_mode
        )

    def line(self, number: int, side: Side = "RIGHT") -> DiffLine | None:
        """The diff line with that new (RIGHT) or old (LEFT) number; None outside every hunk."""
        hit = self._index(side).get(number)
        return hit[1] if hit else None

    def hunk_at(self, number: int, side: Side = "RIGHT") -> Hunk | None:
        """The hunk holding that line. GitHub wants both ends of a multi-line comment in one."""
        hit = self._index(side).get(number)
        return self.hunks[hit[0]] if hit else None

    def _index(self, side: Side) -> _LineIndex:
        if side == "RIGHT":
            index = self._right
            if index is None:
                index = self._build(_new_number)
                object.__setattr__(self, "_right", index)
            return index
        if side == "LEFT":
            index = self._left
            if index is None:
                index = self._build(_old_number)
                object.__setattr__(self, "_left", index)
            return index
        raise ValueError(f"side must be 'RIGHT' or 'LEFT', not {side!r}")

    def _build(self, number_of: Callable[[DiffLine], int | None]) -> _LineIndex:
        index: _LineIndex = {}
        for position, hunk in enumerate(self.hunks):
            for diff_line in hunk.lines:
                number = number_of(diff_line)
                if number is not None:
                    index[number] = (position, diff_line)
        return index


def _new_number(diff_line: DiffLine) -> int | None:
    return diff_line.new_line


def _old_number(diff_line: DiffLine) -> int | None:
    return diff_line.old_line


@dataclass(frozen=True, slots=True)
class Change:
    base: str  # full id of the merge base
    head: str | None  # full id of head; None when the working tree is the head
    files: tuple[FileChange, ...]
    # A path can name two entries: git shows a type change (file -> symlink) as the old file
    # deleted and the new one added under the same path.
    _by_path: dict[str, tuple[FileChange, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for change in self.files:
            self._by_path[change.path] = (*self._by_path.get(change.path, ()), change)

    def file(self, path: str, side: Side = "RIGHT") -> FileChange | None:
        """The file at that new path (or the old path of a deleted file). On the LEFT, the
        entry that has the old lines: for a type change (file <-> symlink) git shows two
        entries, the old kind deleted and the new kind added."""
        entries = self._by_path.get(path, ())
        if side == "LEFT":
            for entry in entries:
                if entry.status != "added":
                    return entry
        for entry in entries:
            if entry.status != "deleted":
                return entry
        return entries[0] if entries else None

    def locate(self, path: str, line: int, side: Side = "RIGHT") -> DiffLine | None:
        """The diff line a GitHub review comment at (path, line, side) would sit on, or None.

        GitHub takes a comment on any line inside a hunk of the pull request's diff: added or
        context lines on the RIGHT (new numbers), deleted or context lines on the LEFT (old
        numbers). Lines outside every hunk, binary and oversized files take none.
        """
        if side not in SIDES:
            raise ValueError(f"side must be 'RIGHT' or 'LEFT', not {side!r}")
        for entry in self._by_path.get(path, ()):
            found = entry.line(line, side)
            if found is not None:
                return found
        return None

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)
