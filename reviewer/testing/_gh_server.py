"""The fake GitHub server: HTTP on 127.0.0.1, scripted failures, recording, common headers.

Routing and GitHub's preliminary checks are in `_gh_dispatch`, resources in `_gh_api` and
`_gh_comments`, state in `_gh_store`. See `reviewer.testing.fake_github` for the whole picture.
"""

from __future__ import annotations

import fnmatch
import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from reviewer.testing._gh_conversation import ConversationMixin
from reviewer.testing._gh_diff import resolve_commit
from reviewer.testing._gh_dispatch import Dispatcher
from reviewer.testing._gh_inject import Injection, RateCounter, rate_limit_injection
from reviewer.testing._gh_objects import (
    ACTIONS_BOT,
    JsonObject,
    Site,
    require_graphql_core,
    stable_id,
)
from reviewer.testing._gh_state import PullRequestInfo, render_plain_issue
from reviewer.testing._gh_store import Limits, PullRequestStore
from reviewer.testing._llm_http import LoopbackFake, LoopbackServer, Plan
from reviewer.testing._llm_wire import Answer

HOST = "127.0.0.1"


@dataclass(frozen=True)
class GitHubRequest:
    """One HTTP request as received, and the status it was answered with."""

    method: str
    path: str  # as received (with any GHES prefix), without the query
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON; the text when not JSON; None when empty
    status: int


