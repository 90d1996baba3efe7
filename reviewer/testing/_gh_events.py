"""The comment events GitHub sends an Actions run (the file at GITHUB_EVENT_PATH), made from a
comment the fake GitHub holds.

Research file "Events (GitHub Actions)": `pull_request_review_comment` (created, edited,
deleted) has `comment` (with `id`, `body`, `user`, `in_reply_to_id`, `path`, `line`),
`pull_request`, `repository`, `sender`; `issue_comment` has `comment`, `issue` (a pull
request's issue carries `issue.pull_request`), `repository`, `sender`, and no `pull_request`.
An `edited` event says what changed: `changes.body.from`.
"""

from __future__ import annotations

from reviewer.testing._gh_objects import JsonObject
from reviewer.testing._gh_state import render_issue
from reviewer.testing._gh_store import PullRequestStore

ACTIONS = ("created", "edited", "deleted")


def _check(action: str) -> None:
    if action not in ACTIONS:
        raise ValueError(f"comment event action {action!r} is not one of {ACTIONS}")


def _common(store: PullRequestStore, action: str, sender: str, old_body: str | None) -> JsonObject:
    site = store.site
    payload: JsonObject = {"action": action}
    if action == "edited":
        payload["changes"] = {"body": {"from": old_body or ""}}
    payload["repository"] = site.repository(
        site.owner, site.name, fork=False, default_branch=store.info.base_ref
    )
    payload["sender"] = site.user(sender)
    return payload


def review_comment_event(
    store: PullRequestStore,
    comment: JsonObject,
    action: str,
    sender: str | None,
    old_body: str | None,
) -> JsonObject:
    _check(action)
    with store.lock:
        payload = _common(store, action, sender or comment["user"]["login"], old_body)
        # `in_reply_to_id` only on replies, as in REST (octokit/webhooks marks it optional).
        pull = store.pull_json()
        payload = {"action": action, "comment": dict(comment), "pull_request": pull, **payload}
    return payload


def issue_comment_event(
    store: PullRequestStore,
    comment: JsonObject,
    action: str,
    sender: str | None,
    old_body: str | None,
) -> JsonObject:
    _check(action)
    with store.lock:
        issue = render_issue(store.site, store.info, len(store.issue_comments))
        payload = _common(store, action, sender or comment["user"]["login"], old_body)
        payload = {"action": action, "issue": issue, "comment": dict(comment), **payload}
    return payload
