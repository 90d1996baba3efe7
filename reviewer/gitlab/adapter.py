"""The GitLab adapter of the forge-neutral core (reviewer/forge/interface.py): one merge
request read and written through the client (client.py).

GitLab has no review object: each inline finding is a discussion with a position, posted one
by one; what GitLab refuses (its 400 on a position) is written into the note that stands for
the review's body, so nothing is lost. A finding's anchor (path, side, line) becomes GitLab's
line by its role, from the merge request's own diff: an added line `new_line`, a removed line
`old_line`, an unchanged line both. GitLab's roles map onto the neutral permissions: Guest
READ, Reporter TRIAGE, Developer WRITE (may dismiss, like GitHub's write), Maintainer
MAINTAIN, Owner ADMIN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from reviewer.change import parse_hunks
from reviewer.context.tickets.model import ForgeIssue
from reviewer.findings import Finding
from reviewer.forge.interface import (
    THUMBS_DOWN,
    ChangeRequest,
    Comment,
    InlineComment,
    Permission,
    PostedReview,
    ReadOnlyToken,
    ReviewThread,
    ThreadComment,
)
from reviewer.forge.signing import Signer
from reviewer.gitlab import client as gl
from reviewer.report.github import comment_fingerprint, review_marker_of

# GitLab's access levels (docs.gitlab.com/api/members/#roles) onto the neutral permissions.
PERMISSIONS = {
    0: Permission.NONE,
    10: Permission.READ,
    20: Permission.TRIAGE,
    30: Permission.WRITE,
    40: Permission.MAINTAIN,
    50: Permission.ADMIN,
}
# GitLab's award emoji names onto the core's reaction names.
REACTIONS = {"thumbsdown": THUMBS_DOWN, "thumbsup": "+1"}
CANNOT_RESOLVE = (
    "The threads of fixed findings stay open: the token's user cannot resolve threads. GitLab "
    "allows that from the Developer role: give the project access token that role or above."
)


def gitlab_suggestion(finding: Finding) -> str:
    """GitLab's `suggestion:-N+M` replaces N lines above the commented line, it, and M below
    (docs.gitlab.com/user/project/merge_requests/reviews/suggestions/); a range's thread sits
    on its last line, so its suggestion reaches back to its first."""
    return f"suggestion:-{finding.last_line - finding.line}+0"


class LineMap:
    """The merge request's diff as GitLab anchors on it: per (path, side, line) the pair
    (old_line, new_line) GitLab wants and the hunk it is in."""

    def __init__(self, files: Sequence[tuple[str, str, str]]) -> None:
        self._lines: dict[tuple[str, str, int], tuple[int | None, int | None, int]] = {}
        self.old_paths: dict[str, str] = {}
        for old_path, new_path, patch in files:
            self.old_paths[new_path] = old_path
            hunks, _, _ = parse_hunks(patch.encode("utf-8", "surrogateescape"), new_path)
            for index, hunk in enumerate(hunks):
                for line in hunk.lines:
                    pair = (line.old_line, line.new_line, index)
                    if line.new_line is not None:
                        self._lines[(new_path, "RIGHT", line.new_line)] = pair
                    if line.old_line is not None:
                        self._lines[(new_path, "LEFT", line.old_line)] = pair

    def accepts(self, path: str, side: str, line: int, start_line: int | None = None) -> bool:
        end = self._lines.get((path, side, line))
        if end is None:
            return False
        start = self._lines.get((path, side, start_line)) if start_line is not None else end
        return start is not None and start[2] == end[2]

    def position(self, finding: Finding) -> gl.Position | None:
        """Where GitLab takes the finding's thread, or None when the diff has no such line."""
        end = self._lines.get((finding.path, finding.side, finding.last_line))
        if end is None:
            return None
        start = None
        if finding.end_line and finding.end_line != finding.line:
            first = self._lines.get((finding.path, finding.side, finding.line))
            start = (first[0], first[1]) if first is not None else None
        old_path = self.old_paths.get(finding.path, finding.path)
        return gl.Position(old_path, finding.path, end[0], end[1], start=start)


