"""The fake GitLab server: HTTP on 127.0.0.1, tokens, scripted failures, recording, and the
people who act on the merge request between runs. See `reviewer.testing.fake_gitlab`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from reviewer.testing._gh_diff import resolve_commit
from reviewer.testing._gh_inject import Injection
from reviewer.testing._gl_api import ROUTES, ApiRequest, error, project_matches
from reviewer.testing._gl_store import (
    ACCESS_LEVELS,
    Issue,
    JsonObject,
    MergeRequestStore,
    ProjectInfo,
)
from reviewer.testing._llm_http import LoopbackFake, LoopbackServer, Plan
from reviewer.testing._llm_wire import Answer, json_answer

HOST = "127.0.0.1"
API = "/api/v4"
# What GitLab answers a token without the `api` scope that tries to write
# (docs.gitlab.com/api/rest/authentication/#personalprojectgroup-access-tokens).
INSUFFICIENT_SCOPE = {
    "error": "insufficient_scope",
    "error_description": "The request requires higher privileges than provided by the access "
    "token.",
    "scope": "api",
}
# Rack::Attack's throttle answer (docs.gitlab.com/security/rate_limits/): plain text.
RETRY_LATER = "Retry later\n"


@dataclass(frozen=True)
class GitLabRequest:
    """One HTTP request as received, and the status it was answered with."""

    method: str
    path: str  # after /api/v4, percent-encoded as received
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    status: int


class ActionRefused(Exception):
    """What a person tried was refused by GitLab's rules (the answer's status and body)."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


