"""What the GitLab client reads and writes, as plain data (no python-gitlab types): the merge
request, its discussions and notes, award emoji, and where an inline discussion goes."""

from __future__ import annotations

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
    author_id: int = 0  # what GitLab's members API is asked with (0: unknown)

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
    # Who resolved it, by id: often someone who wrote no note and gave no award, so their
    # role (members/all/:user_id) can be asked only by this id.
    resolved_by_id: int | None = None
    position: dict[str, Any] | None = None
    individual_note: bool = False  # a plain note on the merge request, not a thread


@dataclass(frozen=True)
class RangeEnd:
    """One end of a multi-line position: GitLab's line code of that line (lines.py) and, for
    a changed line, its type (`new` added, `old` removed; a context line has none)."""

    line_code: str
    type: str | None = None

    def payload(self) -> dict[str, str]:
        """Only these two keys. The ends' `old_line`/`new_line` are declared String by
        lib/api/discussions.rb and integer by position.json, so a number there is 400
        `{:position=>["must be a valid json schema"]}` (gitlab-org/gitlab#571619, #572121,
        agavra/tuicr#557), and up to 17.7 no such key is allowed at all
        (harrisoncramer/gitlab.nvim#588)."""
        return {"line_code": self.line_code, **({"type": self.type} if self.type else {})}


@dataclass(frozen=True)
class Position:
    """Where an inline discussion goes: a line by its role in the diff (added: new_line only;
    removed: old_line only; unchanged: both), or a range ending on that line, its two ends
    named by line code (`line_range`: start, end)."""

    old_path: str
    new_path: str
    old_line: int | None
    new_line: int | None
    line_range: tuple[RangeEnd, RangeEnd] | None = None

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
        if self.line_range is not None:
            start, end = self.line_range
            data["line_range"] = {"start": start.payload(), "end": end.payload()}
        return data
