"""The fake GitHub's store seen through GitHub's GraphQL types: one function per object type
builds the dict graphql-core reads (fields with arguments, or costly ones, are callables that
graphql-core calls with `info` and the arguments), and connections paginate as GitHub does.

Logins differ by API (research file "GitHub review threads (GraphQL)"): the REST
`github-actions[bot]` is the `Bot` `github-actions` here. `resolvedBy` is a `User`, so a thread
an app resolved has `resolvedBy: null`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLError, GraphQLResolveInfo

from reviewer.testing._gh_objects import JsonObject, node_id
from reviewer.testing._gh_reactions import CONTENTS, REVIEW_COMMENT
from reviewer.testing._gh_state import ReviewComment
from reviewer.testing._gh_store import PullRequestStore
from reviewer.testing._gh_threads import Thread

MAX_PAGE = 100  # docs.github.com/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api
INTEGRATION = "Resource not accessible by integration"


@dataclass(frozen=True)
class Viewer:
    """Who the token is, and what it may do (the context of every resolver)."""

    store: PullRequestStore
    login: str  # the REST login, e.g. github-actions[bot]
    read_only: bool

    @property
    def can_resolve(self) -> bool:
        return not self.read_only and self.store.access.token_may("contents", "write")

    @property
    def can_reply(self) -> bool:
        return not self.read_only and self.store.access.token_may("pull_requests", "write")


def github_error(kind: str, message: str, **extensions: Any) -> GraphQLError:
    """An error as GitHub words it: `type` (NOT_FOUND, FORBIDDEN, ...) beside `message`."""
    return GraphQLError(message, extensions={"type": kind, **extensions})


def forbidden(viewer: Viewer) -> GraphQLError:
    # GitHub's own shape (letta-ai/letta-code#2201): type FORBIDDEN, extensions.saml_failure.
    who = "integration" if viewer.login.endswith("[bot]") else "personal access token"
    return github_error("FORBIDDEN", f"Resource not accessible by {who}", saml_failure=False)


def node_not_found(global_id: str) -> GraphQLError:
    return github_error(
        "NOT_FOUND", f"Could not resolve to a node with the global id of '{global_id}'"
    )


def decode_node_id(global_id: str) -> tuple[str, int] | None:
    """The type and database id inside a legacy global id ("<len>:<Type><id>", base64)."""
    try:
        raw = base64.b64decode(global_id, validate=True).decode("ascii")
        size, _, rest = raw.partition(":")
        kind, number = rest[: int(size)], int(rest[int(size) :])
    except (ValueError, UnicodeDecodeError):
        return None
    return kind, number


# -- connections ---------------------------------------------------------------------------


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _index(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    try:
        text = base64.b64decode(cursor, validate=True).decode("ascii")
        return int(text.removeprefix("cursor:v2:"))
    except ValueError:
        raise github_error(
            "INVALID_CURSOR_ARGUMENTS", f"`{cursor}` does not appear to be a valid cursor."
        ) from None


def connection(
    items: list[Any],
    args: dict[str, Any],
    name: str,
    edge_extra: Callable[[int], JsonObject] | None = None,
) -> JsonObject:
    """A page of `items` as GitHub answers a connection: `first` or `last` required, at most
    100 (docs: "Clients must supply a first or last argument on any connection. Values of first
    and last must be within 1-100.")."""
    first, last = args.get("first"), args.get("last")
    if first is None and last is None:
        raise github_error(
            "MISSING_PAGINATION_BOUNDARIES",
            f"You must provide a `first` or `last` value to properly paginate the `{name}` "
            "connection.",
        )
    for word, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= MAX_PAGE:
            raise github_error(
                "EXCESSIVE_PAGINATION",
                f"Requesting {value} records on the `{name}` connection exceeds the `{word}` "
                f"limit of {MAX_PAGE} records.",
            )
    after, before = _index(args.get("after")), _index(args.get("before"))
    start = (after + 1 if after is not None else 0) + (args.get("skip") or 0)
    end = before if before is not None else len(items)
    if first is not None:
        end = min(end, start + first)
    if last is not None:
        start = max(start, end - last)
    indexes = range(start, max(start, end))
    edges = [
        {"cursor": _cursor(i), "node": items[i], **(edge_extra(i) if edge_extra else {})}
        for i in indexes
    ]
    return {
        "edges": edges,
        "nodes": [items[i] for i in indexes],
        "pageInfo": {
            "startCursor": _cursor(indexes[0]) if indexes else None,
            "endCursor": _cursor(indexes[-1]) if indexes else None,
            "hasNextPage": max(start, end) < len(items),
            "hasPreviousPage": start > 0,
        },
        "totalCount": len(items),
    }


# -- objects -------------------------------------------------------------------------------


def actor(viewer: Viewer, login: str) -> JsonObject:
    site = viewer.store.site
    rest = site.user(login)
    bot = login.endswith("[bot]")
    name = login.removesuffix("[bot]")
    path = f"/apps/{name}" if bot else f"/{login}"
    data: JsonObject = {
        "__typename": "Bot" if bot else "User",
        "id": rest["node_id"],
        "databaseId": rest["id"],
        "login": name,
        "url": f"{site.web}{path}",
        "resourcePath": path,
        "avatarUrl": rest["avatar_url"],
    }
    if not bot:
        data["name"] = None
    return data


def repository(viewer: Viewer) -> JsonObject:
    site = viewer.store.site
    return {
        "__typename": "Repository",
        "id": node_id("Repository", site.repo_id),
        "databaseId": site.repo_id,
        "name": site.name,
        "nameWithOwner": site.full_name,
        "url": site.repo_web,
        "pullRequest": lambda info, number: _pull_or_error(viewer, number),
    }


def _pull_or_error(viewer: Viewer, number: int) -> JsonObject:
    if number != viewer.store.info.number:
        raise github_error(
            "NOT_FOUND", f"Could not resolve to a PullRequest with the number of {number}."
        )
    return pull_request(viewer)


def pull_request(viewer: Viewer) -> JsonObject:
    store = viewer.store
    database_id = store.site.repo_id * 1000 + store.info.number

    def threads(info: GraphQLResolveInfo, **args: Any) -> JsonObject:
        items = [thread(viewer, t) for t in store.review_threads()]
        return connection(items, args, "reviewThreads")

    return {
        "__typename": "PullRequest",
        "id": node_id("PullRequest", database_id),
        "databaseId": database_id,
        "number": store.info.number,
        "title": store.info.title,
        "url": f"{store.site.repo_web}/pull/{store.info.number}",
        "baseRefOid": store.info.base_sha,
        "headRefOid": store.head_sha,
        "reviewThreads": threads,
    }


def thread(viewer: Viewer, item: Thread) -> JsonObject:
    store, root, state = viewer.store, item.root, item.state
    line, start_line, _ = store.anchor_now(root)
    resolver = state.resolved_by
    return {
        "__typename": "PullRequestReviewThread",
        "id": item.node_id,
        "comments": lambda info, **args: connection(
            [comment(viewer, c) for c in item.comments], args, "comments"
        ),
        "diffSide": root.side or "RIGHT",
        "isCollapsed": state.is_resolved,
        "isOutdated": store.thread_outdated(item),
        "isResolved": state.is_resolved,
        "line": line,
        "originalLine": root.line,
        "originalStartLine": root.start_line,
        "path": root.path,
        "pullRequest": lambda info: pull_request(viewer),
        # `resolvedBy` is a User: an app that resolved the thread leaves it null.
        "resolvedBy": actor(viewer, resolver)
        if resolver and not resolver.endswith("[bot]")
        else None,
        "startDiffSide": root.start_side,
        "startLine": start_line,
        "subjectType": "FILE" if root.subject_type == "file" else "LINE",
        "viewerCanReply": viewer.can_reply,
        "viewerCanResolve": viewer.can_resolve and not state.is_resolved,
        "viewerCanUnresolve": viewer.can_resolve and state.is_resolved,
    }


def comment(viewer: Viewer, item: ReviewComment) -> JsonObject:
    store = viewer.store
    line, start_line, _ = store.anchor_now(item)
    parent = next((c for c in store.review_comments if c.id == item.in_reply_to_id), None)
    return {
        "__typename": "PullRequestReviewComment",
        "id": node_id("PullRequestReviewComment", item.id),
        "databaseId": item.id,
        "fullDatabaseId": str(item.id),
        "author": actor(viewer, item.user),
        "body": item.body,
        "createdAt": item.created_at,
        "updatedAt": item.updated_at,
        "lastEditedAt": item.updated_at if item.updated_at != item.created_at else None,
        "diffHunk": item.diff_hunk,
        "line": line,
        "originalLine": item.line,
        "originalStartLine": item.start_line,
        "startLine": start_line,
        "outdated": item.subject_type == "line" and line is None,
        "path": item.path,
        "pullRequest": lambda info: pull_request(viewer),
        "reactionGroups": lambda info: reaction_groups(viewer, REVIEW_COMMENT, item.id),
        "replyTo": lambda info: comment(viewer, parent) if parent is not None else None,
        "subjectType": "FILE" if item.subject_type == "file" else "LINE",
        "url": f"{store.site.repo_web}/pull/{store.info.number}#discussion_r{item.id}",
        "viewerDidAuthor": item.user == viewer.login,
    }


def reaction_groups(viewer: Viewer, kind: str, comment_id: int) -> list[JsonObject]:
    """One group per content, in GitHub's order, empty ones included."""
    reactions = viewer.store.reactions.on(kind, comment_id)
    groups = []
    for rest_name, content in CONTENTS.items():
        mine = [r for r in reactions if r.content == rest_name]
        people = [r for r in mine if not r.user.endswith("[bot]")]

        def reactors(info: GraphQLResolveInfo, mine: list[Any] = mine, **args: Any) -> JsonObject:
            actors = [actor(viewer, r.user) for r in mine]
            return connection(actors, args, "reactors", lambda i: {"reactedAt": mine[i].created_at})

        def users(info: GraphQLResolveInfo, people: list[Any] = people, **args: Any) -> JsonObject:
            actors = [actor(viewer, r.user) for r in people]
            return connection(actors, args, "users", lambda i: {"reactedAt": people[i].created_at})

        groups.append(
            {
                "content": content,
                "createdAt": mine[0].created_at if mine else None,
                "viewerHasReacted": any(r.user == viewer.login for r in mine),
                "reactors": reactors,
                "users": users,
            }
        )
    return groups


def node(viewer: Viewer, global_id: str) -> JsonObject:
    """`Query.node(id)` for the kinds of node the fake keeps."""
    store = viewer.store
    decoded = decode_node_id(global_id)
    kind, number = decoded if decoded is not None else ("", 0)
    if kind == "PullRequestReviewThread":
        found = next((t for t in store.review_threads() if t.root.id == number), None)
        if found is not None:
            return thread(viewer, found)
    elif kind == "PullRequestReviewComment":
        item = next((c for c in store.visible_comments() if c.id == number), None)
        if item is not None:
            return comment(viewer, item)
    elif kind == "PullRequest" and number == store.site.repo_id * 1000 + store.info.number:
        return pull_request(viewer)
    elif kind == "Repository" and number == store.site.repo_id:
        return repository(viewer)
    raise node_not_found(global_id)
