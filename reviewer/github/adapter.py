"""The GitHub adapter of the forge-neutral core (reviewer/forge/interface.py): a pull request
read and written through the client (client.py) and its review threads (threads.py), opened
for a run with its commits fetched into the checkout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reviewer.context.tickets.model import ForgeIssue, ForgeKind
from reviewer.errors import ReviewerError
from reviewer.findings import Finding
from reviewer.forge.fetch import ensure_commits
from reviewer.forge.interface import (
    ChangeRequest,
    Comment,
    InlineComment,
    OpenChange,
    Permission,
    PostedReview,
    PostingWords,
    ReviewThread,
)
from reviewer.forge.signing import Signer
from reviewer.github.actions import ActionsContext, log
from reviewer.github.client import ACTIONS_BOT, Commentable, GitHubClient, InvalidAnchors
from reviewer.github.threads import resolve_thread, review_threads
from reviewer.report.github import github_suggestion
from reviewer.workspace import repository_root
from reviewer.workspace.gitcmd import run_git

CANNOT_RESOLVE = (
    "The threads of fixed findings stay open: this workflow's token cannot resolve review "
    "threads. GitHub allows that with `contents: write` (not `pull-requests: write`) in the "
    "workflow's `permissions`."
)


# What the log says a run posted on GitHub.
WORDS = PostingWords(
    on_lines="a review with {lines}",
    line_noun="inline comment",
    elsewhere="{findings} in its body",
    none_on_lines="no review",
    summary="summary comment",
    first_url="review",
    no_write="read-only token",
    no_write_long="the token is read-only (a fork's pull request?)",
)


class GitHubPull:
    """One pull request, as the core's ChangeRequestForge."""

    name = "GitHub"
    noun = "pull request"
    cannot_resolve = CANNOT_RESOLVE
    words = WORDS
    own_mention = ""  # the `mention` setting's default: an App cannot be mentioned
    dialect = "github"
    issue_kind: ForgeKind = "github"

    def __init__(self, client: GitHubClient, pull: Any) -> None:  # PyGithub's PullRequest
        self.client = client
        self.pull = pull

    @property
    def bot_login(self) -> str:
        return self.client.login

    def change_request(self) -> ChangeRequest:
        info = self.client.pull_info(self.pull)
        return ChangeRequest(
            number=info.number,
            title=info.title,
            body=info.body,
            author=str(getattr(self.pull.user, "login", "") or ""),
            base_sha=info.base_sha,
            head_sha=info.head_sha,
            base_ref=info.base_ref,
            head_ref=info.head_ref,
            from_fork=info.is_fork,
            url=info.html_url,
        )

    def is_ours(self, login: str) -> bool:
        return login == self.client.login

    def suggestion_info(self, finding: Finding) -> str:
        return github_suggestion(finding)  # replaces exactly the commented lines

    def is_bot(self, login: str) -> bool:
        """The bot is `github-actions[bot]` in REST and `github-actions` in GraphQL."""
        return login in (self.client.login, self.client.login.removesuffix("[bot]"))

    def permission(self, login: str) -> Permission:
        return Permission[self.client.permission(login).upper()]

    def conversation_comments(self) -> list[Comment]:
        return [_comment(c) for c in self.client.issue_comments(self.pull)]

    def line_comments(self) -> list[Comment]:
        return [_line_comment(c) for c in self.client.review_comments(self.pull)]

    def threads(self) -> list[ReviewThread]:
        return review_threads(self.client, self.pull.number)

    def posted_fingerprints(self) -> set[str]:
        return self.client.posted_fingerprints(self.pull)

    def commentable(self) -> Commentable:
        return self.client.commentable(self.pull)

    def issue(self, repository: str, number: int) -> ForgeIssue:
        """GitHub "Get an issue": a pull request is also an issue there (its `pull_request`
        key, docs.github.com/rest/issues/issues#get-an-issue), and is no ticket."""
        found, public = self.client.issue(repository, number)
        return _forge_issue(found, public, repository)

    def post_review(
        self,
        head_sha: str,
        comments: Sequence[InlineComment],
        body_for: Callable[[int, Sequence[Finding]], str],
        run_id: str,
    ) -> PostedReview:
        """One review; on a 422, single-line comments only, then none: what GitHub refuses is
        written into the review body, so no finding is lost."""
        single = [c for c in comments if not c.finding.end_line]
        ranges = [c for c in comments if c.finding.end_line]
        attempts = ((list(comments), []), (single, ranges), ([], list(comments)))
        for number, (inline, folded) in enumerate(attempts):
            if number > 0 and not folded:
                continue
            body = body_for(len(inline), [c.finding for c in folded])
            try:
                url = self.client.post_review(
                    self.pull, head_sha, body, [_anchored(c) for c in inline], run_id
                )
            except InvalidAnchors as exc:
                log(f"GitHub refused the review's comments ({exc}); trying again with fewer")
            else:
                return PostedReview(url, len(inline), tuple(c.finding for c in folded))
        raise ReviewerError("GitHub refused the review even without inline comments")

    def upsert_summary(self, existing: Comment | None, body: str) -> str:
        return self.client.upsert_summary(self.pull, existing.raw if existing else None, body)

    def comment(self, body: str) -> str:
        return self.client.comment_on_pull(self.pull, body)

    def reply_in_thread(self, thread: str, body: str) -> str:
        return self.client.reply_in_thread(self.pull, int(thread), body)

    def resolve_thread(self, thread_id: str) -> bool:
        return resolve_thread(self.client, thread_id)


