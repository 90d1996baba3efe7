"""The pull request's review threads, over GitHub's GraphQL API (REST has no threads): read
them all in one paginated query, and resolve one.

Resolving needs the token's `contents: write`, not `pull-requests: write` (github/gh-aw#35726;
GitHub community discussion 44650); `viewerCanResolve` says so in advance, and a FORBIDDEN
answer is taken the same way: the thread stays open.
"""

from __future__ import annotations

from typing import Any

from reviewer.forge.interface import THUMBS_DOWN, ReviewThread, ThreadComment
from reviewer.github.client import GitHubClient, GraphQLForbidden

# GraphQL names the reaction the core calls THUMBS_DOWN (`-1` in REST) THUMBS_DOWN.
THUMBS_DOWN_GRAPHQL = "THUMBS_DOWN"

# `first` is required on every connection, at most 100 (GitHub's GraphQL limits).
THREADS_QUERY = """
query Threads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        nodes {
          id isResolved isOutdated resolvedBy { login } viewerCanResolve
          comments(first: 100) {
            nodes {
              databaseId author { login } body
              reactionGroups {
                content
                reactors(first: 100) { nodes { ... on User { login } ... on Bot { login } } }
              }
            }
          }
        }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""
RESOLVE_MUTATION = """
mutation Resolve($id: ID!) {
  resolveReviewThread(input: {threadId: $id}) { thread { id isResolved } }
}
"""
# More pages than any pull request has threads: a bound, so a confused server cannot loop us.
_MAX_PAGES = 50


def review_threads(client: GitHubClient, number: int) -> list[ReviewThread]:
    """Every review thread of pull request `number`, root comment first."""
    owner, _, name = client.repository.partition("/")
    threads: list[ReviewThread] = []
    after: str | None = None
    for _ in range(_MAX_PAGES):
        data = client.graphql(
            THREADS_QUERY,
            {"owner": owner, "name": name, "number": number, "after": after},
            "read the PR's review threads",
        )
        page = ((data.get("repository") or {}).get("pullRequest") or {}).get("reviewThreads")
        if not page:
            break
        threads += [_thread(node) for node in page.get("nodes") or [] if node]
        info = page.get("pageInfo") or {}
        if not info.get("hasNextPage"):
            break
        after = info.get("endCursor")
    return threads


def resolve_thread(client: GitHubClient, thread_id: str) -> bool:
    """Resolve a thread; False when the token may not (FORBIDDEN)."""
    try:
        data = client.graphql(RESOLVE_MUTATION, {"id": thread_id}, "resolve a review thread")
    except GraphQLForbidden as exc:
        client.log(str(exc))
        return False
    thread = (data.get("resolveReviewThread") or {}).get("thread") or {}
    return bool(thread.get("isResolved"))


def _thread(node: dict[str, Any]) -> ReviewThread:
    comments = tuple(
        _comment(item) for item in (node.get("comments") or {}).get("nodes") or [] if item
    )
    return ReviewThread(
        id=str(node["id"]),
        # Replies go through REST, to the root comment's id.
        reply_to=str(comments[0].id) if comments else "",
        is_resolved=bool(node.get("isResolved")),
        resolved_by=_login(node.get("resolvedBy")),
        viewer_can_resolve=bool(node.get("viewerCanResolve")),
        comments=comments,
        is_outdated=bool(node.get("isOutdated")),
    )


def _comment(item: dict[str, Any]) -> ThreadComment:
    reactions: dict[str, tuple[str, ...]] = {}
    for group in item.get("reactionGroups") or []:
        content = THUMBS_DOWN if group.get("content") == THUMBS_DOWN_GRAPHQL else group["content"]
        nodes = (group.get("reactors") or {}).get("nodes") or []
        logins = tuple(login for node in nodes if (login := _login(node)))
        if logins:
            reactions[content] = logins
    return ThreadComment(
        id=int(item.get("databaseId") or 0),
        author=_login(item.get("author")) or "",
        body=str(item.get("body") or ""),
        reactions=reactions,
    )


def _login(actor: Any) -> str | None:
    login = actor.get("login") if isinstance(actor, dict) else None
    return str(login) if login else None
