"""JSON objects as GitHub's REST API returns them, and its error bodies.

Every URL is absolute and built from the fake's own address: PyGithub asserts that each URL it
follows has the host, port and path prefix of its `base_url` (`127.0.0.1` and `localhost`
differ), so a fake that answered with `https://api.github.com/...` would break the client.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from reviewer.testing._gh_diff import CommitInfo, FileDiff, PullDiff
from reviewer.testing._llm_wire import Answer

JsonObject = dict[str, Any]

DOCS = "https://docs.github.com/rest"
GRAPHQL_DOC = "https://docs.github.com/graphql/guides/forming-calls-with-graphql"
# graphql-core runs the fake's GraphQL; it is an optional extra, only the fakes need it.
GRAPHQL_EXTRA = "reviewer[fakes]"


def graphql_path(rest_prefix: str) -> str:
    """Where GraphQL lives: `/graphql` beside `api.github.com`, `/api/graphql` beside GHES's
    `/api/v3` (docs: "http(s)://HOSTNAME/api/graphql"; PyGithub derives it the same way)."""
    return rest_prefix.removesuffix("/v3") + "/graphql"


def require_graphql_core() -> None:
    """The fake GitHub answers GraphQL (review threads) with graphql-core: without it, say
    which extra to install, before a server starts that could not answer `reviewer github`."""
    try:
        import graphql  # noqa: F401
    except ImportError as exc:
        raise ModuleNotFoundError(
            "the fake GitHub answers GraphQL with graphql-core, which is not installed: "
            f"pip install '{GRAPHQL_EXTRA}'",
            name="graphql",
        ) from exc

REACTIONS = f"{DOCS}/reactions/reactions"
DOC = {
    "repo": f"{DOCS}/repos/repos#get-a-repository",
    "pull": f"{DOCS}/pulls/pulls#get-a-pull-request",
    "files": f"{DOCS}/pulls/pulls#list-pull-requests-files",
    "commits": f"{DOCS}/pulls/pulls#list-commits-on-a-pull-request",
    "commit": f"{DOCS}/commits/commits#get-a-commit",
    "create_review": f"{DOCS}/pulls/reviews#create-a-review-for-a-pull-request",
    "reviews": f"{DOCS}/pulls/reviews#list-reviews-for-a-pull-request",
    "review": f"{DOCS}/pulls/reviews#get-a-review-for-a-pull-request",
    "delete_review": f"{DOCS}/pulls/reviews#delete-a-pending-review-for-a-pull-request",
    "review_comments": f"{DOCS}/pulls/comments#list-review-comments-on-a-pull-request",
    "create_review_comment": f"{DOCS}/pulls/comments#create-a-review-comment-for-a-pull-request",
    "review_comment": f"{DOCS}/pulls/comments#get-a-review-comment-for-a-pull-request",
    "reply": f"{DOCS}/pulls/comments#create-a-reply-for-a-review-comment",
    "edit_review_comment": f"{DOCS}/pulls/comments#update-a-review-comment-for-a-pull-request",
    "delete_review_comment": f"{DOCS}/pulls/comments#delete-a-review-comment-for-a-pull-request",
    "issue": f"{DOCS}/issues/issues#get-an-issue",
    "issue_comments": f"{DOCS}/issues/comments#list-issue-comments",
    "create_issue_comment": f"{DOCS}/issues/comments#create-an-issue-comment",
    "issue_comment": f"{DOCS}/issues/comments#get-an-issue-comment",
    "edit_issue_comment": f"{DOCS}/issues/comments#update-an-issue-comment",
    "delete_issue_comment": f"{DOCS}/issues/comments#delete-an-issue-comment",
    "review_comment_reactions": f"{REACTIONS}#list-reactions-for-a-pull-request-review-comment",
    "create_review_comment_reaction": (
        f"{REACTIONS}#create-reaction-for-a-pull-request-review-comment"
    ),
    "issue_comment_reactions": f"{REACTIONS}#list-reactions-for-an-issue-comment",
    "create_issue_comment_reaction": f"{REACTIONS}#create-reaction-for-an-issue-comment",
    "permission": f"{DOCS}/collaborators/collaborators#get-repository-permissions-for-a-user",
    "user": f"{DOCS}/users/users#get-a-user",
    "me": f"{DOCS}/users/users#get-the-authenticated-user",
    "rate_limit": f"{DOCS}/rate-limit/rate-limit#get-rate-limit-status-for-the-authenticated-user",
}
RATE_LIMIT_DOC = f"{DOCS}/overview/rate-limits-for-the-rest-api"
JSON_TYPE = "application/json; charset=utf-8"
ACTIONS_BOT = "github-actions[bot]"
ACTIONS_BOT_ID = 41898282  # the real id of github-actions[bot]


class GitHubError(Exception):
    """An answer GitHub would give instead of the resource (4xx with its real body)."""

    def __init__(
        self, status: int, body: JsonObject, headers: dict[str, str] | None = None
    ) -> None:
        errors = body.get("errors")
        detail = f": {json.dumps(errors)}" if errors else ""
        super().__init__(f"{status} {body.get('message')}{detail}")
        self.status = status
        self.body = body
        self.headers = headers or {}


def error_body(status: int, message: str, doc: str = DOCS, errors: Any = None) -> JsonObject:
    # GitHub's key order; newer responses repeat the status as a string.
    body: JsonObject = {"message": message}
    if errors is not None:
        body["errors"] = errors
    body["documentation_url"] = doc
    body["status"] = str(status)
    return body


def not_found(doc: str = DOCS) -> GitHubError:
    return GitHubError(404, error_body(404, "Not Found", doc))


def unprocessable(error: str, doc: str = DOC["create_review"]) -> GitHubError:
    """The review endpoints' 422: `errors` is an array of strings, not of objects."""
    return GitHubError(422, error_body(422, "Unprocessable Entity", doc, [error]))


