"""The GitLab adapter of the forge-neutral core (reviewer/forge/interface.py): one merge
request read and written through the client (client.py).

GitLab has no review object: each inline finding is a discussion with a position, posted one
by one, and the summary note is the run's only other note; a finding whose position GitLab
refuses is a discussion of its own without one, its place named, so nothing is lost. A
finding's anchor (path, side, line) becomes GitLab's line by its role, from the merge
request's own diff, and a range's ends GitLab's line codes (lines.py). GitLab's roles map
onto the neutral permissions: Guest READ, Reporter TRIAGE, Developer WRITE (may dismiss, like
GitHub's write), Maintainer MAINTAIN, Owner ADMIN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from reviewer.context.tickets.model import ForgeIssue, ForgeKind
from reviewer.findings import Finding
from reviewer.forge.interface import (
    THUMBS_DOWN,
    ChangeRequest,
    Comment,
    InlineComment,
    Permission,
    PostedReview,
    PostingWords,
    ReadOnlyToken,
    ReviewThread,
    ThreadComment,
)
from reviewer.forge.signing import Signer
from reviewer.gitlab import client as gl
from reviewer.gitlab.lines import LineMap
from reviewer.report.github import comment_fingerprint, off_line_body, review_marker_of

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
# Why a finding's thread is not on its line (said first in that thread).
NOT_ON_DIFF = "GitLab did not take it on its line of the merge request's diff"
MOVED = "the merge request's head moved while this run reviewed it"
# What the log says a run posted on GitLab: discussions and notes, GitLab's own words.
WORDS = PostingWords(
    on_lines="{lines} on lines",
    line_noun="discussion",
    elsewhere="{findings} in discussions of their own, not taken on their lines",
    none_on_lines="no discussion",
    summary="summary note",
    first_url="discussions",
    no_write="this job may not post",
    no_write_long=(
        "this job may not post on it (a fork's pipeline, no token, or a token without the api "
        "scope)"
    ),
)
CANNOT_RESOLVE = (
    "The threads of fixed findings stay open: the token's user cannot resolve threads. GitLab "
    "allows that from the Developer role: give the project access token that role or above."
)


def gitlab_suggestion(finding: Finding) -> str:
    """GitLab's `suggestion:-N+M` replaces N lines above the commented line, it, and M below
    (docs.gitlab.com/user/project/merge_requests/reviews/suggestions/); a range's thread sits
    on its last line, so its suggestion reaches back to its first."""
    return f"suggestion:-{finding.last_line - finding.line}+0"


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
    words = WORDS
    dialect = "gitlab"
    issue_kind: ForgeKind = "gitlab"

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
    def own_mention(self) -> str:
        """The bot's own username (GET /user of the token): `@reviewer` could notify a real
        GitLab user of that name, and would not call the bot."""
        return f"@{self.bot_login}"

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
                self._discussions()  # learns the ids of everyone who acted
            user_id = self._user_ids.get(login)
            if user_id is None and login == self.info.author and self.info.author_id:
                user_id = self.info.author_id  # the merge request's author, who may not act
            level = self.client.access_level(user_id) if user_id is not None else 0
            self._permissions[login] = PERMISSIONS.get(level, Permission.NONE)
        return self._permissions[login]

    # --- reading ---------------------------------------------------------------------------

    def _discussions(self) -> list[gl.DiscussionInfo]:
        """The discussions; on the way, the ids of everyone who acted in them (a note, an
        award, a resolve: a note's `resolved_by` is a user object with its `id`), the only
        way to ask GitLab for a person's role."""
        discussions = self.client.discussions()
        for discussion in discussions:
            if discussion.resolved_by and discussion.resolved_by_id is not None:
                self._user_ids[discussion.resolved_by] = discussion.resolved_by_id
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
        """The comments of every thread: on lines, and the bot's findings GitLab did not
        take on their lines (threads without a position)."""
        comments = []
        for discussion in self._discussions():
            if discussion.individual_note:
                continue
            position = discussion.position or {}
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
                        side="LEFT" if old_line and not new_line else "RIGHT",
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
        """Each inline finding as a discussion on its line. GitLab has no review object and
        notifies everyone on the merge request of every note, so no note stands for the
        review (`body_for` is not used): the summary note says it all. A finding GitLab does
        not take on its line (a position it refuses, a head that moved since the run
        started) is a discussion of its own, its place named and its text in full: nothing
        is lost, and it is a thread like the others (resolved, 👎, replied to, fixed).

        Every body ends with its finding's signed fingerprint: a retried POST looks for that
        exact body before posting it again (client.py), and the next run reads it as posted
        (`posted_fingerprints`). That per-note marker is the run's mark on GitLab."""
        info = self.client.merge_request()
        refused: list[tuple[InlineComment, str]] = []
        urls: list[str] = []
        with _writing():
            for comment in comments:
                position = self.commentable().position(comment.finding)
                if position is None or info.sha != head_sha:
                    refused.append((comment, MOVED if position else NOT_ON_DIFF))
                    continue
                try:
                    posted = self.client.post_discussion(comment.body, position, info.diff_refs)
                except gl.RefusedPosition:
                    refused.append((comment, NOT_ON_DIFF))
                else:
                    urls.append(self._url(posted.notes[0].id))
            on_lines = len(urls)
            for comment, reason in refused:
                body = off_line_body(comment.finding, comment.body, reason)
                urls.append(self._url(self.client.post_discussion(body, None, info.diff_refs)
                                      .notes[0].id))  # fmt: skip
        url = urls[0] if urls else ""
        return PostedReview(url, on_lines, tuple(comment.finding for comment, _ in refused))

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
