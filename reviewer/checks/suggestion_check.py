"""Whether a suggestion applies: checked mechanically before it is posted.

GitHub's "Commit suggestion" replaces exactly the commented lines with the block's text, so a
suggestion written for other lines, or one that breaks the file, does harm with one click. A
suggestion that fails a check is left out of the comment (the finding stays), and the reason
goes to the reports. Each check is one function, tried in the order of `_CHECKS`; the first
that fails names the reason.

A model often wraps its suggestion in a code fence (```python ... ```): a fence that wraps the
whole suggestion is taken off (`unwrap`), unless the fence is the content: the lines it
replaces open with a fence too, or the file is Markdown and the fence is not labelled as
the suggestion or as Markdown (a README's fenced example). A suggestion whose lines hold
fences is kept as it is; the forges' suggestion block around it is longer than any run of
backticks inside (report/mdtext.fence), so nothing inside can close it.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from reviewer.safety.invisible import SHOWN
from reviewer.wording import plural

_BRACKETS = (("(", ")"), ("[", "]"), ("{", "}"))
_PYTHON = re.compile(r"\.pyi?$")
_MARKDOWN = re.compile(r"\.(md|markdown|mdx|mkd|mdwn|mdown|rmd|qmd)$", re.IGNORECASE)
# A fence line (CommonMark): up to three spaces, three or more backticks or tildes, and for
# an opening fence an info string (no backtick in it after backticks).
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<marks>`{3,}|~{3,})(?P<info>[^\n]*)$")
# Info strings that say the fence wraps the suggestion, not content of the file.
_WRAPPER_INFO = re.compile(r"^(suggestion\b|markdown$|md$)", re.IGNORECASE)
# A line with a letter or digit: bare punctuation (`}`, `)`, blank) repeats everywhere, so
# only such lines count as "the line above/below repeated".
_MEANINGFUL = re.compile(r"\w")


@dataclass(frozen=True)
class Replacement:
    """A suggestion and what it replaces: `lines` of the file at the reviewed revision, the
    finding's `first..last` (1-based, inclusive)."""

    path: str
    lines: list[str]
    first: int
    last: int
    suggestion: str

    @property
    def old(self) -> list[str]:
        return self.lines[self.first - 1 : self.last]

    @property
    def new(self) -> list[str]:
        text = self.suggestion[:-1] if self.suggestion.endswith("\n") else self.suggestion
        return text.split("\n") if text else []  # empty: the lines are deleted


def _same_lines(r: Replacement) -> str:
    if [line.rstrip() for line in r.new] == [line.rstrip() for line in r.old]:
        return "it is the code as it is: it changes nothing"
    return ""


def unwrap(path: str, old: list[str], suggestion: str) -> str:
    """`suggestion` without a code fence that wraps all of it, when the fence is a wrapper
    and not the file's content (see the module's docstring); else `suggestion` as it is."""
    lines = suggestion.split("\n")
    body = [n for n, line in enumerate(lines) if line.strip()]
    if len(body) < 2:
        return suggestion
    first, last = body[0], body[-1]
    opening = _FENCE_OPEN.match(lines[first])
    if opening is None or (opening["marks"][0] == "`" and "`" in opening["info"]):
        return suggestion
    marks = opening["marks"]
    closing = next(
        (n for n in range(first + 1, last + 1) if _closes(lines[n], marks)), None
    )
    if closing != last:
        return suggestion  # no fence wraps it all: its fences are its content
    info = opening["info"].strip()
    if not _WRAPPER_INFO.match(info):
        replaced = next((line for line in old if line.strip()), "")
        if _FENCE_OPEN.match(replaced) or _MARKDOWN.search(path):
            return suggestion  # the fence is the file's own (a README's example)
    inner = lines[first + 1 : last]
    return "\n".join(inner) + ("\n" if suggestion.endswith("\n") else "")


def _closes(line: str, marks: str) -> bool:
    """Whether `line` closes a fence opened with `marks` (the same mark, at least as many,
    nothing after them)."""
    stripped = line.strip()
    if len(line) - len(line.lstrip(" ")) > 3 or not stripped:
        return False
    return set(stripped) == {marks[0]} and len(stripped) >= len(marks)


def _diff_markers(r: Replacement) -> str:
    changed = [line for line in r.new if line.strip()]
    if changed and all(line[:1] in "+-" for line in changed) and any(
        line[:1] == "+" for line in changed
    ):
        return "it is written as a diff (+/- markers); a suggestion is the replacement text"
    return ""