def validation_failed(
    resource: str, field: str, code: str, doc: str, message: str = ""
) -> GitHubError:
    """The object form of 422 used by issue comments and single review comments."""
    error: JsonObject = {"resource": resource, "code": code, "field": field}
    if message:
        error["message"] = message
    return GitHubError(422, error_body(422, "Validation Failed", doc, [error]))


def invalid_request(detail: str, doc: str) -> GitHubError:
    """GitHub's JSON-schema refusal, e.g. `For 'properties/commit_id', nil is not a string.`"""
    return GitHubError(422, error_body(422, f"Invalid request.\n\n{detail}", doc))


def ruby_repr(value: Any) -> str:
    # The schema messages quote the offending value the way Ruby prints it.
    if value is None:
        return "nil"
    return json.dumps(value)


def json_answer(status: int, body: Any, headers: dict[str, str] | None = None) -> Answer:
    data = b"" if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
    return Answer(status, data, content_type=JSON_TYPE, headers=dict(headers or {}))


def timestamp(epoch: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if epoch is None else epoch))


def stable_id(text: str) -> int:
    return 1000 + zlib.crc32(text.encode("utf-8")) % 90_000_000


def node_id(kind: str, number: int) -> str:
    # The legacy global id format: base64 of "<len>:<Type><id>".
    raw = f"{len(kind):02d}:{kind}{number}"
    return base64.b64encode(raw.encode()).decode()