class FakeGitHub(ConversationMixin, LoopbackFake):
    """A fake GitHub REST API serving one pull request made from a real git repository.

    Serves from a daemon thread as soon as it is built; use it as a context manager or call
    `close()`. See `reviewer.testing.fake_github` for what it serves and checks.
    """

    def __init__(
        self,
        repo: str | os.PathLike[str],
        *,
        repository: str = "acme/shop",
        number: int = 1,
        base_ref: str = "main",
        head_ref: str = "feature",
        base_sha: str | None = None,
        head_sha: str | None = None,
        title: str = "Change things",
        body: str | None = None,
        author: str = "octocat",
        fork: bool = False,
        draft: bool = False,
        bot: str = ACTIONS_BOT,
        prefix: str = "",
        token: str | None = None,
        read_only: bool | None = None,
        token_permissions: Mapping[str, str] | None = None,
        actions_may_approve: bool = False,
        expect_commit_id: bool = False,
        max_diff_files: int = 300,
        max_diff_lines: int = 20000,
        max_listed_files: int = 3000,
        rate_limit: int | None = None,
        port: int = 0,
    ) -> None:
        require_graphql_core()
        owner, slash, name = repository.partition("/")
        if not slash or not owner or not name or "/" in name:
            raise ValueError(f"repository must be 'owner/name', not {repository!r}")
        self.repo = Path(repo)
        base = resolve_commit(self.repo, base_sha or base_ref)
        head = resolve_commit(self.repo, head_sha or head_ref)
        if base is None or head is None:
            missing = base_sha or base_ref if base is None else head_sha or head_ref
            raise ValueError(f"not a commit in {self.repo}: {missing}")
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self.bot = bot
        # GITHUB_TOKEN has 1000 requests an hour per repository; a personal token 5000.
        self.rate = RateCounter(rate_limit or (1000 if bot == ACTIONS_BOT else 5000))
        self._lock = threading.Lock()
        self._requests: list[GitHubRequest] = []
        self._failures: list[str] = []
        self._rejections: list[str] = []
        self._injections: list[Injection] = []
        self._closing = threading.Event()
        self._server = LoopbackServer(
            HOST, port, answer=self._plan, closing=self._closing, done=threading.Event()
        )
        self.port: int = self._server.server_address[1]
        site = Site(self.base_url, self.url, owner, name, stable_id(repository))
        info = PullRequestInfo(number, title, body, author, base_ref, base, head_ref, fork, draft)
        limits = Limits(actions_may_approve, max_diff_files, max_diff_lines, max_listed_files)
        self.store = PullRequestStore(self.repo, site, info, head, limits)
        self.token_permissions = token_permissions
        self._dispatcher = Dispatcher(
            self.store,
            self.prefix,
            bot,
            token,
            # A fork's pull_request run gets a read-only token; pull_request_target does not.
            fork if read_only is None else read_only,
            expect_commit_id,
            self.rate.state,
        )
        self._thread = self._server.serve_in_background(f"fake-github-{self.port}")

    # -- addresses, settings and state ------------------------------------------------------

    @property
    def url(self) -> str:
        """The web root (where `html_url`s point)."""
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give PyGithub: `Github(base_url=fake.base_url, ...)` (GHES prefix included)."""
        return f"{self.url}{self.prefix}"

    @property
    def read_only(self) -> bool:
        """Every write answered 403 "Resource not accessible by integration"."""
        return self._dispatcher.read_only

    @read_only.setter
    def read_only(self, value: bool) -> None:
        self._dispatcher.read_only = value

    @property
    def token(self) -> str | None:
        """The only token accepted (None: any)."""
        return self._dispatcher.token

    @token.setter
    def token(self, value: str | None) -> None:
        self._dispatcher.token = value

    @property
    def head_sha(self) -> str:
        return self.store.head_sha

    @property
    def diff_text(self) -> str:
        return self.store.diff.text.decode("utf-8", "replace")

    @property
    def pull(self) -> JsonObject:
        return self.store.pull_json()

    @property
    def reviews(self) -> list[JsonObject]:
        with self.store.lock:
            return [self.store.review_json(r) for r in self.store.reviews]

    @property
    def review_comments(self) -> list[JsonObject]:
        """Every review comment, pending reviews' included (see `pull_request_review_id`)."""
        with self.store.lock:
            return [self.store.comment_json(c) for c in self.store.review_comments]

    @property
    def issue_comments(self) -> list[JsonObject]:
        with self.store.lock:
            return [self.store.issue_comment_json(c) for c in self.store.issue_comments]

    @property
    def requests(self) -> list[GitHubRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def failures(self) -> list[str]:
        """Requests the fake could not serve (no such route, bad JSON, unsupported media type)
        and broken expectations (`expect_commit_id`). GitHub-style refusals are not failures."""
        with self._lock:
            return list(self._failures)

    @property
    def rejections(self) -> list[str]:
        """The 4xx answers GitHub itself would have given (validation, permissions, tokens)."""
        with self._lock:
            return list(self._rejections)

    def requests_to(self, method: str, path_glob: str) -> list[GitHubRequest]:
        """Recorded requests matching a method and a glob on the path without the prefix."""
        return [
            r
            for r in self.requests
            if r.method == method.upper()
            and fnmatch.fnmatchcase(self._route_path(r.path), path_glob)
        ]

    def assert_no_failures(self) -> None:
        failures = self.failures
        assert not failures, "fake GitHub failures:\n" + "\n".join(failures)

    def event_payload(self, action: str = "synchronize") -> JsonObject:
        """The `pull_request` webhook payload an Actions run reads from GITHUB_EVENT_PATH."""
        pull = self.pull
        return {
            "action": action,
            "number": pull["number"],
            "pull_request": pull,
            "repository": pull["base"]["repo"],
            "sender": pull["user"],
        }

    def set_head(self, sha: str) -> None:
        """Simulate a push: a new head commit and diff; existing reviews and comments stay."""
        resolved = resolve_commit(self.repo, sha)
        if resolved is None:
            raise ValueError(f"not a commit in {self.repo}: {sha}")
        self.store.set_head(resolved)

    # -- seeding ----------------------------------------------------------------------------

    def add_issue_comment(self, body: str, *, user: str | None = None) -> JsonObject:
        """An existing comment on the pull request's conversation (by the bot by default)."""
        comment = self.store.add_issue_comment(body, user=user or self.bot)
        return self.store.issue_comment_json(comment)

    def add_issue(
        self,
        number: int,
        title: str,
        body: str,
        *,
        repository: str | None = None,
        state: str = "open",
        author: str = "octocat",
    ) -> JsonObject:
        """An issue (no pull request) of the served repository, or of another one of the site
        (add_repository first): a ticket a pull request may name."""
        name = repository or self.store.site.full_name
        if repository and repository.lower() not in self.store.other_repos:
            raise ValueError(f"add_repository({repository!r}) first")
        issue = render_plain_issue(self.store.site, name, number, title, body, state, author)
        with self.store.lock:
            self.store.issues[(name.lower(), number)] = issue
        return issue

    def add_repository(self, full_name: str, *, private: bool = False) -> None:
        """Another repository of the site, with issues (`GET /repos/{o}/{r}` and its issues
        only). A private one is seen only when `reads_private` (a personal token's reach)."""
        with self.store.lock:
            self.store.other_repos[full_name.lower()] = (full_name, private)

    @property
    def reads_private(self) -> bool:
        return self._dispatcher.reads_private

    @reads_private.setter
    def reads_private(self, value: bool) -> None:
        self._dispatcher.reads_private = value

    def add_review(
        self,
        body: str = "",
        *,
        comments: Iterable[JsonObject] = (),
        user: str | None = None,
        state: str = "COMMENTED",
        commit_id: str | None = None,
    ) -> JsonObject:
        """An existing review (by the bot by default), e.g. from a previous run. `comments` as
        in a review POST (`path`, `body`, `line`, `side`, `start_line`, `start_side`); they are
        not validated, since an older run may have anchored them on another head."""
        review = self.store.add_review(
            body, user=user or self.bot, state=state, commit_id=commit_id, comments=list(comments)
        )
        return self.store.review_json(review)

    def add_review_comment(
        self,
        path: str,
        line: int,
        body: str,
        *,
        side: str = "RIGHT",
        start_line: int | None = None,
        start_side: str | None = None,
        user: str | None = None,
        commit_id: str | None = None,
    ) -> JsonObject:
        """One existing inline comment, in a review of its own (as GitHub stores a lone one)."""
        item: JsonObject = {"path": path, "line": line, "body": body, "side": side}
        if start_line is not None:
            item.update(start_line=start_line, start_side=start_side or side)
        self.add_review("", comments=[item], user=user, commit_id=commit_id)
        return self.review_comments[-1]

    # -- failure injection ------------------------------------------------------------------

    def inject(
        self,
        method: str,
        path: str,
        status: int,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        times: int = 1,
        persist: bool = False,
        delay: float = 0.0,
    ) -> Injection:
        """Answer the next `times` requests matching `method` ("*" for any) and the glob `path`
        (without the GHES prefix, e.g. "*/pulls/*/reviews") with `status`; `body` defaults to
        GitHub's for that status. Injections are used in the order they were added.
        `persist=True` serves the request first (a review is stored) and then answers with the
        failure, as GitHub does when it times out after saving. `delay` waits before answering
        (a client timeout test)."""
        injection = Injection(
            method, path, status, body, dict(headers or {}), times, persist, delay
        )
        with self._lock:
            self._injections.append(injection)
        return injection

    def rate_limit(
        self,
        method: str = "*",
        path: str = "*",
        *,
        status: int = 403,
        secondary: bool = False,
        retry_after: int | None = None,
        reset_in: int = 60,
        times: int = 1,
    ) -> Injection:
        """A primary rate limit (`x-ratelimit-remaining: 0`, reset in `reset_in` seconds) or a
        secondary one (`retry-after`, 60 by default), as a 403 or a 429, with GitHub's text."""
        who = (
            "installation ID 1" if self.bot.endswith("[bot]") else f"user ID {stable_id(self.bot)}"
        )
        injection = rate_limit_injection(
            method,
            path,
            status=status,
            secondary=secondary,
            retry_after=retry_after,
            reset_in=reset_in,
            times=times,
            limit=self.rate.limit,
            who=who,
        )
        with self._lock:
            self._injections.append(injection)
        return injection

    # -- lifecycle --------------------------------------------------------------------------

    def __repr__(self) -> str:
        number = self.store.info.number
        return f"FakeGitHub({self.base_url!r}, pull={number}, head={self.head_sha[:7]})"

    # -- serving ----------------------------------------------------------------------------

    def _route_path(self, path: str) -> str:
        if self.prefix and path.startswith(self.prefix + "/"):
            return path[len(self.prefix) :]
        return path

    def _plan(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Plan:
        """The answer to one HTTP request (called from the handler threads)."""
        split = urlsplit(target)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        body: Any = None
        bad_json = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body, bad_json = raw.decode("utf-8", "replace"), True
        # Every request uses one unit of the rate limit, so the count numbers the requests.
        used = number = self.rate.count()
        # GitHub's shape: five hex fields, e.g. F259:3DE1D4:1812C6DB:175A8999:6A952D28.
        request_id = (
            f"{number:04X}:{self.port:06X}:{number * 7919:08X}:{used:08X}:{self.rate.reset_at:08X}"
        )
        where = f"request {number} ({method} {split.path})"
        injection = self._take_injection(method, split.path)
        if injection is not None and not injection.persist:
            answer = injection.answer(request_id)
        else:
            answer = self._serve(where, method, split.path, query, headers, body, bad_json)
            if injection is not None:
                answer = injection.answer(request_id)
        answer.headers = {**self.rate.headers(used, request_id), **answer.headers}
        with self._lock:
            self._requests.append(
                GitHubRequest(method, split.path, query, headers, body, answer.status)
            )
        return Plan(answer, injection.delay if injection is not None else 0.0)

    def _serve(
        self,
        where: str,
        method: str,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        body: Any,
        bad_json: bool,
    ) -> Answer:
        answer, rejection, failure = self._dispatcher.serve(
            method, path, query, headers, body, bad_json
        )
        with self._lock:
            if rejection is not None:
                self._rejections.append(f"{where}: {rejection}")
            if failure is not None:
                self._failures.append(f"{where}: {failure}")
        return answer

    def _take_injection(self, method: str, path: str) -> Injection | None:
        with self._lock:
            for injection in self._injections:
                if injection.matches(method, self._route_path(path)):
                    injection.used += 1
                    return injection
        return None
