"""GitLab, through python-gitlab (its only importer): read the merge request and its
discussions, post inline discussions, replies and the summary note, resolve, read roles.

python-gitlab retries 429s by itself (sleeping as long as `Retry-After` says, unbounded) and,
with `retry_transient_errors`, re-sends a POST after a 5xx or a dropped connection, which can
post a note twice. Both are switched off for every request (`_NoRetryGitlab`) and retries are
done here, as on GitHub: reads are retried freely; a 429 is retried for any request (GitLab's
throttle answers before doing anything); after a 5xx or a lost connection a PUT is repeated
(it sets a state) and a POST only after looking whether the first attempt landed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import gitlab
import requests
from gitlab.exceptions import GitlabError

from reviewer.errors import ReviewerError
from reviewer.gitlab.objects import (
    Award,
    DiffRefs,
    DiscussionInfo,
    MergeRequestInfo,
    NoteInfo,
    Position,
    RangeEnd,
)

__all__ = [
    "DEVELOPER",
    "Award",
    "DiffRefs",
    "DiscussionInfo",
    "GitLabClient",
    "GitLabError",
    "MergeRequestInfo",
    "NoteInfo",
    "Position",
    "RangeEnd",
    "ReadOnlyToken",
    "RefusedPosition",
]

T = TypeVar("T")
_ATTEMPTS = 4
_MAX_WAIT_SECONDS = 120.0
DEVELOPER = 30  # docs.gitlab.com/api/members/#roles


class GitLabError(ReviewerError):
    """GitLab refused or failed a request, for good."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ReadOnlyToken(GitLabError):
    """Writes are refused (403): a token without the `api` scope, or without the role."""


class RefusedPosition(GitLabError):
    """GitLab refused an inline discussion's position (400, `line_code` or `position`): the
    caller posts the finding elsewhere (a note on the file, the summary): nothing is lost."""