@dataclass(frozen=True)
class Site:
    """Where the fake lives: its API root (with any GHES prefix) and its web root."""

    api: str  # e.g. http://127.0.0.1:PORT/api/v3
    web: str  # e.g. http://127.0.0.1:PORT
    owner: str
    name: str
    repo_id: int

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def repo_api(self) -> str:
        return f"{self.api}/repos/{self.owner}/{self.name}"

    @property
    def repo_web(self) -> str:
        return f"{self.web}/{self.owner}/{self.name}"

    def user(self, login: str) -> JsonObject:
        bot = login.endswith("[bot]")
        uid = ACTIONS_BOT_ID if login == ACTIONS_BOT else stable_id(login)
        api = f"{self.api}/users/{quote(login, safe='')}"
        html = f"{self.web}/apps/{login.removesuffix('[bot]')}" if bot else f"{self.web}/{login}"
        return {
            "login": login,
            "id": uid,
            "node_id": node_id("Bot" if bot else "User", uid),
            "avatar_url": f"{self.web}/avatars/u/{uid}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": html,
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": "Bot" if bot else "User",
            "user_view_type": "public",
            "site_admin": False,
        }

    def repository(self, owner: str, name: str, *, fork: bool, default_branch: str) -> JsonObject:
        repo_id = self.repo_id if not fork else stable_id(f"{owner}/{name}")
        api = f"{self.api}/repos/{owner}/{name}"
        html = f"{self.web}/{owner}/{name}"
        return {
            "id": repo_id,
            "node_id": node_id("Repository", repo_id),
            "name": name,
            "full_name": f"{owner}/{name}",
            "private": False,
            "owner": self.user(owner),
            "html_url": html,
            "description": None,
            "fork": fork,
            "url": api,
            "pulls_url": f"{api}/pulls{{/number}}",
            "issues_url": f"{api}/issues{{/number}}",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "commits_url": f"{api}/commits{{/sha}}",
            "contents_url": f"{api}/contents/{{+path}}",
            "git_url": f"git://127.0.0.1/{owner}/{name}.git",
            "clone_url": f"{html}.git",
            "ssh_url": f"git@127.0.0.1:{owner}/{name}.git",
            "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
            "pushed_at": "2024-01-01T00:00:00Z",
            "language": None,
            "archived": False,
            "disabled": False,
            "visibility": "public",
            "default_branch": default_branch,
        }

    def commit(self, info: CommitInfo) -> JsonObject:
        api = f"{self.repo_api}/commits/{info.sha}"

        def person(who: tuple[str, str, int]) -> JsonObject:
            return {"name": who[0], "email": who[1], "date": timestamp(who[2])}

        return {
            "sha": info.sha,
            "node_id": node_id("Commit", stable_id(info.sha)),
            "commit": {
                "author": person(info.author),
                "committer": person(info.committer),
                "message": info.message,
                "tree": {"sha": info.tree, "url": f"{self.repo_api}/git/trees/{info.tree}"},
                "url": f"{self.repo_api}/git/commits/{info.sha}",
                "comment_count": 0,
            },
            "url": api,
            "html_url": f"{self.repo_web}/commit/{info.sha}",
            "comments_url": f"{api}/comments",
            "author": None,  # no GitHub account is linked to a test identity
            "committer": None,
            "parents": [
                {
                    "sha": p,
                    "url": f"{self.repo_api}/commits/{p}",
                    "html_url": f"{self.repo_web}/commit/{p}",
                }
                for p in info.parents
            ],
        }

    def file_entry(self, entry: FileDiff, head_sha: str) -> JsonObject:
        path = quote(entry.filename)
        item: JsonObject = {
            "sha": entry.sha,
            "filename": entry.filename,
            "status": entry.status,
            "additions": entry.additions,
            "deletions": entry.deletions,
            "changes": entry.additions + entry.deletions,
            "blob_url": f"{self.repo_web}/blob/{head_sha}/{path}",
            "raw_url": f"{self.repo_web}/raw/{head_sha}/{path}",
            "contents_url": f"{self.repo_api}/contents/{path}?ref={head_sha}",
        }
        if entry.patch is not None:
            item["patch"] = entry.patch
        if entry.previous_filename is not None:
            item["previous_filename"] = entry.previous_filename
        return item


def diff_too_large(diff: PullDiff, max_files: int, max_lines: int) -> GitHubError | None:
    """GitHub's 406 for a diff over its limits (300 files or 20000 lines by default)."""
    if len(diff.files) > max_files:
        what = f"files ({max_files})"
    elif diff.text.count(b"\n") > max_lines:
        what = f"lines ({max_lines})"
    else:
        return None
    message = (
        f"Sorry, the diff exceeded the maximum number of {what}. Consider using 'List pull "
        "requests files' API or locally cloning the repository instead."
    )
    errors = [{"resource": "PullRequest", "field": "diff", "code": "too_large"}]
    return GitHubError(406, error_body(406, message, DOC["files"], errors))


def paginate(
    items: list[Any], query: dict[str, str], page_url: str
) -> tuple[list[Any], dict[str, str]]:
    """One page of `items` and the `link` header GitHub would send with it.

    `page_url` is the absolute URL without query. PyGithub parses `link` by splitting on `", "`
    then `"; "`, so the exact shape matters: `<URL>; rel="next", <URL>; rel="last"`.
    """
    per_page = _int(query.get("per_page"), 30)
    per_page = 30 if per_page < 1 else min(per_page, 100)
    page = max(_int(query.get("page"), 1), 1)
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page : page * per_page]
    if len(items) <= per_page:
        return chunk, {}

    def url(number: int) -> str:
        params = {k: v for k, v in query.items() if k != "page"}
        params["page"] = str(number)
        return f"{page_url}?{urlencode(params)}"

    links = []
    if page > 1:
        links.append(f'<{url(page - 1)}>; rel="prev"')
    if page < last:
        links.append(f'<{url(page + 1)}>; rel="next"')
        links.append(f'<{url(last)}>; rel="last"')
    if page > 1:
        links.append(f'<{url(1)}>; rel="first"')
    return chunk, {"link": ", ".join(links)}


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default
