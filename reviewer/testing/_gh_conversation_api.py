"""REST endpoints of the fake GitHub around the conversation: reactions on comments, and a
person's permission on the repository.

- `GET`/`POST /repos/{o}/{r}/pulls/comments/{id}/reactions` and `.../issues/comments/{id}/
  reactions` (docs.github.com/rest/reactions/reactions): a list, and a new reaction (201) or
  the one the user already had with that content (200);
- `GET /repos/{o}/{r}/collaborators/{login}/permission` (docs.github.com/rest/collaborators/
  collaborators#get-repository-permissions-for-a-user): `permission` (admin, write, read,
  none), `role_name`, `user`.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from reviewer.testing._gh_objects import json_answer
from reviewer.testing._gh_reactions import (
    ISSUE_COMMENT,
    REVIEW_COMMENT,
    check_content,
    render_reaction,
)
from reviewer.testing._gh_store import ApiRequest, PullRequestStore, page
from reviewer.testing._llm_wire import Answer


def _list(store: PullRequestStore, kind: str, request: ApiRequest, comment_id: int) -> Answer:
    reactions = store.reactions.on(kind, comment_id)
    wanted = request.query.get("content")
    if wanted is not None:
        reactions = [r for r in reactions if r.content == wanted]
    return page([render_reaction(store.site, r) for r in reactions], request)


def _create(
    store: PullRequestStore, kind: str, request: ApiRequest, comment_id: int, doc: str
) -> Answer:
    content = check_content(request.body, doc)
    reaction, new = store.reactions.add(kind, comment_id, request.user, content)
    return json_answer(201 if new else 200, render_reaction(store.site, reaction))


def list_review_comment_reactions(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return _list(store, REVIEW_COMMENT, request, store.comment(match, doc).id)


def create_review_comment_reaction(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return _create(store, REVIEW_COMMENT, request, store.comment(match, doc).id, doc)


def list_issue_comment_reactions(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return _list(store, ISSUE_COMMENT, request, store.issue_comment(match, doc).id)


def create_issue_comment_reaction(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    return _create(store, ISSUE_COMMENT, request, store.issue_comment(match, doc).id, doc)


def get_permission(
    store: PullRequestStore, match: re.Match[str], request: ApiRequest, doc: str
) -> Answer:
    login = unquote(match["login"])
    return json_answer(200, store.access.permission_json(store.site, login))
