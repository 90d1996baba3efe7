"""How the fake GitLab checks a discussion's `position` against the merge request's diff.

A position (docs.gitlab.com/api/discussions/#create-a-new-thread-in-the-merge-request-diff):
`position_type` text, `base_sha`/`start_sha`/`head_sha` of a version of the diff, `old_path`
and `new_path`, and the line by its role: an added line `new_line` only, a removed line
`old_line` only, an unchanged line both. Each rule below cites where it comes from.

- A missing SHA or type is Grape's 400 `{"error": "position[head_sha] is missing"}`
  (lib/api/discussions.rb: `requires :base_sha, :start_sha, :head_sha, :position_type`).
- No line at all: DiffNote's validation, 400 `Note {:line_code=>[...], :position=>["is
  incomplete"]}`; a pair that is no line of the diff with that role leaves the note without a
  line code: 400 `Note {:line_code=>["can't be blank", "must be a valid line code"]}`
  (app/models/diff_note.rb; the text bots got back: pr-agent#171,
  Nikita-Filonov/ai-review#43 and #73, gitbeaker#3433, harrisoncramer/gitlab.nvim#386).
- `line_range` (docs.gitlab.com/api/discussions/#parameters-for-multiline-comments): each end
  carries `line_code` and `type` only. lib/api/discussions.rb declares the ends' `old_line`
  and `new_line` as String while app/validators/json_schemas/position.json (checked by
  app/models/concerns/diff_positionable_note.rb, `validates :position, json_schema:`) wants
  an integer, so a number there becomes "31" and fails: 400 `Note {:position=>["must be a
  valid json schema"]}` (gitlab-org/gitlab#571619, #572121, MR !208052, fixed by !206292 in
  18.6; agavra/tuicr#557 and #598). Up to 17.7 the schema's ends allow only `line_code` and
  `type` at all (`additionalProperties: false`; harrisoncramer/gitlab.nvim#588), so the fake
  refuses either key in an end, whatever its value, and any other key.
- An end's `line_code` is GitLab's code of a line of this file's diff (`_gl_lines`: the diff's
  running counters); its `type` is `new` for an added line and `old` for a removed one (the
  docs' table), none for a context line (tuicr#598: GitLab refused a `type` there, though the
  docs' table says "otherwise `old`"). Whether GitLab's API itself refuses a wrong code or
  type I could not find in its source (the note's own line code comes from the top-level
  lines; a wrong range code misplaces the range, gitlab-org/gitlab#571619's UI example, and
  harrisoncramer/gitlab.nvim#478): the fake refuses one, with the line-code 400, so a client
  that passes it sends GitLab's own codes. The range's end is the position's own line and its
  start is not after it.

Stricter than gitlab.com in one more way, on purpose: GitLab also takes unchanged lines
outside the hunks (lines a reader expands); the fake takes only lines of the diff, which is
what a review bot should anchor on.

What is stored is what GitLab stores: the ends as they were sent (an API-made range has no
`old_line`/`new_line` in its ends, gitlab-org/gitlab#392800).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.testing._gh_diff import FileDiff
from reviewer.testing._gl_lines import gitlab_lines, line_at
from reviewer.testing._gl_store import JsonObject, MergeRequestStore

_LINE_CODE = '{:line_code=>["can\'t be blank", "must be a valid line code"]}'
_INCOMPLETE = (
    '{:line_code=>["can\'t be blank", "must be a valid line code"], '
    ':position=>["is incomplete"]}'
)
_SCHEMA = '{:position=>["must be a valid json schema"]}'
REQUIRED = ("base_sha", "start_sha", "head_sha", "position_type")
# What an end of a line_range may hold (position.json up to 17.7; see above).
END_KEYS = frozenset({"line_code", "type"})


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
    """The position as GitLab stores it, or the 400 it answers."""
    if not isinstance(position, dict):
        return Refusal("error", "position is invalid")
    for name in REQUIRED:
        if not position.get(name):
            return Refusal("error", f"position[{name}] is missing")
    if position["position_type"] != "text":
        return Refusal("error", "position[position_type] does not have a valid value")
    line_range = position.get("line_range")
    if line_range is not None:
        shape = _range_shape(line_range)
        if shape is not None:
            return shape
    version = store.version_of(position["base_sha"], position["start_sha"], position["head_sha"])
    old_line, new_line = _number(position.get("old_line")), _number(position.get("new_line"))
    if old_line is None and new_line is None:
        return _bad_note(_INCOMPLETE)
    if version is None:
        return _bad_note(_LINE_CODE)  # no diff of the MR has these refs: no line to find
    file = _file(store, version, position.get("old_path"), position.get("new_path"))
    found = line_at(file, old_line, new_line) if file is not None else None
    if file is None or found is None:
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
    if line_range:
        refused = _check_range(file, found[0], line_range)
        if refused is not None:
            return refused
        stored["line_range"] = {
            name: {key: line_range[name][key] for key in END_KEYS if key in line_range[name]}
            for name in ("start", "end")
        }
    return stored


def _range_shape(line_range: Any) -> Refusal | None:
    """Grape's and position.json's checks of `line_range` (before any line is looked up)."""
    if not isinstance(line_range, dict):
        return Refusal("error", "position[line_range] is invalid")
    for name in ("start", "end"):
        end = line_range.get(name)
        if not isinstance(end, dict):
            return Refusal("error", f"position[line_range][{name}] is invalid")
        if set(end) - END_KEYS:
            return _bad_note(_SCHEMA)  # old_line/new_line in an end: see the module's notes
        if not isinstance(end.get("line_code"), str) or not end["line_code"]:
            # The docs list it as required; Grape declares it optional, and what GitLab then
            # answers is not documented: the fake refuses.
            return Refusal("error", f"position[line_range][{name}][line_code] is missing")
    if set(line_range) - {"start", "end"}:
        return _bad_note(_SCHEMA)
    return None


def _check_range(file: FileDiff, own_code: str, line_range: JsonObject) -> Refusal | None:
    """Both ends GitLab's codes of lines of the file's diff, each with the `type` of its
    line's role; the start not after the end; the end the position's own line."""
    lines = gitlab_lines(file)
    ends = []
    for name in ("start", "end"):
        end = line_range[name]
        line = lines.get(end["line_code"])
        if line is None or end.get("type") != line.type:
            return _bad_note(_LINE_CODE)
        ends.append(line)
    start, last = ends
    if start.index > last.index or line_range["end"]["line_code"] != own_code:
        return _bad_note(_LINE_CODE)
    return None


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