def _hidden_characters(r: Replacement) -> str:
    """It adds characters a reader of the suggestion cannot see (a zero-width space, a
    bidirectional override, a control): every other view shows them (sinks.clean_text), but a
    suggestion is applied as written, so it cannot; ones the replaced lines hold already, and
    those of ordinary writing (an emoji's selector), are kept as they are."""
    new, old = "\n".join(r.new), "\n".join(r.old)
    hidden = {match.group() for match in SHOWN.finditer(new)}
    hidden |= {c for c in new if unicodedata.category(c) == "Cc" and c not in "\t\n"}
    added = sorted(hidden - set(old))
    if not added:
        return ""
    names = ", ".join(f"U+{ord(c):04X}" for c in added)
    return f"it adds characters a reader cannot see ({names}); a suggestion is applied as written"


def _repeats_neighbour(r: Replacement) -> str:
    """Its first line is the line above the range (or its last the line below) while the
    replaced lines do not start (end) with it: applied, that line would be there twice."""
    new, old = r.new, r.old
    if not new:
        return ""
    if r.first > 1:
        above = r.lines[r.first - 2]
        if _MEANINGFUL.search(above) and new[0].strip() == above.strip() != old[0].strip():
            return f"its first line repeats line {r.first - 1}, above the lines it replaces"
    if r.last < len(r.lines):
        below = r.lines[r.last]
        if _MEANINGFUL.search(below) and new[-1].strip() == below.strip() != old[-1].strip():
            return f"its last line repeats line {r.last + 1}, below the lines it replaces"
    return ""


def _brackets(r: Replacement) -> str:
    old, new = "\n".join(r.old), "\n".join(r.new)
    for opening, closing in _BRACKETS:
        before = old.count(opening) - old.count(closing)
        after = new.count(opening) - new.count(closing)
        if before != after:
            return (
                f"its brackets do not balance like the lines it replaces ('{opening}' minus "
                f"'{closing}': {after:+d} where the replaced lines have {before:+d})"
            )
    return ""


def _indentation(r: Replacement) -> str:
    old = next((line for line in r.old if line.strip()), None)
    new = next((line for line in r.new if line.strip()), None)
    if old is None or new is None:
        return ""
    old_indent = old[: len(old) - len(old.lstrip())]
    new_indent = new[: len(new) - len(new.lstrip())]
    if old_indent != new_indent:
        return (
            f"its indentation ({_describe(new_indent)}) does not match the line it replaces "
            f"({_describe(old_indent)})"
        )
    return ""


def _describe(indent: str) -> str:
    if not indent:
        return "none"
    tabs, spaces = indent.count("\t"), indent.count(" ")
    parts = [plural(tabs, "tab")] if tabs else []
    parts += [plural(spaces, "space")] if spaces else []
    return " and ".join(parts)


def _python_parses(r: Replacement) -> str:
    if not _PYTHON.search(r.path):
        return ""
    before = "\n".join(r.lines) + "\n"
    if _syntax_error(before) is not None:
        return ""  # it did not parse before: the suggestion is not to blame
    after = "\n".join([*r.lines[: r.first - 1], *r.new, *r.lines[r.last :]]) + "\n"
    error = _syntax_error(after)
    if error is None:
        return ""
    return f"with it applied the file no longer parses as Python ({error})"


def _syntax_error(source: str) -> str | None:
    try:
        ast.parse(source)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return type(exc).__name__
    return None


_CHECKS: tuple[Callable[[Replacement], str], ...] = (
    _same_lines,
    _hidden_characters,
    _diff_markers,
    _repeats_neighbour,
    _brackets,
    _indentation,
    _python_parses,
)


def checked_suggestion(
    path: str, lines: list[str], first: int, last: int, suggestion: str
) -> tuple[str, str]:
    """The suggestion for lines `first..last` of `path` (whose text is `lines`) as it is to
    be posted (a wrapping fence taken off), and why it should not be posted ("" when it
    applies)."""
    if not 1 <= first <= last <= len(lines):
        problem = f"it is for lines {first}-{last}, outside the file's {plural(len(lines), 'line')}"
        return suggestion, problem
    suggestion = unwrap(path, lines[first - 1 : last], suggestion)
    replacement = Replacement(path, lines, first, last, suggestion)
    for check in _CHECKS:
        problem = check(replacement)
        if problem:
            return suggestion, problem
    return suggestion, ""