@contextmanager
def _writing() -> Iterator[None]:
    """The client's refusal for lack of rights is the core's ReadOnlyToken."""
    try:
        yield
    except gl.ReadOnlyToken as exc:
        raise ReadOnlyToken(str(exc), exc.status) from exc


class GitLabMergeRequest:
    """One merge request, as the core's ChangeRequestForge."""

    name = "GitLab"
    noun = "merge request"
    cannot_resolve = CANNOT_RESOLVE
    dialect = "gitlab"

    def __init__(self, client: gl.GitLabClient, signer: Signer) -> None:
        self.client = client
        self.signer = signer
        self._info: gl.MergeRequestInfo | None = None
        self._lines: LineMap | None = None
        self._user_ids: dict[str, int] = {}
        self._permissions: dict[str, Permission] = {}

    @property
    def bot_login(self) -> str:
        return self.client.me()[1]

    @property
    def info(self) -> gl.MergeRequestInfo:
        if self._info is None:
            self._info = self.client.merge_request()
        return self._info

    def change_request(self) -> ChangeRequest:
        self._info = self.client.merge_request()
        info = self._info
        return ChangeRequest(
            number=info.iid,
            title=info.title,
            body=info.description,
            author=info.author,
            base_sha=info.diff_refs.base_sha,
            head_sha=info.sha,
            base_ref=info.target_branch,
            head_ref=info.source_branch,
            from_fork=info.is_fork,
            url=info.web_url,
            extra=info.diff_refs,
        )

    def is_ours(self, login: str) -> bool:
        return login == self.bot_login

    def suggestion_info(self, finding: Finding) -> str:
        return gitlab_suggestion(finding)

    def is_bot(self, login: str) -> bool:
        return login == self.bot_login

    def permission(self, login: str) -> Permission:
        if login not in self._permissions:
            if not self._user_ids:
                self._discussions()  # learns the ids of everyone who wrote a note
            user_id = self._user_ids.get(login)
            level = self.client.access_level(user_id) if user_id is not None else 0
            self._permissions[login] = PERMISSIONS.get(level, Permission.NONE)
        return self._permissions[login]

    # --- reading ---------------------------------------------------------------------------

    def _discussions(self) -> list[gl.DiscussionInfo]:
        discussions = self.client.discussions()
        for discussion in discussions:
            for note in discussion.notes:
                self._user_ids[note.author] = note.author_id
                for award in note.awards:
                    self._user_ids[award.username] = award.user_id
        return discussions

    def _url(self, note_id: int) -> str:
        return f"{self.info.web_url}#note_{note_id}"

    def conversation_comments(self) -> list[Comment]:
        return [
            Comment(n.id, n.author, n.body, self._url(n.id), raw=n)
            for d in self._discussions()
            if d.individual_note
            for n in d.notes
            if not n.system
        ]

    def line_comments(self) -> list[Comment]:
        comments = []
        for discussion in self._discussions():
            if discussion.position is None:
                continue
            position = discussion.position
            new_line, old_line = position.get("new_line"), position.get("old_line")
            for index, note in enumerate(discussion.notes):
                comments.append(
                    Comment(
                        note.id,
                        note.author,
                        note.body,
                        self._url(note.id),
                        thread=discussion.id,
                        is_root=index == 0,
                        path=position.get("new_path"),
                        line=new_line or old_line,
                        side="RIGHT" if new_line else "LEFT",
                        raw=note,
                    )
                )
        return comments

    def threads(self) -> list[ReviewThread]:
        may_resolve = self.client.access_level(self.client.me()[0]) >= gl.DEVELOPER
        return [
            ReviewThread(
                id=d.id,
                is_resolved=d.resolved,
                resolved_by=d.resolved_by,
                viewer_can_resolve=may_resolve,
                comments=tuple(_thread_comment(n) for n in d.notes),
                reply_to=d.id,
            )
            for d in self._discussions()
            if d.resolvable
        ]

    def posted_fingerprints(self) -> set[str]:
        found: set[str] = set()
        for discussion in self._discussions():
            for note in discussion.notes:
                if not self.is_ours(note.author):
                    continue
                fingerprint = comment_fingerprint(note.body, self.signer)
                if fingerprint:
                    found.add(fingerprint)
                marker = review_marker_of(note.body, self.signer)
                if marker:
                    found |= marker[1]
        return found

    def issue(self, repository: str, number: int) -> ForgeIssue:
        """A project's issue; a confidential one, or one of another project that is not
        public, is named but not read: its text could reach people who may not see it."""
        found, shared = self.client.issue(repository, number)
        return _forge_issue(found, shared, repository)

    def commentable(self) -> LineMap:
        if self._lines is None:
            self._lines = LineMap(self.client.diffs())
        return self._lines

    # --- writing ---------------------------------------------------------------------------

    def post_review(
        self,
        head_sha: str,
        comments: Sequence[InlineComment],
        body_for: Callable[[int, Sequence[Finding]], str],
        run_id: str,
    ) -> PostedReview:
        """Each inline finding as a discussion on its line; what GitLab refuses, and a head
        that moved since the run started, go into the body (a note): nothing is lost."""
        info = self.client.merge_request()
        refused: list[Finding] = []
        posted = 0
        with _writing():
            for comment in comments:
                position = self.commentable().position(comment.finding)
                if position is None or info.sha != head_sha:
                    refused.append(comment.finding)
                    continue
                try:
                    self.client.post_discussion(comment.body, position, info.diff_refs)
                except gl.RefusedPosition:
                    refused.append(comment.finding)
                else:
                    posted += 1
            note = self.client.create_note(body_for(posted, refused))
        return PostedReview(self._url(note.id), posted, tuple(refused))

    def upsert_summary(self, existing: Comment | None, body: str) -> str:
        with _writing():
            if existing is not None:
                return self._url(self.client.edit_note(existing.id, body).id)
            return self._url(self.client.create_note(body).id)

    def comment(self, body: str) -> str:
        with _writing():
            return self._url(self.client.create_note(body).id)

    def reply_in_thread(self, thread: str, body: str) -> str:
        with _writing():
            return self._url(self.client.reply(thread, body).id)

    def resolve_thread(self, thread_id: str) -> bool:
        try:
            self.client.resolve(thread_id)
        except gl.ReadOnlyToken:
            return False
        return True


