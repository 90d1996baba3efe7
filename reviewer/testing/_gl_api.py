"""The fake GitLab's REST API v4 routes: what a merge request review calls, errors included.

Each handler gets the store (under its lock), the route's match and the request, and returns
an `Answer`. GitLab's error bodies: `{"message": "404 Not found"}`-style for resources and
permissions, `{"error": "body is missing"}` for Grape's parameter checks
(docs.gitlab.com/api/rest/troubleshooting/#status-codes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlencode

from reviewer.testing._gl_positions import Refusal, check_position
from reviewer.testing._gl_store import JsonObject, MergeRequestStore, Note
from reviewer.testing._llm_wire import Answer, json_answer

DEVELOPER = 30
_TOO_LONG = '{:note=>["is too long (maximum is 1000000 characters)"]}'


@dataclass(frozen=True)
class ApiRequest:
    method: str
    path: str  # after /api/v4, still percent-encoded
    query: dict[str, str]
    body: Any
    user: str | None  # the token's user; None without a token
    url: str  # the absolute URL of /api/v4, for Link headers


def error(status: int, message: str) -> Answer:
    return json_answer(status, {"message": message})


def page(items: list[JsonObject], request: ApiRequest) -> Answer:
    """GitLab's offset pagination (docs.gitlab.com/api/rest/#pagination): `page`, `per_page`
    (20 by default, 100 at most), `x-page`, `x-per-page`, `x-total`, `x-total-pages`,
    `x-next-page`, `x-prev-page` and a `Link` header with next, prev, first and last."""
    try:
        per_page = min(max(int(request.query.get("per_page", "20")), 1), 100)
        number = max(int(request.query.get("page", "1")), 1)
    except ValueError:
        per_page, number = 20, 1
    total = len(items)
    pages = max((total + per_page - 1) // per_page, 1)
    chosen = items[(number - 1) * per_page : number * per_page]

    def link(to: int) -> str:
        query = {**request.query, "page": str(to), "per_page": str(per_page)}
        return f"{request.url}{request.path}?{urlencode(query)}"

    links = [(1, "first"), (pages, "last")]
    if number < pages:
        links.insert(0, (number + 1, "next"))
    if number > 1:
        links.insert(0, (number - 1, "prev"))
    headers = {
        "x-page": str(number),
        "x-per-page": str(per_page),
        "x-total": str(total),
        "x-total-pages": str(pages),
        "x-next-page": str(number + 1) if number < pages else "",
        "x-prev-page": str(number - 1) if number > 1 else "",
        "link": ", ".join(f'<{link(to)}>; rel="{rel}"' for to, rel in links),
    }
    return json_answer(200, chosen, headers)


Handler = Callable[[MergeRequestStore, re.Match[str], ApiRequest], Answer]
_MR = r"/projects/(?P<project>[^/]+)/merge_requests/(?P<iid>\d+)"


def get_user(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    assert request.user is not None  # the dispatcher answers 401 first
    return json_answer(200, store.current_user_json(request.user))


def get_project(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    return json_answer(200, store.project_json())


def get_member(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    """docs.gitlab.com/api/members/#get-a-member-of-a-group-or-project-including-inherited-and-invited-members"""
    user = store.user_by_id(int(match["user_id"]))
    if user is None or user.username not in store.members:
        return error(404, "404 Not found")
    return json_answer(200, store.member_json(user.username))


def get_merge_request(
    store: MergeRequestStore, match: re.Match[str], request: ApiRequest
) -> Answer:
    return json_answer(200, store.merge_request_json())


