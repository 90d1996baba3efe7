"""How the fake GitLab checks a discussion's `position` against the merge request's diff.

GitLab (docs.gitlab.com/api/discussions/#create-a-new-thread-in-the-merge-request-diff):
`position_type` text, `base_sha`/`start_sha`/`head_sha` of a version of the diff, `old_path`
and `new_path`, and the line by its role: an added line `new_line` only, a removed line
`old_line` only, an unchanged line both. A line that is not one of the diff's lines has no
line code, and the note is refused with 400 `Note {:line_code=>["can't be blank", "must be a
valid line code"]}` (DiffNote validation, app/models/diff_note.rb); a missing required
attribute is Grape's 400 `{"error": "position[head_sha] is missing"}`.

Stricter than gitlab.com in one way, on purpose: GitLab also takes unchanged lines outside the
hunks (lines a reader expands); the fake takes only lines of the diff, which is what a review
bot should anchor on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.testing._gh_diff import FileDiff, Line
from reviewer.testing._gl_store import JsonObject, MergeRequestStore, line_code

_LINE_CODE = '{:line_code=>["can\'t be blank", "must be a valid line code"]}'
_INCOMPLETE = (
    '{:line_code=>["can\'t be blank", "must be a valid line code"], '
    ':position=>["is incomplete"]}'
)
REQUIRED = ("base_sha", "start_sha", "head_sha", "position_type")


@dataclass(frozen=True)
class Refusal:
    """A 400 GitLab gives: `message` (a note's validation) or `error` (Grape's parameters)."""

    key: str
    text: str

    def body(self) -> JsonObject:
        return {self.key: self.text}


def _bad_note(errors: str) -> Refusal:
    return Refusal("message", f"400 Bad request - Note {errors}")


def check_position(store: MergeRequestStore, position: Any) -> JsonObject | Refusal:
    """The position as GitLab stores it (line codes filled in), or the 400 it answers."""
    if not isinstance(position, dict):
        return Refusal("error", "position is invalid")
    for name in REQUIRED:
        if not position.get(name):
            return Refusal("error", f"position[{name}] is missing")
    if position["position_type"] != "text":
        return Refusal("error", "position[position_type] does not have a valid value")
    version = store.version_of(position["base_sha"], position["start_sha"], position["head_sha"])
    old_line, new_line = _number(position.get("old_line")), _number(position.get("new_line"))
    if old_line is None and new_line is None:
        return _bad_note(_INCOMPLETE)
    if version is None:
        return _bad_note(_LINE_CODE)  # no diff of the MR has these refs: no line to find
    file = _file(store, version, position.get("old_path"), position.get("new_path"))
    line = _line(file, old_line, new_line) if file is not None else None
    if file is None or line is None:
        return _bad_note(_LINE_CODE)
    stored: JsonObject = {
        "base_sha": version.base_sha,
        "start_sha": version.start_sha,
        "head_sha": version.head_sha,
        "old_path": file.previous_filename or file.filename,
        "new_path": file.filename,
        "position_type": "text",
        "old_line": old_line,
        "new_line": new_line,
        "line_range": None,
    }
    line_range = position.get("line_range")
    if line_range:
        checked = _check_range(file, line, line_range)
        if isinstance(checked, Refusal):
            return checked
        stored["line_range"] = checked
    return stored


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _file(
    store: MergeRequestStore, version: Any, old_path: Any, new_path: Any
) -> FileDiff | None:
    for entry in store.diff(version).files:
        if new_path == entry.filename and old_path in (entry.previous_filename or entry.filename,
                                                        None, ""):  # fmt: skip
            return entry
    return None


def _line(file: FileDiff, old: int | None, new: int | None) -> Line | None:
    """The diff line with exactly this role: added (new only), removed (old only), or both."""
    wanted = "+" if old is None else "-" if new is None else " "
    for line in file.lines:
        if line.kind == wanted and (line.old, line.new) == (old, new):
            return line
    return None


def _check_range(file: FileDiff, end_line: Line, line_range: Any) -> JsonObject | Refusal:
    """`line_range` {start, end}, each {line_code, type old/new, old_line, new_line}: both ends
    lines of the file's diff, start not after end, end the position's own line."""
    if not isinstance(line_range, dict):
        return Refusal("error", "position[line_range] is invalid")
    ends: list[Line] = []
    stored: JsonObject = {}
    for name in ("start", "end"):
        end = line_range.get(name)
        if not isinstance(end, dict) or not end.get("line_code"):
            return Refusal("error", f"position[line_range][{name}][line_code] is missing")
        found = next(
            (
                line
                for line in file.lines
                if line.kind in " +-"
                and line_code(file.filename, line.old, line.new) == end["line_code"]
            ),
            None,
        )
        if found is None:
            return _bad_note(_LINE_CODE)
        ends.append(found)
        stored[name] = {
            "line_code": end["line_code"],
            "type": "old" if found.kind == "-" else "new",
            "old_line": found.old,
            "new_line": found.new,
        }
    start, end = ends
    if start.position > end.position or end != end_line:
        return _bad_note(_LINE_CODE)
    return stored
