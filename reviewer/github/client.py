"""GitHub, through PyGithub (its only importer): read the pull request, post the review and
the summary comment.

PyGithub's own retry re-POSTs a review after a 5xx, which can create a second review, so it
is switched off (`retry=None`) and retries are done here: reads are retried freely, a POST
only after checking that the first attempt did not land. Rate limits wait as the server asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException
from github.PullRequest import PullRequest

from reviewer.change import parse_hunks
from reviewer.forge import interface
from reviewer.forge.signing import Signer
from reviewer.report.github import comment_fingerprint, is_summary, last_line, review_marker_of

T = TypeVar("T")
_MAX_WAIT_SECONDS = 120.0
_ATTEMPTS = 4
# Who GITHUB_TOKEN acts as; a GitHub App's token acts as its own `<slug>[bot]`.
ACTIONS_BOT = "github-actions[bot]"


class GitHubError(interface.ForgeError):
    """GitHub refused or failed a request, for good."""


class ReadOnlyToken(GitHubError, interface.ReadOnlyToken):
    """Writes are refused (403): a fork's pull request, or a token without pull-requests: write."""


class GraphQLForbidden(GitHubError):
    """GitHub's GraphQL API answered FORBIDDEN: the token lacks a permission (for resolving a
    review thread, `contents: write`)."""


class InvalidAnchors(GitHubError):
    """GitHub refused the review's comments (422): the anchors did not match its diff."""


@dataclass(frozen=True)
class PullInfo:
    number: int
    title: str
    body: str
    base_sha: str
    head_sha: str
    base_ref: str
    head_ref: str
    is_fork: bool
    html_url: str


class Commentable:
    """Lines GitHub accepts review comments on, per file and side, from the PR's own patches."""

    def __init__(self, patches: dict[str, str | None]) -> None:
        self._lines: dict[tuple[str, str], dict[int, int]] = {}
        for path, patch in patches.items():
            if not patch:
                continue
            hunks, _adds, _dels = parse_hunks(patch.encode("utf-8", "surrogateescape"), path)
            for index, hunk in enumerate(hunks):
                for line in hunk.lines:
                    if line.new_line is not None:
                        self._lines.setdefault((path, "RIGHT"), {})[line.new_line] = index
                    if line.old_line is not None:
                        self._lines.setdefault((path, "LEFT"), {})[line.old_line] = index
        self.paths = set(patches)

    def accepts(self, path: str, side: str, line: int, start_line: int | None = None) -> bool:
        hunks = self._lines.get((path, side), {})
        if line not in hunks:
            return False
        return start_line is None or hunks.get(start_line) == hunks[line]


