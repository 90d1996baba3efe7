"""A merge request this run may not post on (a fork's pipeline, or no token), as the core's
ChangeRequestForge: it reads nothing of GitLab (there is no token to read with) and refuses
every write with the reason, so the core reviews the change in the checkout, writes every
report, and says why nothing was posted (posting.py's read-only path).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from reviewer.context.tickets.model import ForgeIssue, ForgeKind
from reviewer.findings import Finding
from reviewer.forge.interface import (
    ChangeRequest,
    Comment,
    ForgeError,
    InlineComment,
    Permission,
    PostedReview,
    ReadOnlyToken,
    ReviewThread,
)
from reviewer.gitlab.adapter import WORDS, gitlab_suggestion
from reviewer.gitlab.ci import GitLabJob


class _NoLines:
    def accepts(self, path: str, side: str, line: int, start_line: int | None = None) -> bool:
        return False


class UnpostedMergeRequest:
    name = "GitLab"
    noun = "merge request"
    cannot_resolve = ""
    words = WORDS
    dialect = "gitlab"
    issue_kind: ForgeKind = "gitlab"
    bot_login = ""
    own_mention = ""  # it answers no question: it reads no note

    def __init__(self, job: GitLabJob, env: Mapping[str, str], why: str) -> None:
        self.job = job
        self.env = env
        self.why = why

    def change_request(self) -> ChangeRequest:
        """What the pipeline's predefined variables say of the merge request."""
        server = self.env.get("CI_MERGE_REQUEST_PROJECT_URL") or ""
        return ChangeRequest(
            number=self.job.iid,
            title=self.env.get("CI_MERGE_REQUEST_TITLE") or "",
            body=self.env.get("CI_MERGE_REQUEST_DESCRIPTION") or "",
            author="",
            base_sha=self.job.base_sha,
            head_sha=self.job.head_sha,
            base_ref=self.job.target_branch,
            head_ref=self.job.source_branch,
            from_fork=self.job.from_fork,
            url=f"{server}/-/merge_requests/{self.job.iid}" if server else "",
        )

    def suggestion_info(self, finding: Finding) -> str:
        return gitlab_suggestion(finding)

    def is_ours(self, login: str) -> bool:
        return False

    def is_bot(self, login: str) -> bool:
        return False

    def permission(self, login: str) -> Permission:
        return Permission.NONE

    def conversation_comments(self) -> list[Comment]:
        return []

    def line_comments(self) -> list[Comment]:
        return []

    def threads(self) -> list[ReviewThread]:
        return []

    def posted_fingerprints(self) -> set[str]:
        return set()

    def issue(self, repository: str, number: int) -> ForgeIssue:
        """Nothing of GitLab is read without a token (nor in a fork's pipeline)."""
        raise ForgeError(self.why)

    def commentable(self) -> _NoLines:
        return _NoLines()

    def post_review(
        self,
        head_sha: str,
        comments: Sequence[InlineComment],
        body_for: Callable[[int, Sequence[Finding]], str],
        run_id: str,
    ) -> PostedReview:
        raise ReadOnlyToken(self.why)

    def upsert_summary(self, existing: Comment | None, body: str) -> str:
        raise ReadOnlyToken(self.why)

    def comment(self, body: str) -> str:
        raise ReadOnlyToken(self.why)

    def reply_in_thread(self, thread: str, body: str) -> str:
        raise ReadOnlyToken(self.why)

    def resolve_thread(self, thread_id: str) -> bool:
        return False