def _thread_comment(note: gl.NoteInfo) -> ThreadComment:
    reactions: dict[str, list[str]] = {}
    for award in note.awards:
        reactions.setdefault(REACTIONS.get(award.name, award.name), []).append(award.username)
    return ThreadComment(
        note.id, note.author, note.body, {k: tuple(v) for k, v in reactions.items()}
    )


def _forge_issue(found: dict[str, Any], shared: bool, repository: str) -> ForgeIssue:
    """A confidential issue, or one of another project that is not public, is named but not
    read: its text could reach people who may not see it."""
    restricted = ""
    if found.get("confidential"):
        restricted = "a confidential issue: its text could reach people who may not see it"
    elif not shared:
        restricted = (
            f"an issue of {repository}, which is not public: its text could reach people "
            "who may not see it"
        )
    return ForgeIssue(
        title=str(found.get("title") or ""),
        body=str(found.get("description") or ""),
        state=str(found.get("state") or ""),
        url=str(found.get("web_url") or ""),
        restricted=restricted,
    )


def issue_reader(server_url: str, token: str) -> Callable[[str, int], ForgeIssue]:
    """A local run's reader of the GitLab issues named with --ticket (the user's token)."""

    def read(repository: str, number: int) -> ForgeIssue:
        found, shared = gl.GitLabClient(server_url, token, repository, 0).issue(repository, number)
        return _forge_issue(found, shared, repository)

    return read
