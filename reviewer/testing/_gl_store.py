"""The fake GitLab's records: one project, one merge request, its versions, discussions, notes,
award emoji and the project's members, and their JSON as GitLab's REST API v4 gives it.

Shapes follow docs.gitlab.com/api/merge_requests/, /api/discussions/, /api/notes/,
/api/emoji_reactions/ and /api/members/. Every method is called under `lock`.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.testing._gh_diff import PullDiff, compute_diff, git

JsonObject = dict[str, Any]
# GitLab's access levels (docs.gitlab.com/api/members/#roles).
ACCESS_LEVELS = {"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40, "owner": 50}
# Fixed, so that the JSON is the same on every run of a test.
CREATED_AT = "2026-01-05T10:00:00.000Z"


@dataclass
class User:
    id: int
    username: str
    name: str
    bot: bool = False


@dataclass
class Version:
    """One `GET .../versions` entry: the MR's diff at one push."""

    id: int
    base_sha: str  # the merge base
    start_sha: str  # the target branch's head at the time
    head_sha: str


@dataclass
class Award:
    id: int
    name: str
    user: str


@dataclass
class Note:
    id: int
    author: str
    body: str
    discussion_id: str
    position: JsonObject | None = None  # set on a DiffNote
    system: bool = False
    updated: int = 0  # edits, for updated_at
    awards: list[Award] = field(default_factory=list)


@dataclass
class Discussion:
    id: str
    individual_note: bool  # a plain MR note is a discussion of one, not resolvable
    notes: list[Note] = field(default_factory=list)
    resolved_by: str | None = None


@dataclass(frozen=True)
class ProjectInfo:
    id: int
    path_with_namespace: str
    iid: int
    title: str
    description: str
    author: str
    source_branch: str
    target_branch: str
    source_project_id: int


@dataclass
class Issue:
    """A project issue (docs.gitlab.com/api/issues/): its iid, text, state, confidentiality."""

    iid: int
    title: str
    description: str
    state: str = "opened"
    confidential: bool = False