class GitHubClient:
    def __init__(
        self,
        api_url: str,
        token: str,
        repository: str,
        *,
        sleep: Callable[[float], None] | None = None,
        log: Callable[[str], None] = lambda message: None,
        bot_login: str = ACTIONS_BOT,
        signer: Signer,
    ) -> None:
        self.gh = Github(
            base_url=api_url,
            auth=Auth.Token(token),
            retry=None,
            per_page=100,
            timeout=30,
            lazy=True,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self.repository = repository
        # Looked up at call time, so a test can replace `_sleep` (and only this client's
        # waits: replacing time.sleep would reach every thread of the process).
        self.sleep = sleep or (lambda seconds: _sleep(seconds))
        self.log = log
        self._repo = self.gh.get_repo(repository)  # lazy client: no request
        self.bot_login = bot_login
        self.signer = signer
        self._login: str | bool | None = False  # False: not asked yet
        self._permissions: dict[str, str] = {}

    # --- reading ---------------------------------------------------------------------------

    def pull(self, number: int) -> PullRequest:
        return self._read(lambda: self._fetched(self._repo.get_pull(number)), f"read PR #{number}")

    def pull_info(self, pull: PullRequest) -> PullInfo:
        head_repo = pull.head.repo.full_name if pull.head.repo else None
        return PullInfo(
            number=pull.number,
            title=pull.title or "",
            body=pull.body or "",
            base_sha=pull.base.sha,
            head_sha=pull.head.sha,
            base_ref=pull.base.ref,
            head_ref=pull.head.ref,
            is_fork=head_repo != self.repository,
            html_url=pull.html_url,
        )

    def commentable(self, pull: PullRequest) -> Commentable:
        files = self._read(
            lambda: {f.filename: f.patch for f in pull.get_files()}, "list the PR's files"
        )
        return Commentable(files)

    def is_ours(self, user: Any) -> bool:
        """Whether `user` is the identity this client posts as. Anyone can write our markers
        into a comment: only our own comments may say what was reviewed or posted."""
        return getattr(user, "login", None) == self.login

    @property
    def login(self) -> str:
        """The login the token acts as: `/user` answers for a personal token; an Actions or
        App installation token may not read it, and then acts as `bot_login`."""
        if self._login is False:
            try:
                self._login = self.gh.get_user().login
            except GithubException:
                self._login = None
            self.log(f"reading the bot's own comments as {self._login or self.bot_login}")
        return self._login or self.bot_login

    def posted_fingerprints(self, pull: PullRequest) -> set[str]:
        """Fingerprints of findings already on the PR: our inline comments and review bodies,
        each read from its last line only."""

        def collect() -> set[str]:
            found: set[str] = set()
            for comment in pull.get_review_comments():
                fingerprint = comment_fingerprint(comment.body, self.signer)
                if fingerprint and self.is_ours(comment.user):
                    found.add(fingerprint)
            for review in pull.get_reviews():
                marker = review_marker_of(review.body, self.signer)
                if marker and self.is_ours(review.user):
                    found |= marker[1]
            return found

        return self._read(collect, "read the PR's review comments")

    def summary_comments(self, pull: PullRequest) -> list[Any]:
        """Our comments that start with the summary marker, oldest first."""

        def find() -> list[Any]:
            return [
                c for c in pull.get_issue_comments() if is_summary(c.body) and self.is_ours(c.user)
            ]

        return self._read(find, "read the PR's comments")

    def review_comments(self, pull: PullRequest) -> list[Any]:
        """Every review comment of the pull request, each thread's root before its replies."""
        return self._read(lambda: list(pull.get_review_comments()), "read the PR's review comments")

    def issue_comments(self, pull: PullRequest) -> list[Any]:
        """Every comment of the pull request's conversation, oldest first."""
        return self._read(lambda: list(pull.get_issue_comments()), "read the PR's comments")

    def issue(self, repository: str, number: int) -> tuple[Any, bool]:
        """Issue `number` of `repository` (PyGithub's Issue, fetched), and whether everyone
        may read it: true in this run's own repository (whoever sees the pull request sees
        its issues), else whether that repository is public (one more request)."""
        own = repository.lower() == self.repository.lower()

        def read() -> tuple[Any, bool]:
            repo = self._repo if own else self.gh.get_repo(repository)
            issue = repo.get_issue(number)
            _ = issue.title  # a lazy object is fetched here, inside the retry
            return issue, own or not repo.private

        return self._read(read, f"read issue {repository}#{number}")

    def permission(self, login: str) -> str:
        """`admin`, `write`, `read` or `none`: what `login` may do in the repository, as GitHub
        folds roles (`maintain` is write, `triage` read). Asked once per login and run."""
        if login not in self._permissions:
            try:
                permission = self._read(
                    lambda: self._repo.get_collaborator_permission(login),
                    f"read the permission of {login}",
                )
            except GitHubError as exc:
                if exc.status != 404:
                    raise
                permission = "none"  # not a user GitHub knows: no right to anything here
            self._permissions[login] = permission
        return self._permissions[login]

    def may_write(self, login: str) -> bool:
        """Whether `login` has write, maintain or admin permission on the repository."""
        return self.permission(login) in ("admin", "write")

    def graphql(self, query: str, variables: dict[str, Any], what: str) -> dict[str, Any]:
        """The `data` of a GraphQL request. GitHub answers errors with HTTP 200 and `errors[]`
        (PyGithub raises them as a 400); FORBIDDEN becomes GraphQLForbidden."""

        def send() -> dict[str, Any]:
            try:
                _, answer = self.gh.requester.graphql_query(query, variables)
            except GithubException as exc:
                errors = exc.data.get("errors") if isinstance(exc.data, dict) else None
                forbidden = [e for e in errors or [] if e.get("type") == "FORBIDDEN"]
                if forbidden:
                    message = str(forbidden[0].get("message", ""))[:200]
                    raise GraphQLForbidden(f"GitHub refused to {what}: {message}", 403) from exc
                raise
            return dict(answer.get("data") or {})

        return self._read(send, what)

    # --- writing ---------------------------------------------------------------------------

    def reply_in_thread(self, pull: PullRequest, comment_id: int, body: str) -> str:
        """A reply in the review thread of `comment_id` (its root or any reply); its URL."""
        return self._write(
            lambda: pull.create_review_comment_reply(comment_id, body).html_url,
            "reply in a review thread",
            landed=None,
        )

    def comment_on_pull(self, pull: PullRequest, body: str) -> str:
        """A comment on the pull request's conversation; its URL."""
        return self._write(
            lambda: pull.create_issue_comment(body).html_url, "comment on the PR", landed=None
        )

    def post_review(
        self,
        pull: PullRequest,
        head_sha: str,
        body: str,
        comments: list[dict[str, Any]],
        run_id: str,
    ) -> str:
        """One COMMENT review; returns its URL. Never approves, never posts twice."""
        commit = self._repo.get_commit(head_sha)  # lazy: no request

        def landed() -> str | None:
            for review in pull.get_reviews():
                marker = review_marker_of(review.body, self.signer)
                if marker and marker[0] == run_id and self.is_ours(review.user):
                    return review.html_url
            return None

        def create() -> str:
            kwargs: dict[str, Any] = {"commit": commit, "body": body, "event": "COMMENT"}
            if comments:
                kwargs["comments"] = comments
            return pull.create_review(**kwargs).html_url

        return self._write(create, "post the review", landed=landed)

    def upsert_summary(self, pull: PullRequest, existing: Any | None, body: str) -> str:
        if existing is not None:
            self._write(lambda: existing.edit(body), "edit the summary comment", landed=None)
            return existing.html_url
        state = last_line(body)

        def landed() -> str | None:
            for found in self.summary_comments(pull):
                if last_line(found.body) == state:
                    return str(found.html_url)
            return None

        return self._write(
            lambda: pull.create_issue_comment(body).html_url,
            "post the summary comment",
            landed=landed,
        )

    # --- retries ---------------------------------------------------------------------------

    def _read(self, action: Callable[[], T], what: str) -> T:
        return self._attempt(action, what, landed=None, idempotent=True)

    def _write(
        self, action: Callable[[], T], what: str, landed: Callable[[], T | None] | None
    ) -> T:
        return self._attempt(action, what, landed=landed, idempotent=False)

    def _attempt(
        self,
        action: Callable[[], T],
        what: str,
        landed: Callable[[], T | None] | None,
        idempotent: bool,
    ) -> T:
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                return action()
            except GithubException as exc:
                error = _classify(exc, what)
                wait = _wait_for(exc)
            except (requests.ConnectionError, requests.Timeout) as exc:
                error = GitHubError(f"cannot reach GitHub to {what}: {type(exc).__name__}")
                wait = 2.0 * attempt
            if wait is None or attempt == _ATTEMPTS:
                raise error
            self.log(f"GitHub: {error}; retrying in {wait:.0f} s")
            self.sleep(wait)
            if not idempotent and landed is not None:
                # A 5xx or a timeout can come after the write was stored: look before repeating.
                done = landed()
                if done is not None:
                    return done
        raise AssertionError("unreachable")

    @staticmethod
    def _fetched(pull: PullRequest) -> PullRequest:
        _ = pull.head.sha  # a lazy object is fetched here, inside the retry
        return pull


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _classify(exc: GithubException, what: str) -> GitHubError:
    message = _message(exc)
    if exc.status == 401:
        return GitHubError(
            f"GitHub rejected the token (401) trying to {what}; check GITHUB_TOKEN", 401
        )
    if exc.status == 403 and not _is_rate_limit(exc):
        return ReadOnlyToken(
            f"GitHub refused to {what} (403: {message}); the token is read-only "
            "(a fork's pull request, or permissions without `pull-requests: write`)",
            403,
        )
    if exc.status == 404:
        return GitHubError(f"GitHub could not find what it needed to {what} (404: {message})", 404)
    if exc.status == 422:
        return InvalidAnchors(f"GitHub refused to {what} (422: {message})", 422)
    return GitHubError(f"GitHub failed to {what} ({exc.status}: {message})", exc.status)


def _wait_for(exc: GithubException) -> float | None:
    """Seconds to wait before a retry, or None when retrying cannot help."""
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    if exc.status in (403, 429) and _is_rate_limit(exc):
        if "retry-after" in headers:
            wait = _number(headers["retry-after"], 60.0)
        elif headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            wait = _number(headers["x-ratelimit-reset"], 0.0) - time.time() + 1
        else:
            wait = 60.0
        return max(wait, 0.0) if wait <= _MAX_WAIT_SECONDS else None
    if exc.status is not None and exc.status >= 500:
        return _number(headers.get("retry-after", ""), 2.0)
    return None


def _is_rate_limit(exc: GithubException) -> bool:
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    text = _message(exc).lower()
    return (
        exc.status == 429
        or "rate limit" in text
        or headers.get("x-ratelimit-remaining") == "0"
        or "retry-after" in headers
    )


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    message = str(data.get("message") or exc.message or "")
    errors = data.get("errors")
    if errors:
        details = [e if isinstance(e, str) else e.get("message", str(e)) for e in errors]
        message += ": " + "; ".join(str(d) for d in details)
    return " ".join(message.split())[:300]


def _number(text: str, default: float) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return default
