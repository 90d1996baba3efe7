"""How GitHub checks a `POST .../pulls/{n}/reviews` (and a single review comment) before storing.

The anchor rules are the ones that make real bots fail in production: a path not in the pull
request, a line outside every hunk on its side, a range whose start is not before its end or
lies in another hunk. GitHub answers all of these with one 422 that does not say which comment
was wrong, and stores nothing; `resolve_comment` reproduces that, with the real messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.testing._gh_diff import PullDiff
from reviewer.testing._gh_objects import (
    DOC,
    GitHubError,
    JsonObject,
    invalid_request,
    ruby_repr,
    unprocessable,
    validation_failed,
)

EVENTS = ("APPROVE", "REQUEST_CHANGES", "COMMENT")
SIDES = ("LEFT", "RIGHT")
MAX_BODY = 65536
PATH_UNRESOLVED = "Path could not be resolved"
LINE_UNRESOLVED = "Line could not be resolved"
START_PRECEDES = "Pull request review thread start line must precede the end line."
SAME_HUNK = "Pull request review thread start line must be part of the same hunk as the line."
ACTIONS_APPROVE = "GitHub Actions is not permitted to approve pull requests."
OWN_APPROVE = "Can not approve your own pull request"
OWN_REQUEST_CHANGES = "Can not request changes on your own pull request"
REQUEST_CHANGES_BLANK = "You need to leave a comment indicating the requested changes."
BODY_BLANK = "Body can't be blank"  # approximate: GitHub's text for an empty COMMENT review
ONE_PENDING = "User can only have one pending review per pull request"
COMMIT_NOT_IN_PR = "The commitOID is not part of the pull request"
TOO_LONG = "body is too long (maximum is 65536 characters)"


@dataclass(frozen=True)
class Anchor:
    """A review comment that GitHub accepted, where it ended up."""

    path: str
    body: str
    line: int
    side: str
    start_line: int | None
    start_side: str | None
    position: int
    diff_hunk: str


def check_review_schema(payload: Any, doc: str = DOC["create_review"]) -> JsonObject:
    """The JSON-schema stage: wrong types are refused before anything is looked up."""
    if not isinstance(payload, dict):
        raise invalid_request(f"{ruby_repr(payload)} is not an object.", doc)
    for name in ("body", "commit_id", "event"):
        if name in payload and not isinstance(payload[name], str):
            raise invalid_request(
                f"For 'properties/{name}', {ruby_repr(payload[name])} is not a string.", doc
            )
    if "event" in payload and payload["event"] not in EVENTS:
        raise invalid_request(_not_one_of("event", payload["event"], EVENTS), doc)
    comments = payload.get("comments", [])
    if not isinstance(comments, list):
        raise invalid_request(
            f"For 'properties/comments', {ruby_repr(comments)} is not an array.", doc
        )
    for item in comments:
        check_comment_schema(item, doc)
    return payload


def check_comment_schema(item: Any, doc: str) -> None:
    if not isinstance(item, dict):
        raise invalid_request(f"For 'items', {ruby_repr(item)} is not an object.", doc)
    for name in ("path", "body"):
        if name not in item:
            raise invalid_request(f'"{name}" wasn\'t supplied.', doc)
        if not isinstance(item[name], str):
            raise invalid_request(
                f"For 'properties/{name}', {ruby_repr(item[name])} is not a string.", doc
            )
    for name in ("line", "start_line", "position"):
        value = item.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise invalid_request(
                f"For 'properties/{name}', {ruby_repr(value)} is not an integer.", doc
            )
    for name in ("side", "start_side"):
        if item.get(name) is not None and item[name] not in SIDES:
            raise invalid_request(_not_one_of(name, item[name], SIDES), doc)


def _not_one_of(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    options = ", ".join(f'"{a}"' for a in allowed)
    return f"For 'properties/{name}', {ruby_repr(value)} is not one of [{options}]."


def check_review_event(
    payload: JsonObject, *, user: str, author: str, actions_may_approve: bool, has_pending: bool
) -> str:
    """The review's state once created, or GitHub's refusal of its event."""
    event = payload.get("event")
    body = payload.get("body") or ""
    if event == "APPROVE":
        if user == author:
            raise unprocessable(OWN_APPROVE)
        if user == "github-actions[bot]" and not actions_may_approve:
            raise unprocessable(ACTIONS_APPROVE)
    if event == "REQUEST_CHANGES" and user == author:
        raise unprocessable(OWN_REQUEST_CHANGES)
    if not body.strip() and not payload.get("comments"):
        if event == "REQUEST_CHANGES":
            raise unprocessable(REQUEST_CHANGES_BLANK)
        if event == "COMMENT":
            raise unprocessable(BODY_BLANK)
    if len(body) > MAX_BODY:
        raise unprocessable(TOO_LONG[0].upper() + TOO_LONG[1:])
    if has_pending:  # a leftover draft blocks submitted reviews too
        raise unprocessable(ONE_PENDING)
    if event is None:
        return "PENDING"
    return {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}.get(event, "COMMENTED")


def resolve_comment(diff: PullDiff, item: JsonObject) -> Anchor:
    """Where one review comment goes in `diff`, or the 422 GitHub sends for the whole review."""
    entry = diff.file(item["path"])
    if entry is None:
        raise unprocessable(PATH_UNRESOLVED)
    if len(item["body"]) > MAX_BODY:
        raise unprocessable(TOO_LONG[0].upper() + TOO_LONG[1:])
    line, start_line = item.get("line"), item.get("start_line")
    if line is None and item.get("position") is not None:
        # The deprecated form: an offset in the file's patch, side implied by the line's kind.
        end = entry.at_position(item["position"])
        if end is None:
            raise unprocessable(LINE_UNRESOLVED)
        side = "LEFT" if end.kind == "-" else "RIGHT"
        number = end.old if side == "LEFT" else end.new
        assert number is not None
        return Anchor(
            entry.filename,
            item["body"],
            number,
            side,
            None,
            None,
            end.position,
            entry.hunk_text(end),
        )
    if line is None:
        raise unprocessable(LINE_UNRESOLVED)
    side = item.get("side") or "RIGHT"
    start_side = (item.get("start_side") or side) if start_line is not None else None
    if start_line is not None and start_side == side and start_line >= line:
        raise unprocessable(START_PRECEDES)
    end = entry.locate(side, line)
    if end is None:
        raise unprocessable(LINE_UNRESOLVED)
    if start_line is not None:
        assert start_side is not None
        start = entry.locate(start_side, start_line)
        if start is None or start.hunk != end.hunk:
            raise unprocessable(SAME_HUNK)
        if start.position >= end.position:
            raise unprocessable(START_PRECEDES)
    return Anchor(
        entry.filename,
        item["body"],
        line,
        side,
        start_line,
        start_side,
        end.position,
        entry.hunk_text(end),
    )


def resolve_single_comment(diff: PullDiff, item: JsonObject) -> Anchor:
    """`POST .../pulls/{n}/comments`: the same rules, answered in the "Validation Failed" form."""
    doc = DOC["create_review_comment"]
    try:
        return resolve_comment(diff, item)
    except GitHubError as error:
        reason = error.body.get("errors", [""])[0]
        field = "path" if reason == PATH_UNRESOLVED else "line"
        if reason in (START_PRECEDES, SAME_HUNK):
            field = "start_line"
        raise validation_failed(
            "PullRequestReviewComment",
            f"pull_request_review_thread.{field}",
            "custom",
            doc,
            "could not be resolved",
        ) from None