class _NoRetryGitlab(gitlab.Gitlab):
    """python-gitlab with its own retries off for every request: ours decide (see above)."""

    def http_request(self, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.update(obey_rate_limit=False, retry_transient_errors=False, max_retries=0)
        return super().http_request(*args, **kwargs)


@dataclass
class _LastAnswer:
    """The headers of the last answer: python-gitlab's errors do not carry `Retry-After`."""

    headers: dict[str, str] = field(default_factory=dict)

    def hook(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self.headers = {k.lower(): v for k, v in response.headers.items()}


class GitLabClient:
    def __init__(
        self,
        url: str,
        token: str,
        project: str | int,
        mr_iid: int,
        *,
        sleep: Callable[[float], None] | None = None,
        log: Callable[[str], None] = lambda message: None,
        timeout: float = 30,
    ) -> None:
        session = requests.Session()
        self._last = _LastAnswer()
        session.hooks["response"].append(self._last.hook)
        # `url` is the server (CI_SERVER_URL); python-gitlab adds /api/v4.
        self.gl = _NoRetryGitlab(
            url, private_token=token, session=session, timeout=timeout, per_page=100
        )
        self._project = self.gl.projects.get(project, lazy=True)
        self._mr = self._project.mergerequests.get(mr_iid, lazy=True)
        self.sleep = sleep or (lambda seconds: time.sleep(seconds))
        self.log = log
        self._me: tuple[int, str] | None = None

    # --- reading ---------------------------------------------------------------------------

    def merge_request(self) -> MergeRequestInfo:
        data = self._read(lambda: self._project.mergerequests.get(self._mr.iid).attributes,
                          "read the merge request")  # fmt: skip
        refs = data.get("diff_refs") or {}
        return MergeRequestInfo(
            iid=data["iid"],
            title=data.get("title") or "",
            description=data.get("description") or "",
            author=(data.get("author") or {}).get("username", ""),
            sha=data.get("sha") or "",
            diff_refs=DiffRefs(
                refs.get("base_sha", ""), refs.get("start_sha", ""), refs.get("head_sha", "")
            ),
            source_project_id=data["source_project_id"],
            target_project_id=data["target_project_id"],
            web_url=data.get("web_url") or "",
            source_branch=data.get("source_branch") or "",
            target_branch=data.get("target_branch") or "",
            author_id=int((data.get("author") or {}).get("id") or 0),
        )

    def me(self) -> tuple[int, str]:
        """The token's user: (id, username)."""
        if self._me is None:

            def ask() -> tuple[int, str]:
                self.gl.auth()
                assert self.gl.user is not None
                return self.gl.user.id, self.gl.user.username

            self._me = self._read(ask, "read the token's user")
        return self._me

    def discussions(self, *, with_awards: bool = True) -> list[DiscussionInfo]:
        """Every discussion of the merge request, oldest first. With `with_awards`, the bot's
        own notes carry their award emoji (a thumbs-down there is a dismissal); other
        people's notes are not asked, one request each spared."""
        raw = self._read(
            lambda: [d.attributes for d in self._mr.discussions.list(get_all=True)],
            "read the merge request's discussions",
        )
        me = self.me()[0] if with_awards else None
        return [self._discussion(d, me) for d in raw]

    def diffs(self) -> list[tuple[str, str, str]]:
        """(old_path, new_path, patch) of each file of the merge request's latest diff."""
        path = f"/projects/{self._project.encoded_id}/merge_requests/{self._mr.iid}/diffs"
        raw = self._read(lambda: list(self.gl.http_list(path, get_all=True)),
                         "read the merge request's diff")  # fmt: skip
        return [(d["old_path"], d["new_path"], d.get("diff") or "") for d in raw]

    def issue(self, project: str, iid: int) -> tuple[dict[str, Any], bool]:
        """Issue `iid` of `project` (its path), and whether the project is this merge
        request's own or a public one: "Get a single project issue" after "Get a single
        project" (docs.gitlab.com/api/issues/, docs.gitlab.com/api/projects/)."""

        def read() -> tuple[dict[str, Any], bool]:
            found = self.gl.projects.get(project)
            own = str(found.id) == str(self._project.id) or project == str(self._project.id)
            issue = found.issues.get(iid).attributes
            return dict(issue), own or found.attributes.get("visibility") == "public"

        return self._read(read, f"read issue {project}#{iid}")

    def awards(self, note_id: int) -> tuple[Award, ...]:
        raw = self._read(
            lambda: [a.attributes for a in
                     self._mr.notes.get(note_id, lazy=True).awardemojis.list(get_all=True)],
            f"read the award emoji of note {note_id}",
        )  # fmt: skip
        return tuple(Award(a["name"], a["user"]["username"], a["user"]["id"]) for a in raw)

    def access_level(self, user_id: int) -> int:
        """The person's role on the project (10 Guest ... 50 Owner); 0 for a non-member."""
        try:
            member = self._read(
                lambda: self._project.members_all.get(user_id).attributes,
                f"read the role of user {user_id}",
            )
        except GitLabError as exc:
            if exc.status == 404:
                return 0
            raise
        return int(member.get("access_level") or 0)

    # --- writing ---------------------------------------------------------------------------

    def post_discussion(
        self, body: str, position: Position | None, refs: DiffRefs
    ) -> DiscussionInfo:
        data: dict[str, Any] = {"body": body}
        if position is not None:
            data["position"] = position.payload(refs)

        def landed() -> DiscussionInfo | None:
            return next((d for d in self.discussions(with_awards=False)
                         if d.notes and d.notes[0].body == body
                         and d.notes[0].author_id == self.me()[0]), None)  # fmt: skip

        raw = self._write(lambda: self._mr.discussions.create(data).attributes,
                          "post an inline discussion", landed)  # fmt: skip
        return raw if isinstance(raw, DiscussionInfo) else self._discussion(raw, None)

    def reply(self, discussion_id: str, body: str) -> NoteInfo:
        def create() -> NoteInfo:
            discussion = self._mr.discussions.get(discussion_id, lazy=True)
            return _note(discussion.notes.create({"body": body}).attributes)

        def landed() -> NoteInfo | None:
            for discussion in self.discussions(with_awards=False):
                if discussion.id == discussion_id:
                    return next((n for n in discussion.notes[1:] if n.body == body
                                 and n.author_id == self.me()[0]), None)  # fmt: skip
            return None

        return self._write(create, f"reply in discussion {discussion_id}", landed)

    def resolve(self, discussion_id: str, resolved: bool = True) -> None:
        self._write(
            lambda: self._mr.discussions.update(discussion_id, {"resolved": resolved}),
            f"resolve discussion {discussion_id}",
            None,  # a PUT sets a state: repeating it is safe
        )

    def create_note(self, body: str) -> NoteInfo:
        def landed() -> NoteInfo | None:
            for discussion in self.discussions(with_awards=False):
                note = discussion.notes[0] if discussion.notes else None
                if note and note.body == body and note.author_id == self.me()[0]:
                    return note
            return None

        return self._write(lambda: _note(self._mr.notes.create({"body": body}).attributes),
                           "post the summary note", landed)  # fmt: skip

    def edit_note(self, note_id: int, body: str) -> NoteInfo:
        return self._write(
            lambda: _note(self._mr.notes.update(note_id, {"body": body})),
            f"edit note {note_id}",
            None,  # a PUT sets the body: repeating it is safe
        )

    # --- retries ---------------------------------------------------------------------------

    def _discussion(self, raw: dict[str, Any], me: int | None) -> DiscussionInfo:
        notes = []
        for data in raw.get("notes") or []:
            note = _note(data)
            if me is not None and note.author_id == me:
                note = NoteInfo(**{**note.__dict__, "awards": self.awards(note.id)})
            notes.append(note)
        first = (raw.get("notes") or [{}])[0]
        resolved_by = first.get("resolved_by") or None
        return DiscussionInfo(
            id=raw["id"],
            notes=tuple(notes),
            resolvable=bool(first.get("resolvable")),
            resolved=bool(first.get("resolved")),
            resolved_by=resolved_by["username"] if resolved_by else None,
            resolved_by_id=int(resolved_by["id"]) if resolved_by else None,
            position=first.get("position"),
            individual_note=bool(raw.get("individual_note")),
        )

    def _read(self, action: Callable[[], T], what: str) -> T:
        return self._attempt(action, what, landed=None, repeatable=True)

    def _write(
        self, action: Callable[[], T], what: str, landed: Callable[[], T | None] | None
    ) -> T:
        return self._attempt(action, what, landed=landed, repeatable=landed is None)

    def _attempt(
        self,
        action: Callable[[], T],
        what: str,
        landed: Callable[[], T | None] | None,
        repeatable: bool,
    ) -> T:
        for attempt in range(1, _ATTEMPTS + 1):
            self._last.headers = {}
            try:
                return action()
            except GitlabError as exc:
                error = _classify(exc, what)
                wait = self._wait_for(exc.response_code)
                maybe_done = exc.response_code != 429  # a 5xx may come after the write
            except (requests.ConnectionError, requests.Timeout) as exc:
                error = GitLabError(f"cannot reach GitLab to {what}: {type(exc).__name__}")
                wait, maybe_done = 2.0 * attempt, True
            if wait is None or attempt == _ATTEMPTS:
                raise error
            self.log(f"GitLab: {error}; retrying in {wait:.0f} s")
            self.sleep(wait)
            if maybe_done and not repeatable and landed is not None:
                done = landed()
                if done is not None:
                    return done
        raise AssertionError("unreachable")

    def _wait_for(self, status: int | None) -> float | None:
        """Seconds to wait before a retry, or None when retrying cannot help."""
        retry_after = _number(self._last.headers.get("retry-after", ""), None)
        if status == 429:
            wait = 60.0 if retry_after is None else retry_after
            return wait if wait <= _MAX_WAIT_SECONDS else None
        if status is not None and status in (500, 502, 503, 504):
            return min(retry_after if retry_after is not None else 2.0, _MAX_WAIT_SECONDS)
        return None


def _note(data: dict[str, Any]) -> NoteInfo:
    author = data.get("author") or {}
    return NoteInfo(
        id=int(data["id"]),
        author=author.get("username", ""),
        author_id=int(author.get("id") or 0),
        body=data.get("body") or "",
        system=bool(data.get("system")),
    )


def _classify(exc: GitlabError, what: str) -> GitLabError:
    status = exc.response_code
    message = " ".join(str(exc.error_message or "").split())[:300]
    if status == 401:
        return GitLabError(
            f"GitLab rejected the token (401) trying to {what}; check the token's CI/CD "
            "variable (a project access token with the api scope)",
            401,
        )
    if status == 403:
        return ReadOnlyToken(
            f"GitLab refused to {what} (403: {message}); the token needs the api scope and "
            "a role that may write notes",
            403,
        )
    if status == 400 and ("line_code" in message or "position" in message):
        return RefusedPosition(f"GitLab refused the position to {what} (400: {message})", 400)
    if status == 404:
        return GitLabError(f"GitLab could not find what it needed to {what} (404: {message})", 404)
    return GitLabError(f"GitLab failed to {what} ({status}: {message})", status)


def _number(text: str, default: float | None) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return default