class MergeRequestStore:
    """Everything the fake knows, behind one lock (the server answers from many threads)."""

    def __init__(self, repo: Path, web_url: str, info: ProjectInfo, start: str, head: str) -> None:
        self.repo = repo
        self.web_url = web_url
        self.info = info
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.members: dict[str, int] = {}
        self.discussions: list[Discussion] = []
        self.issues: dict[int, Issue] = {}
        self.versions: list[Version] = []
        self._diffs: dict[tuple[str, str], PullDiff] = {}
        self.note_ids = itertools.count(3_000_001)
        self.award_ids = itertools.count(5_001)
        self.discussion_serial = itertools.count(1)
        self.add_version(start, head)

    # -- people -----------------------------------------------------------------------------

    def user(self, username: str, *, bot: bool = False) -> User:
        """The user of that name, made on first mention (ids in order of mention)."""
        found = self.users.get(username)
        if found is None:
            found = User(1000 + len(self.users) + 1, username, username.title(), bot)
            self.users[username] = found
        return found

    def user_by_id(self, user_id: int) -> User | None:
        return next((u for u in self.users.values() if u.id == user_id), None)

    def access_level(self, username: str) -> int:
        return self.members.get(username, 0)

    # -- versions and diffs -----------------------------------------------------------------

    def add_version(self, start: str, head: str) -> Version:
        base = git(self.repo, "merge-base", start, head).decode().strip()
        version = Version(len(self.versions) + 1, base, start, head)
        self.versions.append(version)
        return version

    @property
    def latest(self) -> Version:
        return self.versions[-1]

    def version_of(self, base: str, start: str, head: str) -> Version | None:
        for version in reversed(self.versions):
            if (version.base_sha, version.start_sha, version.head_sha) == (base, start, head):
                return version
        return None

    def diff(self, version: Version) -> PullDiff:
        key = (version.base_sha, version.head_sha)
        if key not in self._diffs:
            self._diffs[key] = compute_diff(self.repo, version.base_sha, version.head_sha)
        return self._diffs[key]

    # -- discussions and notes --------------------------------------------------------------

    def new_discussion(self, *, individual: bool) -> Discussion:
        serial = next(self.discussion_serial)
        digest = hashlib.sha1(f"{self.info.id}:{self.info.iid}:{serial}".encode()).hexdigest()
        discussion = Discussion(digest, individual)
        self.discussions.append(discussion)
        return discussion

    def add_note(
        self, discussion: Discussion, author: str, body: str, position: JsonObject | None = None
    ) -> Note:
        self.user(author)
        note = Note(next(self.note_ids), author, body, discussion.id, position)
        discussion.notes.append(note)
        return note

    def add_award(self, note: Note, name: str, user: str) -> Award:
        self.user(user)
        award = Award(next(self.award_ids), name, user)
        note.awards.append(award)
        return award

    def discussion(self, discussion_id: str) -> Discussion | None:
        return next((d for d in self.discussions if d.id == discussion_id), None)

    def note(self, note_id: int) -> Note | None:
        return next((n for d in self.discussions for n in d.notes if n.id == note_id), None)

    def discussion_of(self, note: Note) -> Discussion:
        found = self.discussion(note.discussion_id)
        assert found is not None
        return found

    # -- JSON -------------------------------------------------------------------------------

    def user_json(self, username: str) -> JsonObject:
        user = self.user(username)
        return {
            "id": user.id,
            "username": user.username,
            "name": user.name,
            "state": "active",
            "locked": False,
            "avatar_url": None,
            "web_url": f"{self.web_url}/{user.username}",
        }

    def current_user_json(self, username: str) -> JsonObject:
        """`GET /user`: a project access token's user is a bot (docs.gitlab.com/api/users/)."""
        return {**self.user_json(username), "bot": self.user(username).bot, "is_admin": False}

    def member_json(self, username: str) -> JsonObject:
        return {**self.user_json(username), "access_level": self.members[username],
                "created_at": CREATED_AT, "expires_at": None}  # fmt: skip

    def project_json(self) -> JsonObject:
        namespace, _, path = self.info.path_with_namespace.rpartition("/")
        return {
            "id": self.info.id,
            "name": path,
            "path": path,
            "path_with_namespace": self.info.path_with_namespace,
            "namespace": {"id": self.info.id + 1, "name": namespace, "path": namespace,
                          "kind": "group", "full_path": namespace},
            "default_branch": self.info.target_branch,
            "visibility": "private",
            "web_url": f"{self.web_url}/{self.info.path_with_namespace}",
        }

    def issue_json(self, issue: Issue) -> JsonObject:
        """Get a single project issue's answer (the fields a reader uses, and its ids)."""
        return {
            "id": self.info.id * 100_000 + issue.iid,
            "iid": issue.iid,
            "project_id": self.info.id,
            "title": issue.title,
            "description": issue.description,
            "state": issue.state,
            "confidential": issue.confidential,
            "issue_type": "issue",
            "web_url": f"{self.web_url}/{self.info.path_with_namespace}/-/issues/{issue.iid}",
        }

    def diff_refs_json(self, version: Version | None = None) -> JsonObject:
        version = version or self.latest
        return {
            "base_sha": version.base_sha,
            "head_sha": version.head_sha,
            "start_sha": version.start_sha,
        }

    def merge_request_json(self) -> JsonObject:
        info = self.info
        return {
            "id": info.id * 1000 + info.iid,
            "iid": info.iid,
            "project_id": info.id,
            "title": info.title,
            "description": info.description,
            "state": "opened",
            "draft": False,
            "author": self.user_json(info.author),
            "source_branch": info.source_branch,
            "target_branch": info.target_branch,
            "source_project_id": info.source_project_id,
            "target_project_id": info.id,
            "sha": self.latest.head_sha,
            "diff_refs": self.diff_refs_json(),
            "web_url": f"{self.project_json()['web_url']}/-/merge_requests/{info.iid}",
            "created_at": CREATED_AT,
            "updated_at": CREATED_AT,
        }

    def diff_files_json(self, version: Version | None = None) -> list[JsonObject]:
        """The `diffs` of `GET .../merge_requests/:iid/diffs` (and `changes`, `versions/:id`)."""
        files = []
        for entry in self.diff(version or self.latest).files:
            old_path = entry.previous_filename or entry.filename
            patch = entry.patch
            files.append(
                {
                    "old_path": old_path,
                    "new_path": entry.filename,
                    "a_mode": "0" if entry.status == "added" else "100644",
                    "b_mode": "0" if entry.status == "removed" else "100644",
                    "new_file": entry.status == "added",
                    "renamed_file": entry.status == "renamed",
                    "deleted_file": entry.status == "removed",
                    "generated_file": False,
                    "too_large": False,
                    "collapsed": False,
                    "diff": f"{patch}\n" if patch else "",
                }
            )
        return files

    def version_json(self, version: Version) -> JsonObject:
        return {
            "id": version.id,
            "head_commit_sha": version.head_sha,
            "base_commit_sha": version.base_sha,
            "start_commit_sha": version.start_sha,
            "created_at": CREATED_AT,
            "merge_request_id": self.info.id * 1000 + self.info.iid,
            "state": "collected",
            "real_size": str(len(self.diff(version).files)),
            "patch_id_sha": None,
        }

    def note_json(self, note: Note) -> JsonObject:
        discussion = self.discussion_of(note)
        resolvable = not discussion.individual_note and not note.system
        data: JsonObject = {
            "id": note.id,
            "type": None if discussion.individual_note else
                    ("DiffNote" if note.position else "DiscussionNote"),
            "body": note.body,
            "attachment": None,
            "author": self.user_json(note.author),
            "created_at": CREATED_AT,
            "updated_at": f"2026-01-05T11:{note.updated:02d}:00.000Z" if note.updated
            else CREATED_AT,
            "system": note.system,
            "noteable_id": self.info.id * 1000 + self.info.iid,
            "noteable_type": "MergeRequest",
            "noteable_iid": self.info.iid,
            "project_id": self.info.id,
            "resolvable": resolvable,
            "confidential": False,
            "internal": False,
        }
        if resolvable:
            data["resolved"] = discussion.resolved_by is not None
            data["resolved_by"] = (
                self.user_json(discussion.resolved_by) if discussion.resolved_by else None
            )
            data["resolved_at"] = CREATED_AT if discussion.resolved_by else None
        if note.position is not None:
            data["position"] = note.position
        return data

    def discussion_json(self, discussion: Discussion) -> JsonObject:
        return {
            "id": discussion.id,
            "individual_note": discussion.individual_note,
            "notes": [self.note_json(n) for n in discussion.notes],
        }

    def award_json(self, note: Note, award: Award) -> JsonObject:
        return {
            "id": award.id,
            "name": award.name,
            "user": self.user_json(award.user),
            "created_at": CREATED_AT,
            "updated_at": CREATED_AT,
            "awardable_id": note.id,
            "awardable_type": "Note",
        }