class FakeGitLab(LoopbackFake):
    """GitLab's REST API v4 for one project and one merge request made from a real git
    repository (`target...source`, the merge base's diff, like GitLab's)."""

    def __init__(
        self,
        repo: str | os.PathLike[str],
        *,
        project: str = "acme/shop",
        project_id: int = 7,
        iid: int = 1,
        target_branch: str = "main",
        source_branch: str = "feature",
        title: str = "Change things",
        description: str = "",
        author: str = "alice",
        bot: str = "project_7_bot",
        bot_access_level: int = 40,
        token: str = "glpat-fake",
        token_scope: str = "api",
        source_project_id: int | None = None,
        port: int = 0,
    ) -> None:
        self.repo = Path(repo)
        start = resolve_commit(self.repo, target_branch)
        head = resolve_commit(self.repo, source_branch)
        if start is None or head is None:
            missing = target_branch if start is None else source_branch
            raise ValueError(f"not a commit in {self.repo}: {missing}")
        self.bot = bot
        self.tokens: dict[str, tuple[str, str]] = {token: (bot, token_scope)}
        self.token = token
        self._lock = threading.Lock()
        self._requests: list[GitLabRequest] = []
        self._injections: list[Injection] = []
        self._closing = threading.Event()
        self._server = LoopbackServer(
            HOST, port, answer=self._plan, closing=self._closing, done=threading.Event()
        )
        self.port: int = self._server.server_address[1]
        info = ProjectInfo(
            project_id, project, iid, title, description, author, source_branch, target_branch,
            source_project_id or project_id,
        )  # fmt: skip
        self.store = MergeRequestStore(self.repo, self.url, info, start, head)
        self.store.user(bot, bot=True)
        self.store.members[bot] = bot_access_level
        self.on_write: list[Any] = []  # callables run after every write (the state file)
        self.add_member(author, "developer")
        self._thread = self._server.serve_in_background(f"fake-gitlab-{self.port}")

    # -- addresses and state ----------------------------------------------------------------

    @property
    def url(self) -> str:
        """What to give python-gitlab: `gitlab.Gitlab(fake.url, private_token=fake.token)`."""
        return f"http://{HOST}:{self.port}"

    @property
    def api_url(self) -> str:
        """CI_API_V4_URL."""
        return f"{self.url}{API}"

    @property
    def head_sha(self) -> str:
        return self.store.latest.head_sha

    @property
    def merge_request(self) -> JsonObject:
        with self.store.lock:
            return self.store.merge_request_json()

    @property
    def discussions(self) -> list[JsonObject]:
        with self.store.lock:
            return [self.store.discussion_json(d) for d in self.store.discussions]

    @property
    def requests(self) -> list[GitLabRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, method: str, path_suffix: str) -> list[GitLabRequest]:
        return [
            r for r in self.requests if r.method == method and r.path.endswith(path_suffix)
        ]

    # -- people between runs ----------------------------------------------------------------

    def add_member(self, username: str, role: str | int) -> JsonObject:
        """A project member with a role (guest, reporter, developer, maintainer, owner, or an
        access level 10-50); "none" removes them."""
        level = ACCESS_LEVELS.get(str(role), 0) if isinstance(role, str) else role
        with self.store.lock:
            user = self.store.user(username)
            if level:
                self.store.members[username] = level
            else:
                self.store.members.pop(username, None)
            self._wrote()
            return self.store.user_json(user.username)

    def add_issue(
        self,
        iid: int,
        title: str,
        description: str,
        *,
        state: str = "opened",
        confidential: bool = False,
    ) -> JsonObject:
        """An issue of the project (a ticket a merge request may name as `#iid`)."""
        with self.store.lock:
            issue = Issue(iid, title, description, state, confidential)
            self.store.issues[iid] = issue
            return self.store.issue_json(issue)

    def user_id(self, username: str) -> int:
        with self.store.lock:
            return self.store.user(username).id

    def person(self, username: str, role: str | int | None = None) -> Person:
        """Someone acting on GitLab's web page; `role` also makes them a member."""
        if role is not None:
            self.add_member(username, role)
        return Person(self, username)

    def push(self, rev: str | None = None) -> tuple[str, str]:
        """A push to the source branch: a new version of the diff (new `diff_refs`); the
        discussions stay where they were (their positions keep their own SHAs)."""
        head = resolve_commit(self.repo, rev or self.store.info.source_branch)
        if head is None:
            raise ValueError(f"not a commit in {self.repo}: {rev}")
        with self.store.lock:
            before = self.store.latest.head_sha
            self.store.add_version(self.store.latest.start_sha, head)
            self._wrote()
        return before, head

    def act(self, username: str, method: str, path: str, body: JsonObject | None = None) -> Any:
        """One request as `username` through the same routes and rules as HTTP (no record)."""
        answer = self._dispatch(method, path, {}, body, username, "api")
        data = json.loads(answer.body) if answer.body else None
        if answer.status >= 400:
            raise ActionRefused(answer.status, data)
        return data

    # -- failure injection ------------------------------------------------------------------

    def inject(
        self,
        method: str,
        path: str,
        status: int,
        body: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        times: int = 1,
        persist: bool = False,
    ) -> Injection:
        """Answer the next `times` requests matching `method` ("*": any) and the glob `path`
        (after /api/v4) with `status`; `body` defaults to GitLab's `{"message": "<status>
        <phrase>"}`. `persist=True` does the work first (the note is stored), then fails."""
        if body is None:
            body = {"message": _default_message(status)}
        injection = Injection(method, path, status, body, dict(headers or {}), times, persist)
        with self._lock:
            self._injections.append(injection)
        return injection

    def rate_limit(
        self, method: str = "*", path: str = "*", *, retry_after: int = 1, times: int = 1
    ) -> Injection:
        """GitLab's throttle: 429 "Retry later" with `Retry-After` and `RateLimit-*` headers
        (docs.gitlab.com/security/rate_limits/#response-headers); nothing is done."""
        headers = {
            "retry-after": str(retry_after),
            "ratelimit-limit": "600",
            "ratelimit-remaining": "0",
            "ratelimit-name": "throttle_authenticated_api",
            "content-type": "text/plain",
        }
        return self.inject(method, path, 429, RETRY_LATER, headers=headers, times=times)

    # -- serving ----------------------------------------------------------------------------

    def _plan(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Plan:
        split = urlsplit(target)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = dict(parse_qsl(raw.decode("utf-8", "replace")))  # a form post
        path = split.path.removeprefix(API) if split.path.startswith(API + "/") else None
        injection = self._take_injection(method, path or split.path)
        if injection is not None and not injection.persist:
            answer = injection.answer("")
        elif path is None:
            answer = json_answer(404, {"error": "404 Not Found"})
        else:
            user, scope, refused = self._authenticate(headers)
            answer = refused or self._dispatch(method, path, query, body, user, scope)
            if injection is not None:
                answer = injection.answer("")
        with self._lock:
            self._requests.append(
                GitLabRequest(method, path or split.path, query, headers, body, answer.status)
            )
        if method != "GET" and 200 <= answer.status < 300:
            self._wrote()
        return Plan(answer)

    def _authenticate(self, headers: dict[str, str]) -> tuple[str | None, str, Answer | None]:
        """PRIVATE-TOKEN or `Authorization: Bearer` (docs.gitlab.com/api/rest/authentication/)."""
        token = headers.get("private-token")
        bearer = headers.get("authorization", "")
        if token is None and bearer.lower().startswith("bearer "):
            token = bearer[7:].strip()
        if token is None:
            return None, "", None
        known = self.tokens.get(token)
        if known is None:
            return None, "", error(401, "401 Unauthorized")
        return known[0], known[1], None

    def _dispatch(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        user: str | None,
        scope: str,
    ) -> Answer:
        for route_method, pattern, handler, writes in ROUTES:
            match = pattern.match(path)
            if match is None or route_method != method:
                continue
            if "project" in match.groupdict() and not project_matches(self.store, match["project"]):
                return error(404, "404 Project Not Found")
            if user is None and (writes or path == "/user"):
                return error(401, "401 Unauthorized")
            if writes and scope != "api":
                return json_answer(403, INSUFFICIENT_SCOPE)
            with self.store.lock:
                # A private project: outsiders do not see it at all.
                if (user is None or user not in self.store.members) and path != "/user":
                    return error(404, "404 Project Not Found")
                if "iid" in match.groupdict() and int(match["iid"]) != self.store.info.iid:
                    return error(404, "404 Not found")
                request = ApiRequest(method, path, query, body, user, self.api_url)
                return handler(self.store, match, request)
        if any(pattern.match(path) for _, pattern, _, _ in ROUTES):
            return error(405, "405 Method Not Allowed")
        return json_answer(404, {"error": "404 Not Found"})

    def _take_injection(self, method: str, path: str) -> Injection | None:
        with self._lock:
            for injection in self._injections:
                if injection.matches(method, path):
                    injection.used += 1
                    return injection
        return None

    def _wrote(self) -> None:
        for hook in list(self.on_write):
            hook()

    def __repr__(self) -> str:
        return f"FakeGitLab({self.url!r}, mr={self.store.info.iid}, head={self.head_sha[:7]})"


class Person:
    """Someone on the merge request's web page, acting between runs through GitLab's rules."""

    def __init__(self, fake: FakeGitLab, username: str) -> None:
        self.fake = fake
        self.username = username
        info = fake.store.info
        self._mr = f"/projects/{info.id}/merge_requests/{info.iid}"

    def note(self, body: str) -> JsonObject:
        """A comment on the merge request (a note of its own)."""
        return self._act("POST", "/notes", {"body": body})

    def reply(self, discussion_id: str, body: str) -> JsonObject:
        return self._act("POST", f"/discussions/{discussion_id}/notes", {"body": body})

    def resolve(self, discussion_id: str, resolved: bool = True) -> JsonObject:
        return self._act("PUT", f"/discussions/{discussion_id}", {"resolved": resolved})

    def award(self, note_id: int, name: str = "thumbsdown") -> JsonObject:
        return self._act("POST", f"/notes/{note_id}/award_emoji", {"name": name})

    def edit(self, note_id: int, body: str) -> JsonObject:
        return self._act("PUT", f"/notes/{note_id}", {"body": body})

    def _act(self, method: str, suffix: str, body: JsonObject) -> JsonObject:
        result: JsonObject = self.fake.act(self.username, method, self._mr + suffix, body)
        with self.fake.store.lock:
            self.fake._wrote()
        return result


def _default_message(status: int) -> str:
    phrases = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
               409: "Conflict", 500: "Internal Server Error", 502: "Bad Gateway",
               503: "Service Unavailable", 504: "Gateway Timeout"}  # fmt: skip
    return f"{status} {phrases.get(status, 'Error')}"


def encoded_path(project: str) -> str:
    """A project's path as `:id` in a URL (docs.gitlab.com/api/rest/#namespaced-paths)."""
    return quote(project, safe="")