def get_changes(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    return json_answer(200, {**store.merge_request_json(), "changes": store.diff_files_json()})


def list_diffs(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    return page(store.diff_files_json(), request)


def list_versions(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    # Newest first (docs.gitlab.com/api/merge_requests/#get-merge-request-diff-versions).
    return page([store.version_json(v) for v in reversed(store.versions)], request)


def get_version(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    version = next((v for v in store.versions if v.id == int(match["version"])), None)
    if version is None:
        return error(404, "404 Not found")
    data = store.version_json(version)
    return json_answer(200, {**data, "diffs": store.diff_files_json(version)})


def list_discussions(
    store: MergeRequestStore, match: re.Match[str], request: ApiRequest
) -> Answer:
    return page([store.discussion_json(d) for d in store.discussions], request)


def get_discussion(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    discussion = store.discussion(match["discussion"])
    if discussion is None:
        return error(404, "404 Discussion Not Found")
    return json_answer(200, store.discussion_json(discussion))


def _body(request: ApiRequest) -> str | Answer:
    body = request.body.get("body") if isinstance(request.body, dict) else None
    if not isinstance(body, str) or not body.strip():
        return json_answer(400, {"error": "body is missing"})
    if len(body) > 1_000_000:  # Note::MAX_NOTE_LENGTH
        return error(400, f"400 Bad request - Note {_TOO_LONG}")
    return body


def create_discussion(
    store: MergeRequestStore, match: re.Match[str], request: ApiRequest
) -> Answer:
    body = _body(request)
    if isinstance(body, Answer):
        return body
    position = request.body.get("position")
    stored = None
    if position is not None:
        checked = check_position(store, position)
        if isinstance(checked, Refusal):
            return json_answer(400, checked.body())
        stored = checked
    discussion = store.new_discussion(individual=False)
    assert request.user is not None
    store.add_note(discussion, request.user, body, stored)
    return json_answer(201, store.discussion_json(discussion))


def reply(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    discussion = store.discussion(match["discussion"])
    if discussion is None:
        return error(404, "404 Discussion Not Found")
    body = _body(request)
    if isinstance(body, Answer):
        return body
    if discussion.individual_note:  # a plain note cannot be replied to (it is not a thread)
        return error(400, "400 Bad request - Note {:discussion_id=>[\"is not valid\"]}")
    assert request.user is not None
    # A reply in a diff thread is a DiffNote at the thread's position, as on GitLab.
    note = store.add_note(discussion, request.user, body, discussion.notes[0].position)
    return json_answer(201, store.note_json(note))


def resolve(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    """PUT .../discussions/:id?resolved=true|false: Developer and above, or the MR's author
    (docs.gitlab.com/api/discussions/#resolve-a-merge-request-thread)."""
    discussion = store.discussion(match["discussion"])
    if discussion is None:
        return error(404, "404 Discussion Not Found")
    value = _field(request, "resolved")
    if value is None:
        return json_answer(400, {"error": "resolved is missing"})
    assert request.user is not None
    if store.access_level(request.user) < DEVELOPER and request.user != store.info.author:
        return error(403, "403 Forbidden")
    if discussion.individual_note:
        return error(400, "400 Bad request - Discussion is not resolvable")
    discussion.resolved_by = request.user if value else None
    return json_answer(200, store.discussion_json(discussion))


def _field(request: ApiRequest, name: str) -> bool | None:
    raw = request.body.get(name) if isinstance(request.body, dict) else None
    raw = request.query.get(name) if raw is None else raw
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return None


def list_notes(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    """Newest first by default; `sort=asc`, `order_by=created_at|updated_at`
    (docs.gitlab.com/api/notes/#list-all-merge-request-notes)."""
    notes = [n for d in store.discussions for n in d.notes]
    notes.sort(key=lambda n: n.id, reverse=request.query.get("sort", "desc") != "asc")
    return page([store.note_json(n) for n in notes], request)


def _note(store: MergeRequestStore, match: re.Match[str]) -> Note | Answer:
    note = store.note(int(match["note"]))
    return error(404, "404 Note Not Found") if note is None else note


def get_note(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    note = _note(store, match)
    return note if isinstance(note, Answer) else json_answer(200, store.note_json(note))


def create_note(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    body = _body(request)
    if isinstance(body, Answer):
        return body
    assert request.user is not None
    note = store.add_note(store.new_discussion(individual=True), request.user, body)
    return json_answer(201, store.note_json(note))


def edit_note(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    """Only the note's author may edit its body
    (docs.gitlab.com/api/notes/#modify-existing-merge-request-note)."""
    note = _note(store, match)
    if isinstance(note, Answer):
        return note
    body = _body(request)
    if isinstance(body, Answer):
        return body
    if note.author != request.user:
        return error(403, "403 Forbidden")
    note.body = body
    note.updated += 1
    return json_answer(200, store.note_json(note))


def list_awards(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    note = _note(store, match)
    if isinstance(note, Answer):
        return note
    return page([store.award_json(note, a) for a in note.awards], request)


def create_award(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    """A second identical award is refused with GitLab's 404 "has already been taken"
    (docs.gitlab.com/api/emoji_reactions/#add-a-new-emoji-reaction-to-a-comment)."""
    note = _note(store, match)
    if isinstance(note, Answer):
        return note
    name = request.body.get("name") if isinstance(request.body, dict) else None
    if not isinstance(name, str) or not name:
        return json_answer(400, {"error": "name is missing"})
    assert request.user is not None
    if any(a.name == name and a.user == request.user for a in note.awards):
        return error(404, "404 Award Emoji Name has already been taken")
    award = store.add_award(note, name, request.user)
    return json_answer(201, store.award_json(note, award))


def get_issue(store: MergeRequestStore, match: re.Match[str], request: ApiRequest) -> Answer:
    """docs.gitlab.com/api/issues/#single-project-issue: by its iid; "404 Not found" for
    an iid the project has no issue of (a merge request's iid is not an issue's)."""
    issue = store.issues.get(int(match["issue_iid"]))
    if issue is None:
        return error(404, "404 Not found")
    return json_answer(200, store.issue_json(issue))


# (method, pattern after /api/v4, handler, writes)
ROUTES: list[tuple[str, re.Pattern[str], Handler, bool]] = [
    (method, re.compile(pattern + r"\Z"), handler, method != "GET")
    for method, pattern, handler in [
        ("GET", r"/user", get_user),
        ("GET", r"/projects/(?P<project>[^/]+)", get_project),
        ("GET", r"/projects/(?P<project>[^/]+)/members/all/(?P<user_id>\d+)", get_member),
        ("GET", r"/projects/(?P<project>[^/]+)/issues/(?P<issue_iid>\d+)", get_issue),
        ("GET", _MR, get_merge_request),
        ("GET", _MR + r"/changes", get_changes),
        ("GET", _MR + r"/diffs", list_diffs),
        ("GET", _MR + r"/versions", list_versions),
        ("GET", _MR + r"/versions/(?P<version>\d+)", get_version),
        ("GET", _MR + r"/discussions", list_discussions),
        ("POST", _MR + r"/discussions", create_discussion),
        ("GET", _MR + r"/discussions/(?P<discussion>[0-9a-f]{40})", get_discussion),
        ("PUT", _MR + r"/discussions/(?P<discussion>[0-9a-f]{40})", resolve),
        ("POST", _MR + r"/discussions/(?P<discussion>[0-9a-f]{40})/notes", reply),
        ("GET", _MR + r"/notes", list_notes),
        ("POST", _MR + r"/notes", create_note),
        ("GET", _MR + r"/notes/(?P<note>\d+)", get_note),
        ("PUT", _MR + r"/notes/(?P<note>\d+)", edit_note),
        ("PUT", _MR + r"/discussions/(?P<discussion>[0-9a-f]{40})/notes/(?P<note>\d+)",
         edit_note),
        ("GET", _MR + r"/notes/(?P<note>\d+)/award_emoji", list_awards),
        ("POST", _MR + r"/notes/(?P<note>\d+)/award_emoji", create_award),
    ]
]


def project_matches(store: MergeRequestStore, raw: str) -> bool:
    """`:id` is the numeric id or the URL-encoded path
    (docs.gitlab.com/api/rest/#namespaced-paths)."""
    return raw == str(store.info.id) or unquote(raw) == store.info.path_with_namespace
