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

from reviewer.diff import FileChange, Hunk

_TEST_NAME = re.compile(
    r"^(?:test_(?P<a>.+)\.py|(?P<b>.+)_test\.(?:py|go)|(?P<c>.+)\.(?:test|spec)\.[jt]sx?"
    r"|(?P<d>.+)Test\.(?:java|kt)|(?P<e>.+)_spec\.rb)$"
)
_TEST_DIRS = {"test", "tests", "__tests__", "spec", "specs"}


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
        paths = self.paths
        if len(paths) == 1:
            part = self.pieces[0].part
            return f"{paths[0]}{', ' + part if part else ''}"
        common = posixpath.commonpath(paths) if all("/" in p for p in paths) else ""
        return f"{common + '/' if common else ''}… ({len(paths)} files)"


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
    """Batches of pieces, each at most `budget` by `size` (characters of rendered diff)."""
    groups: dict[str, list[FileChange]] = {}
    for file in sorted(files, key=lambda f: f.path):
        key = group_key(file.path)
        # Same directory, same module: a code file and its tests share a stem key; other
        # files of a directory join by directory so they land in the same batch if room.
        groups.setdefault(key.split("::", 1)[0], []).append(file)
    batches: list[list[Piece]] = []
    current: list[Piece] = []
    used = 0
    for _directory, members in sorted(groups.items()):
        members.sort(key=lambda f: (group_key(f.path), f.path))
        pieces = [piece for file in members for piece in _pieces(file, budget, size)]
        group_size = sum(size(p) for p in pieces)
        if current and used + group_size > budget:
            batches.append(current)
            current, used = [], 0
        for piece in pieces:
            piece_size = size(piece)
            if current and used + piece_size > budget:
                batches.append(current)
                current, used = [], 0
            current.append(piece)
            used += piece_size
    if current:
        batches.append(current)
    return [Batch(tuple(pieces)) for pieces in batches]


def _pieces(file: FileChange, budget: int, size: Callable[[Piece], int]) -> list[Piece]:
    whole = Piece(file)
    if size(whole) <= budget or len(file.hunks) <= 1:
        return [whole]
    chunks: list[list[Hunk]] = [[]]
    for hunk in file.hunks:
        candidate = Piece(file, (*chunks[-1], hunk))
        if chunks[-1] and size(candidate) > budget:
            chunks.append([hunk])
        else:
            chunks[-1].append(hunk)
    total = len(chunks)
    return [
        Piece(file, tuple(chunk), f"part {index} of {total}")
        for index, chunk in enumerate(chunks, 1)
    ]