def _comment(item: Any) -> Comment:
    return Comment(
        id=item.id,
        author=str(getattr(item.user, "login", "") or ""),
        body=item.body or "",
        url=str(item.html_url or ""),
        raw=item,
    )


def _line_comment(item: Any) -> Comment:
    root = item.in_reply_to_id
    return Comment(
        id=item.id,
        author=str(getattr(item.user, "login", "") or ""),
        body=item.body or "",
        url=str(item.html_url or ""),
        thread=str(root or item.id),
        is_root=root is None,
        path=item.path,
        line=item.line or item.original_line,
        side=item.side or "RIGHT",
        raw=item,
    )


def _forge_issue(found: Any, public: bool, repository: str) -> ForgeIssue:
    return ForgeIssue(
        title=found.title or "",
        body=found.body or "",
        state=found.state or "",
        url=found.html_url or "",
        is_change_request=found.pull_request is not None,
        restricted="" if public else (
            f"an issue of {repository}, which is not public: its text could reach people who "
            "may not read it"
        ),
    )  # fmt: skip


def issue_reader(api_url: str, token: str) -> Callable[[str, int], ForgeIssue]:
    """A local run's reader of the GitHub issues named with --ticket (the user's own token
    and choice: each issue is read as its own repository's)."""

    def read(repository: str, number: int) -> ForgeIssue:
        client = GitHubClient(api_url, token, repository, signer=Signer.from_secret("", "local"))
        found, public = client.issue(repository, number)
        return _forge_issue(found, public, repository)

    return read


def _anchored(comment: InlineComment) -> dict[str, Any]:
    """The `comments[]` entry of a review for an inline finding."""
    finding = comment.finding
    entry: dict[str, Any] = {
        "path": finding.path,
        "body": comment.body,
        "line": finding.last_line,
        "side": finding.side,
    }
    if finding.end_line and finding.end_line != finding.line:
        entry["start_line"] = finding.line
        entry["start_side"] = finding.side
    return entry


def open_pull(context: ActionsContext, env: Mapping[str, str]) -> OpenChange:
    """The event's pull request, read through the API, its commits fetched where missing.
    The memory is signed with a key bound to this repository and number (signing.py)."""
    if not context.token:
        raise ReviewerError(
            "GITHUB_TOKEN is not set: pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the "
            "action (or set GITHUB_TOKEN for the step)"
        )
    secret = env.get("REVIEWER_STATE_KEY") or env.get("OPENAI_API_KEY") or ""
    number = context.pull_request.number
    signer = Signer.from_secret(secret, f"{context.repository.lower()}#{number}")
    client = GitHubClient(
        context.api_url,
        context.token,
        context.repository,
        log=log,
        bot_login=env.get("REVIEWER_BOT_LOGIN") or ACTIONS_BOT,
        signer=signer,
    )
    forge = GitHubPull(client, client.pull(number))
    info = forge.change_request()
    base_sha = context.pull_request.base_sha or info.base_sha
    head_sha = context.pull_request.head_sha or info.head_sha
    root = repository_root(context.workspace)
    ensure_commits(
        root,
        base_sha,
        head_sha,
        log,
        change_ref=f"+refs/pull/{info.number}/head:refs/remotes/origin/pr-{info.number}",
        deep_checkout="set `fetch-depth: 0` on actions/checkout",
        noun=forge.noun,
    )
    merge_base = run_git(root, ["merge-base", base_sha, head_sha]).stdout.decode().strip()
    return OpenChange(forge, info, base_sha, head_sha, merge_base, root, signer)
