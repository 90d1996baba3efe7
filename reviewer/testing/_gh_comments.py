"""Comment endpoints of the fake GitHub: single review comments and issue comments.

Issue comments carry the bot's summary (found again by a hidden marker and edited in place),
so the limits that bite there are reproduced: 65536 characters, and no editing someone else's
comment with an Actions token.
"""

from __future__ import annotations

import re
from typing import Any

from reviewer.testing._gh_objects import (
    GitHubError,
    error_body,
    invalid_request,
    json_answer,
    not_found,
    ruby_repr,
    timestamp,
    validation_failed,
)
from reviewer.testing._gh_reviews import (
    MAX_BODY,
    TOO_LONG,
    Anchor,
    check_comment_schema,
    resolve_single_comment,
)
from reviewer.testing._gh_state import render_issue
from reviewer.testing._gh_store import ApiRequest, PullRequestStore, created, page
from reviewer.testing._llm_wire import Answer

INTEGRATION = "Resource not accessible by integration"
RESOURCE = "PullRequestReviewComment"


# -- review comments -----------------------------------------------------------------------


def list_comments(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return page([store.comment_json(c) for c in store.visible_comments()], request)


def create_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    payload = request.body
    if not isinstance(payload, dict) or not isinstance(payload.get("body"), str):
        raise invalid_request('"body" wasn\'t supplied.', doc)
    if payload.get("in_reply_to") is not None:
        return _reply(store, payload["in_reply_to"], payload["body"], request.user, doc)
    commit = payload.get("commit_id")
    if not isinstance(commit, str):
        raise invalid_request(
            f"For 'properties/commit_id', {ruby_repr(commit)} is not a string.", doc
        )
    check_comment_schema(payload, doc)
    if commit not in store.pr_commits:
        message = "commit_id is not part of the pull request"
        raise validation_failed(RESOURCE, "commit_id", "custom", doc, message)
    if len(payload["body"]) > MAX_BODY:
        raise validation_failed(RESOURCE, "body", "custom", doc, TOO_LONG)
    diff = store.diff_for(commit)
    if payload.get("subject_type") == "file":
        entry = diff.file(payload["path"])
        if entry is None:
            field = "pull_request_review_thread.path"
            raise validation_failed(RESOURCE, field, "custom", doc, "could not be resolved")
        anchor = Anchor(entry.filename, payload["body"], 0, "RIGHT", None, None, 0, "")
        subject = "file"
    else:
        anchor = resolve_single_comment(diff, payload)
        subject = "line"
    # A lone comment is stored by GitHub as a review of its own, with an empty body.
    review = store.new_review(request.user, "", "COMMENTED", commit)
    return created(store.comment_json(store.store_comment(review, commit, anchor, subject)))


def reply_to_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    """`POST .../pulls/{n}/comments/{id}/replies` (PyGithub's `create_review_comment_reply`)."""
    body = _new_body(request.body, RESOURCE, doc)
    return _reply(store, int(match["id"]), body, request.user, doc)


def _reply(store: PullRequestStore, reply_to: Any, body: str, user: str, doc: str) -> Answer:
    parent = next((c for c in store.review_comments if c.id == reply_to), None)
    if parent is None:
        raise not_found(doc)
    return created(store.comment_json(store.add_reply(parent, body, user)))


def get_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return json_answer(200, store.comment_json(store.comment(match, doc)))


def edit_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    comment = store.comment(match, doc)
    _check_author(comment.user, request.user, doc)
    comment.body = _new_body(request.body, RESOURCE, doc)
    comment.updated_at = timestamp()
    return json_answer(200, store.comment_json(comment))


def delete_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    comment = store.comment(match, doc)
    _check_author(comment.user, request.user, doc)
    store.review_comments.remove(comment)
    return _no_content()


# -- issue comments ------------------------------------------------------------------------


def get_issue(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    """The pull request as an issue (it is one, with a `pull_request` key), or an issue."""
    number = int(match["n"])
    if number == store.info.number:
        return json_answer(200, render_issue(store.site, store.info, len(store.issue_comments)))
    issue = store.issues.get((store.site.full_name.lower(), number))
    if issue is None:
        raise not_found(doc)
    return json_answer(200, issue)


def list_issue_comments(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return page([store.issue_comment_json(c) for c in store.issue_comments], request)


def create_issue_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    body = _new_body(request.body, "IssueComment", doc)
    return created(store.issue_comment_json(store.add_issue_comment(body, user=request.user)))


def get_issue_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return json_answer(200, store.issue_comment_json(store.issue_comment(match, doc)))


def edit_issue_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    comment = store.issue_comment(match, doc)
    _check_author(comment.user, request.user, doc)
    comment.body = _new_body(request.body, "IssueComment", doc)
    comment.updated_at = timestamp()
    return json_answer(200, store.issue_comment_json(comment))


def delete_issue_comment(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    comment = store.issue_comment(match, doc)
    _check_author(comment.user, request.user, doc)
    store.issue_comments.remove(comment)
    return _no_content()


# -- helpers -------------------------------------------------------------------------------


def _new_body(payload: Any, resource: str, doc: str) -> str:
    if not isinstance(payload, dict) or "body" not in payload:
        raise invalid_request('"body" wasn\'t supplied.', doc)
    body = payload["body"]
    if not isinstance(body, str):
        raise invalid_request(f"For 'properties/body', {ruby_repr(body)} is not a string.", doc)
    if not body.strip():
        raise validation_failed(resource, "body", "missing_field", doc)
    if len(body) > MAX_BODY:
        raise validation_failed(resource, "body", "custom", doc, TOO_LONG)
    return body


def _check_author(author: str, user: str, doc: str) -> None:
    # Someone else's comment: an Actions token may not touch it.
    if author != user:
        raise GitHubError(403, error_body(403, INTEGRATION, doc))


def _no_content() -> Answer:
    return Answer(204, b"", content_type="application/octet-stream")
