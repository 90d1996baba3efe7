"""Routes of the fake GitHub under `/repos/{o}/{r}`, and the pull request and review endpoints.

No HTTP here: `handle` turns a routed request into an `Answer` or raises `GitHubError` with the
body GitHub would send. Comment endpoints live in `_gh_comments`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import reviewer.testing._gh_comments as comments
import reviewer.testing._gh_conversation_api as conversation
from reviewer.testing._gh_diff import commit_info, resolve_commit
from reviewer.testing._gh_objects import (
    DOC,
    GitHubError,
    diff_too_large,
    error_body,
    json_answer,
    not_found,
    unprocessable,
)
from reviewer.testing._gh_reviews import (
    COMMIT_NOT_IN_PR,
    check_review_event,
    check_review_schema,
    resolve_comment,
)
from reviewer.testing._gh_store import ApiRequest, PullRequestStore, page
from reviewer.testing._llm_wire import Answer

DIFF_TYPE = "application/vnd.github.v3.diff; charset=utf-8"
Handler = Callable[[PullRequestStore, re.Match[str], ApiRequest, str], Answer]


class UnsupportedByFake(Exception):
    """A request GitHub would serve but the fake cannot: recorded as a failure."""


def get_repo(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    site = store.site
    data = site.repository(site.owner, site.name, fork=False, default_branch=store.info.base_ref)
    return json_answer(200, data)


def get_pull(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    accept = request.headers.get("accept", "")
    if re.search(r"application/vnd\.github(\.v3)?\.diff", accept):
        diff = store.diff
        limits = store.limits
        too_large = diff_too_large(diff, limits.max_diff_files, limits.max_diff_lines)
        if too_large is not None:
            raise too_large
        headers = {"x-github-media-type": "github.v3; param=diff"}
        return Answer(200, diff.text, content_type=DIFF_TYPE, headers=headers)
    if re.search(r"application/vnd\.github(\.v3)?\.patch", accept):
        raise UnsupportedByFake("the patch media type (format-patch) is not implemented")
    return json_answer(200, store.pull_json())


def list_files(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    # GitHub lists at most 3000 files and truncates silently (changed_files says more).
    entries = store.diff.files[: store.limits.max_listed_files]
    return page([store.site.file_entry(entry, store.head_sha) for entry in entries], request)


def list_commits(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    items = [store.site.commit(commit_info(store.repo, sha)) for sha in store.commits[:250]]
    return page(items, request)


def get_commit(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    sha = resolve_commit(store.repo, match["ref"])
    if sha is None:
        raise GitHubError(422, error_body(422, f"No commit found for SHA: {match['ref']}", doc))
    return json_answer(200, store.site.commit(commit_info(store.repo, sha)))


def list_reviews(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return page([store.review_json(r) for r in store.reviews], request)


def create_review(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    payload = check_review_schema(request.body)
    commit = payload.get("commit_id") or store.head_sha
    if commit not in store.pr_commits:
        raise unprocessable(COMMIT_NOT_IN_PR)
    has_pending = any(r.state == "PENDING" and r.user == request.user for r in store.reviews)
    state = check_review_event(
        payload,
        user=request.user,
        author=store.info.author,
        actions_may_approve=store.limits.actions_may_approve,
        has_pending=has_pending,
    )
    diff = store.diff_for(commit)
    # All or nothing: every comment is resolved before anything is stored.
    anchors = [resolve_comment(diff, item) for item in payload.get("comments", [])]
    review = store.new_review(request.user, payload.get("body") or "", state, commit)
    for anchor in anchors:
        store.store_comment(review, commit, anchor)
    return json_answer(200, store.review_json(review))


def get_review(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return json_answer(200, store.review_json(store.review(match, doc)))


def delete_review(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    review = store.review(match, doc)
    if review.state != "PENDING":
        raise unprocessable("Can not delete a non-pending pull request review", doc)
    store.reviews.remove(review)
    store.review_comments = [c for c in store.review_comments if c.review_id != review.id]
    return json_answer(200, store.review_json(review))


def list_review_comments(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    review = store.review(match, doc)
    mine = [c for c in store.review_comments if c.review_id == review.id]
    return page([store.comment_json(c) for c in mine], request)


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    doc: str

    @property
    def write(self) -> bool:
        return self.method != "GET"


def _route(method: str, pattern: str, handler: Handler, doc: str) -> Route:
    return Route(method, re.compile(f"^{pattern}$"), handler, DOC[doc])


N = r"(?P<n>\d+)"
ID = r"(?P<id>\d+)"
ROUTES = (
    _route("GET", "", get_repo, "repo"),
    _route("GET", f"/pulls/{N}", get_pull, "pull"),
    _route("GET", f"/pulls/{N}/files", list_files, "files"),
    _route("GET", f"/pulls/{N}/commits", list_commits, "commits"),
    _route("GET", r"/commits/(?P<ref>[^/]+)", get_commit, "commit"),
    _route("GET", f"/pulls/{N}/reviews", list_reviews, "reviews"),
    _route("POST", f"/pulls/{N}/reviews", create_review, "create_review"),
    _route("GET", f"/pulls/{N}/reviews/{ID}", get_review, "review"),
    _route("DELETE", f"/pulls/{N}/reviews/{ID}", delete_review, "delete_review"),
    _route("GET", f"/pulls/{N}/reviews/{ID}/comments", list_review_comments, "review_comments"),
    _route("GET", f"/pulls/{N}/comments", comments.list_comments, "review_comments"),
    _route("POST", f"/pulls/{N}/comments", comments.create_comment, "create_review_comment"),
    _route("POST", f"/pulls/{N}/comments/{ID}/replies", comments.reply_to_comment, "reply"),
    _route("GET", f"/pulls/comments/{ID}", comments.get_comment, "review_comment"),
    _route("PATCH", f"/pulls/comments/{ID}", comments.edit_comment, "edit_review_comment"),
    _route("DELETE", f"/pulls/comments/{ID}", comments.delete_comment, "delete_review_comment"),
    _route("GET", f"/issues/{N}", comments.get_issue, "issue"),
    _route("GET", f"/issues/{N}/comments", comments.list_issue_comments, "issue_comments"),
    _route("POST", f"/issues/{N}/comments", comments.create_issue_comment, "create_issue_comment"),
    _route("GET", f"/issues/comments/{ID}", comments.get_issue_comment, "issue_comment"),
    _route("PATCH", f"/issues/comments/{ID}", comments.edit_issue_comment, "edit_issue_comment"),
    _route(
        "DELETE", f"/issues/comments/{ID}", comments.delete_issue_comment, "delete_issue_comment"
    ),
    _route(
        "GET",
        f"/pulls/comments/{ID}/reactions",
        conversation.list_review_comment_reactions,
        "review_comment_reactions",
    ),
    _route(
        "POST",
        f"/pulls/comments/{ID}/reactions",
        conversation.create_review_comment_reaction,
        "create_review_comment_reaction",
    ),
    _route(
        "GET",
        f"/issues/comments/{ID}/reactions",
        conversation.list_issue_comment_reactions,
        "issue_comment_reactions",
    ),
    _route(
        "POST",
        f"/issues/comments/{ID}/reactions",
        conversation.create_issue_comment_reaction,
        "create_issue_comment_reaction",
    ),
    _route(
        "GET",
        r"/collaborators/(?P<login>[^/]+)/permission",
        conversation.get_permission,
        "permission",
    ),
)


def find_route(method: str, rest: str) -> tuple[Route | None, re.Match[str] | None, bool]:
    """The route for `rest`, its match, and whether the path exists under another method."""
    other = False
    for route in ROUTES:
        match = route.pattern.match(rest)
        if match and route.method == method:
            return route, match, True
        other = other or bool(match)
    return None, None, other


def handle(
    store: PullRequestStore, route: Route, match: re.Match[str], request: ApiRequest
) -> Answer:
    number = match.groupdict().get("n")
    # The issues endpoint also serves the repository's issues (get_issue decides).
    if number is not None and int(number) != store.info.number and route.handler is not (
        comments.get_issue
    ):
        raise not_found(route.doc)
    with store.lock:
        return route.handler(store, match, request, route.doc)
