"""Splitting a change too large for one request into batches that each fit.

Files are grouped so that related code is reviewed together: a file with the other files of
its directory, a test with the code it tests. Groups are packed into batches in path order;
a group too large for a batch is split by file, and a file too large for a batch is split
by hunks ("file.py, part 2 of 3"). No batch is larger than the budget unless a single hunk
is, and that hunk is then cut with a note: nothing is ever dropped silently.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from reviewer.change import FileChange, Hunk
from reviewer.wording import plural
from reviewer.workspace.paths import quote_path

_TEST_NAME = re.compile(
    r"^(?:test_(?P<a>.+)\.py|(?P<b>.+)_test\.(?:py|go)|(?P<c>.+)\.(?:test|spec)\.[jt]sx?"
    r"|(?P<d>.+)Test\.(?:java|kt)|(?P<e>.+)_spec\.rb)$"
)
_TEST_DIRS = {"test", "tests", "__tests__", "spec", "specs"}
# Top-level folders named in the label of a part that spans several.
_MAX_AREAS = 3


@dataclass(frozen=True)
class Piece:
    """A file, or some of its hunks, as one unit of a batch."""

    file: FileChange
    hunks: tuple[Hunk, ...] | None = None  # None: the whole file
    part: str = ""  # "part 2 of 3" when the file is split

    @property
    def path(self) -> str:
        return self.file.path


@dataclass(frozen=True)
class Batch:
    pieces: tuple[Piece, ...]

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(p.path for p in self.pieces))

    @property
    def label(self) -> str:
        """What the part holds, in words that read inside parentheses: `src/api/a.py`,
        `src/api/a.py, part 2 of 3`, `src/api/, 65 files`, `top level, 3 files`,
        `docs/ and src/, 5 files`."""
        paths = self.paths
        if len(paths) == 1:
            part = self.pieces[0].part
            return f"{quote_path(paths[0])}{', ' + part if part else ''}"
        directories = [posixpath.dirname(p) for p in paths]
        common = posixpath.commonpath(directories) if all(directories) else ""
        where = quote_path(common) + "/" if common else _areas(paths)
        return f"{where}, {plural(len(paths), 'file')}"


def _areas(paths: list[str]) -> str:
    """The top-level folders a part spans (`top level` for files at the root), at most three
    named: `top level`, `docs/ and src/`, `docs/, lib/ and 4 more`."""
    areas = list(
        dict.fromkeys(quote_path(p.split("/", 1)[0]) + "/" if "/" in p else "top level"
                      for p in paths)
    )  # fmt: skip
    if len(areas) > _MAX_AREAS:
        areas = [*areas[: _MAX_AREAS - 1], f"{len(areas) - _MAX_AREAS + 1} more"]
    return areas[0] if len(areas) == 1 else ", ".join(areas[:-1]) + " and " + areas[-1]


def group_key(path: str) -> str:
    """Files with the same key are kept together: the directory of the code, where a test's
    key is the directory its subject lives in (by name: test_x.py goes with x.py)."""
    directory, name = posixpath.split(path)
    match = _TEST_NAME.match(name)
    parts = directory.split("/") if directory else []
    if match or any(part in _TEST_DIRS for part in parts):
        kept = [p for p in parts if p not in _TEST_DIRS]
        subject = next((g for g in (match.groups() if match else ()) if g), "")
        return "/".join(kept) + f"::{subject}"
    stem = posixpath.splitext(name)[0]
    return f"{directory}::{stem}" if stem else directory


def plan_batches(files: list[FileChange], budget: int, size: Callable[[Piece], int]) -> list[Batch]:
    """Batches of pieces, each at most `budget` by `size` (characters of rendered diff).

    `size` renders a piece, so it is asked once per piece (and once per hunk of a file
    that must be split), never again while packing.
    """
    groups: dict[str, list[tuple[str, FileChange]]] = {}
    for file in files:
        key = group_key(file.path)
        # Same directory, same module: a code file and its tests share a stem key; other
        # files of a directory join by directory so they land in the same batch if room.
        groups.setdefault(key.split("::", 1)[0], []).append((key, file))
    batches: list[list[Piece]] = []
    current: list[Piece] = []
    used = 0
    for _directory, members in sorted(groups.items()):
        members.sort(key=lambda member: (member[0], member[1].path))
        sized = [pair for _key, file in members for pair in _pieces(file, budget, size)]
        if current and used + sum(piece_size for _, piece_size in sized) > budget:
            batches.append(current)
            current, used = [], 0
        for piece, piece_size in sized:
            if current and used + piece_size > budget:
                batches.append(current)
                current, used = [], 0
            current.append(piece)
            used += piece_size
    if current:
        batches.append(current)
    return [Batch(tuple(pieces)) for pieces in batches]


def _pieces(file: FileChange, budget: int, size: Callable[[Piece], int]) -> list[tuple[Piece, int]]:
    whole = Piece(file)
    whole_size = size(whole)
    if whole_size <= budget or len(file.hunks) <= 1:
        return [(whole, whole_size)]
    # Each hunk measured alone (its size counts the file header once more: a small,
    # safe overestimate), so splitting costs one render per hunk, not one per prefix.
    chunks: list[tuple[list[Hunk], int]] = [([], 0)]
    for hunk in file.hunks:
        hunk_size = size(Piece(file, (hunk,)))
        hunks, chunk_size = chunks[-1]
        if hunks and chunk_size + hunk_size > budget:
            chunks.append(([hunk], hunk_size))
        else:
            hunks.append(hunk)
            chunks[-1] = (hunks, chunk_size + hunk_size)
    total = len(chunks)
    return [
        (Piece(file, tuple(hunks), f"part {index} of {total}"), chunk_size)
        for index, (hunks, chunk_size) in enumerate(chunks, 1)
    ]
