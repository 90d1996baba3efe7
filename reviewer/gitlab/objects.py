"""What the GitLab client reads and writes, as plain data (no python-gitlab types): the merge
request, its discussions and notes, award emoji, and where an inline discussion goes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DiffRefs:
    base_sha: str  # the merge base
    start_sha: str  # the target branch's head
    head_sha: str


@dataclass(frozen=True)
class MergeRequestInfo:
    iid: int
    title: str
    description: str
    author: str
    sha: str
    diff_refs: DiffRefs
    source_project_id: int
    target_project_id: int
    web_url: str
    source_branch: str = ""
    target_branch: str = ""

    @property
    def is_fork(self) -> bool:
        return self.source_project_id != self.target_project_id


@dataclass(frozen=True)
class Award:
    name: str
    username: str
    user_id: int


@dataclass(frozen=True)
class NoteInfo:
    id: int
    author: str
    author_id: int
    body: str
    system: bool
    awards: tuple[Award, ...] = ()


@dataclass(frozen=True)
class DiscussionInfo:
    id: str
    notes: tuple[NoteInfo, ...]
    resolvable: bool
    resolved: bool
    resolved_by: str | None
    position: dict[str, Any] | None = None
    individual_note: bool = False  # a plain note on the merge request, not a thread


@dataclass(frozen=True)
class Position:
    """Where an inline discussion goes: a line by its role in the diff (added: new_line only;
    removed: old_line only; unchanged: both), or a range ending on that line. `start` is the
    range's first line as (old_line, new_line)."""

    old_path: str
    new_path: str
    old_line: int | None
    new_line: int | None
    start: tuple[int | None, int | None] | None = None

    def payload(self, refs: DiffRefs) -> dict[str, Any]:
        data: dict[str, Any] = {
            "position_type": "text",
            "base_sha": refs.base_sha,
            "start_sha": refs.start_sha,
            "head_sha": refs.head_sha,
            "old_path": self.old_path,
            "new_path": self.new_path,
        }
        if self.old_line is not None:
            data["old_line"] = self.old_line
        if self.new_line is not None:
            data["new_line"] = self.new_line
        if self.start is not None:
            data["line_range"] = {
                "start": _range_end(self.new_path, *self.start),
                "end": _range_end(self.new_path, self.old_line, self.new_line),
            }
        return data


def _range_end(path: str, old: int | None, new: int | None) -> dict[str, Any]:
    """One end of a `line_range`: its line code (SHA1 of the path, `_old_new`) and type."""
    code = f"{hashlib.sha1(path.encode()).hexdigest()}_{old or 0}_{new or 0}"
    end: dict[str, Any] = {"line_code": code, "type": "old" if new is None else "new"}
    if old is not None:
        end["old_line"] = old
    if new is not None:
        end["new_line"] = new
    return end
