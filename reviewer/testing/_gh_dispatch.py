"""From an HTTP request to a resource of the fake GitHub, with the checks GitHub makes first:
the path prefix, the token, a read-only token on writes, a JSON body.

GitHub-style refusals raise `GitHubError`; requests the fake cannot serve raise `NotServed`
(a failure of the test setup, not something GitHub would say).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from reviewer.testing._gh_api import UnsupportedByFake, find_route, handle
from reviewer.testing._gh_inject import INTEGRATION
from reviewer.testing._gh_objects import (
    DOC,
    DOCS,
    GRAPHQL_DOC,
    GitHubError,
    JsonObject,
    error_body,
    graphql_path,
    json_answer,
)
from reviewer.testing._gh_store import ApiRequest, PullRequestStore
from reviewer.testing._llm_wire import Answer

_REPO_PATH = re.compile(
    r"^/(?:repos/(?P<owner>[^/]+)/(?P<name>[^/]+)|repositories/(?P<rid>\d+))(?P<rest>/.*)?$"
)
_WEB_DIFF = re.compile(r"^/(?P<owner>[^/]+)/(?P<name>[^/]+)/pull/(?P<n>\d+)\.diff$")


class NotServed(Exception):
    """A request the fake could not serve as GitHub would: a failure of the test setup."""

    def __init__(self, status: int, message: str, body: JsonObject | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body or error_body(404, "Not Found", DOCS)


@dataclass
class Dispatcher:
    store: PullRequestStore
    prefix: str
    bot: str
    token: str | None
    read_only: bool
    expect_commit_id: bool
    rate_limit: Callable[[], JsonObject]  # the server counts requests
    # Whether the token reads the site's other private repositories (a personal token may;
    # a workflow's GITHUB_TOKEN reads its own repository only).
    reads_private: bool = False

    def serve(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        body: Any,
        bad_json: bool,
    ) -> tuple[Answer, str | None, str | None]:
        """The answer, GitHub's refusal to record (if any) and the fake's failure (if any)."""
        try:
            answer, broken = self.dispatch(method, path, query, headers, body, bad_json)
        except GitHubError as error:
            return json_answer(error.status, error.body, error.headers), str(error), None
        except NotServed as problem:
            return json_answer(problem.status, problem.body), None, str(problem)
        except Exception as exc:  # a bug in the fake must show in the test, not hang it
            failure = f"the fake raised {exc!r}"
            return json_answer(500, error_body(500, f"fake GitHub error: {exc}")), None, failure
        return answer, None, broken

    def dispatch(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        body: Any,
        bad_json: bool,
    ) -> tuple[Answer, str | None]:
        """The answer, and a broken expectation to record (the request is still served)."""
        store = self.store
        web = _WEB_DIFF.match(path)
        if web and method == "GET" and self._is_repo(web["owner"], web["name"]):
            # The web `diff_url` (github.com/o/r/pull/n.diff): no token, no size limit.
            if int(web["n"]) != store.info.number:
                raise GitHubError(404, {"message": "Not Found"})
            return Answer(200, store.diff.text, content_type="text/plain; charset=utf-8"), None
        if path == graphql_path(self.prefix):
            # Loaded here: graphql-core is an extra that only the fake's GraphQL needs.
            import reviewer.testing._gh_graphql as _gh_graphql

            if method != "POST":
                raise GitHubError(404, error_body(404, "Not Found", GRAPHQL_DOC))
            self._check_token(headers, write=True)  # GraphQL always needs a token
            if bad_json:
                raise GitHubError(400, error_body(400, "Problems parsing JSON", GRAPHQL_DOC))
            return _gh_graphql.answer(store, body, self.bot, self.read_only), None
        if self.prefix and not path.startswith(self.prefix + "/"):
            raise NotServed(404, f"outside the API prefix {self.prefix}")
        rel = path[len(self.prefix) :]
        self._check_token(headers, write=method != "GET")
        if method == "GET":
            answer = self._meta(rel)
            if answer is not None:
                return answer, None
        match = _REPO_PATH.match(rel)
        if match is None:
            raise NotServed(404, "no such route in the fake")
        if match["rid"] is not None:
            is_repo = int(match["rid"]) == store.site.repo_id
        else:
            is_repo = self._is_repo(match["owner"], match["name"])
        if not is_repo:
            other = self._other_repository(method, match, headers)
            if other is not None:
                return other, None
            raise GitHubError(404, error_body(404, "Not Found", DOC["repo"]))
        rest = match["rest"] or ""
        route, route_match, exists = find_route(method, rest)
        if route is None or route_match is None:
            raise NotServed(404, f"no {method} on this path" if exists else "no such route")
        if route.write and self.read_only:
            needed = (
                "issues=write; pull_requests=write" if "/issues/" in rest else "pull_requests=write"
            )
            headers_out = {"x-accepted-github-permissions": needed}
            raise GitHubError(403, error_body(403, INTEGRATION, route.doc), headers_out)
        if route.write and bad_json:
            raise NotServed(
                400, "the body is not JSON", error_body(400, "Problems parsing JSON", route.doc)
            )
        broken = None
        posts_review = route.handler.__name__ == "create_review"
        if self.expect_commit_id and posts_review and not _has_commit_id(body):
            broken = "a review was posted without commit_id (expect_commit_id)"
        page_url = f"{store.site.api}/repositories/{store.site.repo_id}{rest}"
        request = ApiRequest(method, rest, query, body, headers, self.bot, page_url)
        try:
            return handle(store, route, route_match, request), broken
        except UnsupportedByFake as exc:
            raise NotServed(
                415, str(exc), error_body(415, "Unsupported Media Type", route.doc)
            ) from None

    def _meta(self, rel: str) -> Answer | None:
        """The few endpoints outside the repository."""
        site = self.store.site
        if rel == "/user":
            if self.bot.endswith("[bot]"):  # an installation token is not a user
                raise GitHubError(403, error_body(403, INTEGRATION, DOC["me"]))
            return json_answer(200, site.user(self.bot))
        if rel.startswith("/users/") and rel.count("/") == 2:
            return json_answer(200, site.user(unquote(rel.removeprefix("/users/"))))
        if rel == "/rate_limit":
            core = self.rate_limit()
            return json_answer(200, {"resources": {"core": core}, "rate": core})
        return None

    def _other_repository(
        self, method: str, match: re.Match[str], headers: dict[str, str]
    ) -> Answer | None:
        """Another repository of the site (add_repository): `GET /repos/{o}/{r}` and its
        issues only. A private one is invisible to a token that cannot read it: GitHub
        answers 404 for what a token may not see (docs.github.com/rest: "Resources that do
        not exist or that the token cannot access return 404")."""
        store = self.store
        if method != "GET" or match["owner"] is None:
            return None
        full = f"{match['owner']}/{match['name']}"
        known = store.other_repos.get(full.lower())
        if known is None or (known[1] and not self.reads_private):
            return None
        name, private = known
        owner, _, repo = name.partition("/")
        rest = match["rest"] or ""
        if rest == "":
            data = store.site.repository(owner, repo, fork=False, default_branch="main")
            visibility = "private" if private else "public"
            return json_answer(200, {**data, "private": private, "visibility": visibility})
        issue = re.fullmatch(r"/issues/(\d+)", rest)
        found = store.issues.get((name.lower(), int(issue[1]))) if issue else None
        if found is None:
            raise GitHubError(404, error_body(404, "Not Found", DOC["issue"]))
        return json_answer(200, found)

    def _is_repo(self, owner: str, name: str) -> bool:
        # GitHub matches owner and repository names case-insensitively.
        site = self.store.site
        return owner.lower() == site.owner.lower() and name.lower() == site.name.lower()

    def _check_token(self, headers: dict[str, str], *, write: bool) -> None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if not scheme:
            if self.token is not None or write:
                raise GitHubError(401, error_body(401, "Requires authentication"))
            return
        if scheme.lower() not in ("token", "bearer") or (
            self.token is not None and token.strip() != self.token
        ):
            raise GitHubError(401, error_body(401, "Bad credentials"))


def _has_commit_id(body: Any) -> bool:
    return isinstance(body, dict) and bool(body.get("commit_id"))
