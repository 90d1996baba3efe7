"""`.reviewer/learnings.md`: what the team has taught the reviewer, one learning a bullet,
optionally scoped by a path glob:

    - `app/payments/**`: amounts are integer cents; rounding down is intended.
    - Every public function logs through `audit.log`, never `print`.

Read at the base revision only, like the settings, the rule files and the ignore file: a
change that edits the file is reviewed like any file, and the lines it adds count once it is
merged. What of them each request is shown, and how they were used, is learning_prompts.py;
the line a dismissal's reason proposes for the file is `proposed_learning`.

The file is repository text: quoted and fenced wherever it goes, redacted with the rest of
the prompt, never instructions beyond what the prompt frames it as, and bounded (the bytes
read, the number of learnings, the characters of each and of all; every cut said).

The syntax: a bullet (`-`, `*` or `+`) at the start of a line starts a learning; its lines
go on until a blank line, the next bullet, a heading or a code fence. When it starts with a
code span followed by a colon, the code span is its scope: a glob as `include` takes it (no
`/`: the file name at any depth; a trailing `/`: everything below; a leading `/`: from the
root). Headings and other text are the team's own notes, not learnings; nothing inside a
code fence is a learning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from reviewer.errors import ToolError
from reviewer.findings import IGNORE_FILE_HOW, ClosedFinding
from reviewer.wording import plural
from reviewer.workspace import RevisionWorkspace, Workspace, WorktreeWorkspace
from reviewer.workspace.globs import basename_or_path_matcher, glob_matcher

LEARNINGS_FILE = ".reviewer/learnings.md"
# Read at most this much of the file; keep at most this many learnings, each at most this
# long, all together at most MAX_TOTAL_CHARS (a rule file's bound): the rest is left out, and
# said.
MAX_READ_BYTES = 1_000_000
MAX_LEARNINGS = 100
MAX_LEARNING_CHARS = 1_000
MAX_TOTAL_CHARS = 12_000
# A learning's id, as the model names it: "L12" (brackets and case forgiven).
_ID = re.compile(r"\[?\s*[Ll](\d{1,4})\s*\]?")
_BULLET = re.compile(r"^( {0,3})[-*+][ \t]+(.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A scope: a code span (its run of backticks taken whole, at most 500 characters on the
# first line) then a colon. Bounded, so a line of a million backticks costs no more.
_SCOPE = re.compile(r"(?>(`{1,16}))(?!`)([^\n]{1,500}?)(?<!`)\1(?!`)[ \t]*:(.*)\Z", re.DOTALL)
# Scopes left out for being no glob that are named one by one; the rest are counted.
_NAMED_BAD_SCOPES = 5


@dataclass(frozen=True)
class Learning:
    """One learning: its id (its place among the learnings read: what a verdict names), the
    glob of the files it is for ('' for every file), its text and its line in the file."""

    id: str
    scope: str
    text: str
    line: int
    cut: str = ""

    def applies(self, path: str) -> bool:
        return not self.scope or scope_matcher(self.scope).fullmatch(path) is not None

    def prompt_line(self) -> str:
        """The learning as the model reads it (inside a fence: nothing in it is Markdown)."""
        where = f" (for files matching {self.scope})" if self.scope else " (for every file)"
        return f"{self.id}{where}: {self.text}"


@dataclass(frozen=True)
class Learnings:
    """The learnings read for a review, where from, and what of the file was left out."""

    entries: tuple[Learning, ...] = ()
    source: str = ""
    notes: tuple[str, ...] = ()

    def get(self, learning_id: str) -> Learning | None:
        return next((e for e in self.entries if e.id == learning_id), None)

    def for_path(self, path: str) -> list[Learning]:
        return [e for e in self.entries if e.applies(path)]

    def for_paths(self, paths: list[str] | tuple[str, ...]) -> list[tuple[Learning, list[str]]]:
        """The learnings for any of `paths`, each with the paths it is for."""
        chosen = []
        for entry in self.entries:
            files = [p for p in paths if entry.applies(p)]
            if files:
                chosen.append((entry, files))
        return chosen


NO_LEARNINGS = Learnings()


def scope_matcher(scope: str) -> re.Pattern[str]:
    """The glob of a scope, as `include` reads one (no `/`: the file name at any depth); a
    trailing `/` is everything below, a leading one anchors it at the root."""
    if scope.endswith("/"):
        scope += "**"
    if scope.startswith("/"):
        return glob_matcher(scope.lstrip("/"))
    return basename_or_path_matcher(scope)


def normalize_id(value: str) -> str | None:
    """`L3` from what a model writes ("L3", "l3", "[L3]"); None when it is no learning id."""
    match = _ID.fullmatch(value.strip())
    return f"L{int(match[1])}" if match else None


def load_learnings(
    root: Path, revision: str | None, setting: str, given: str | None = None
) -> Learnings:
    """The learnings of a review: `given` (an evaluation case's text), else the file at
    `revision` (None: on disk); none when the setting is "off" or there is no file."""
    if setting == "off":
        return NO_LEARNINGS
    if given is not None:
        return parse_learnings(given, "the evaluation case")
    base: Workspace = RevisionWorkspace(root, revision) if revision else WorktreeWorkspace(root)
    try:
        resolved = base.resolve_file(LEARNINGS_FILE)
    except ToolError:  # no file (or one that is a link out of the repository): no learnings
        return NO_LEARNINGS
    raw = base.read_bytes(resolved, MAX_READ_BYTES + 1)
    notes = []
    if len(raw) > MAX_READ_BYTES:
        raw = raw[:MAX_READ_BYTES]
        notes.append(f"only the first {MAX_READ_BYTES:,} bytes of {LEARNINGS_FILE} were read")
    where = f"the base revision {revision[:12]}" if revision else "the working tree"
    read = parse_learnings(raw.decode("utf-8", "replace"), where)
    return Learnings(read.entries, read.source, (*notes, *read.notes))


def parse_learnings(text: str, source: str) -> Learnings:
    """The learnings of a learnings.md text, in their order, bounded; what was left out is
    said in `notes`. Bounds are checked before any scope is compiled: a file of a million
    bullets costs a pass over its lines, not a million globs."""
    entries: list[Learning] = []
    notes: list[str] = []
    over_count = over_room = bad_scopes = total = 0
    for line, raw in _bullets(text.removeprefix("\ufeff")):
        scope, body = _split_scope(raw)
        body = " ".join(body.split())
        if not body:
            continue
        if len(entries) >= MAX_LEARNINGS:
            over_count += 1
            continue
        cut = ""
        if len(body) > MAX_LEARNING_CHARS:
            cut = f"cut to {MAX_LEARNING_CHARS:,} of {len(body):,} characters"
            body = body[:MAX_LEARNING_CHARS].rstrip() + "…"
        if total + len(body) > MAX_TOTAL_CHARS:
            over_room += 1
            continue
        if scope is not None and not _valid_scope(scope):
            bad_scopes += 1
            if bad_scopes <= _NAMED_BAD_SCOPES:
                notes.append(
                    f"the learning on line {line} is left out: its scope is no glob reviewer "
                    "reads (one line, at most 64 {a,b} alternatives)"
                )
            continue
        total += len(body)
        entries.append(Learning(f"L{len(entries) + 1}", scope or "", body, line, cut))
    more = bad_scopes - _NAMED_BAD_SCOPES
    if more > 0:
        notes.append(f"{plural(more, 'more learning')} left out for their scope")
    if over_count:
        notes.append(
            f"{plural(over_count, 'more learning')} left out (at most {MAX_LEARNINGS} are read)"
        )
    if over_room:
        notes.append(
            f"{plural(over_room, 'learning')} left out (all of them together may take "
            f"{MAX_TOTAL_CHARS:,} characters)"
        )
    notes += [f"learning {e.id} (line {e.line}) {e.cut}" for e in entries if e.cut]
    return Learnings(tuple(entries), source, tuple(notes))


def _bullets(text: str) -> list[tuple[int, str]]:
    """Each bullet's first line number and its text, continuation lines joined (a bullet
    indented deeper than the open one is part of it)."""
    found: list[tuple[int, list[str]]] = []
    fence = ""
    indent = -1  # the open bullet's indent; -1: none open
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            continue
        if marker := _FENCE.match(line):
            fence, indent = marker[1], -1
            continue
        if not line.strip() or _HEADING.match(line):
            indent = -1
            continue
        bullet = _BULLET.match(line)
        if bullet and (indent < 0 or len(bullet[1]) <= indent):
            found.append((number, [bullet[2]]))
            indent = len(bullet[1])
        elif indent >= 0:
            found[-1][1].append(line.strip())
    return [(number, "\n".join(lines)) for number, lines in found]


def _split_scope(text: str) -> tuple[str | None, str]:
    """The scope (a code span followed by a colon, first thing in the learning) and the
    rest; (None, text) when the learning has no scope."""
    match = _SCOPE.match(text.strip())
    if match is None:
        return None, text
    scope = match[2]
    if scope.startswith(" ") and scope.endswith(" ") and scope.strip():  # CommonMark's pad
        scope = scope[1:-1]
    return scope, match[3]


def _valid_scope(scope: str) -> bool:
    if not scope.strip() or "\n" in scope:
        return False
    try:
        scope_matcher(scope)
    except ToolError:  # more alternatives than the matcher expands
        return False
    return True


def learning_line(scope: str, text: str) -> str:
    """A learnings.md line that reads back as this learning (`parse_learnings`): the scope
    in a code span longer than any backtick run in it, the text on the same line."""
    text = " ".join(text.split())
    if not scope:
        return f"- {text}"
    longest = max((len(run) for run in re.findall(r"`+", scope)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if scope.startswith("`") or scope.endswith("`") else ""
    return f"- {ticks}{pad}{scope}{pad}{ticks}: {text}"


def path_glob(path: str) -> str:
    """A scope that matches exactly `path`: anchored at the root, glob characters in a class
    of their own, and any character a line cannot hold (a control character, an undecodable
    byte) as `?`."""
    out = ["/"] if "/" not in path else []
    for char in path:
        if char in "*?[{}]":
            out.append(f"[{char}]" if char != "]" else "]")
        elif not char.isprintable() or "\udc80" <= char <= "\udcff":
            out.append("?")
        else:
            out.append(char)
    return "".join(out)


# A dismissal's reason is proposed as a learning up to this many characters (cut with "…").
MAX_PROPOSED_CHARS = 500


def proposed_learning(dismissed: ClosedFinding) -> str | None:
    """The learnings.md line a person's dismissal with a reason proposes: the reason, scoped
    to the finding's file. None for a dismissal without a reason, or the ignore file's (it is
    the team's file already). The reason is someone's text: the team reads the line and
    commits it, or not; the bot never writes it and never acts on it."""
    if dismissed.state != "dismissed" or dismissed.how == IGNORE_FILE_HOW:
        return None
    text = " ".join(dismissed.reason.split())
    if not text:
        return None
    if len(text) > MAX_PROPOSED_CHARS:
        text = text[:MAX_PROPOSED_CHARS].rstrip() + "…"
    return learning_line(path_glob(dismissed.path), text)
