"""Glob patterns compiled to regexes that cannot backtrack catastrophically.

`*` and `?` stay within one path segment, `**` spans any number of segments, `[abc]` and
`[!abc]` are character classes, `{a,b}` are alternatives. Patterns come from the model, so
matching must stay fast on hostile input: a naive translation of `*a*a*a*a*b` backtracks for
minutes on a long name, and Python's regex engine cannot be interrupted. Two facts keep it
linear-ish here:

- Between two stars, a fixed-length piece may be matched at its leftmost occurrence and
  never reconsidered (whatever a later match leaves, an earlier one leaves more). Such
  pieces become atomic groups `(?>[^/]*?piece)`.
- The same holds one level up, for the fixed run of segments between two `**`.

Braces are expanded first (a bounded number of alternatives), so every piece has a fixed
length and the argument above holds.

Written here rather than taken from a library: general glob libraries emit regexes several
times slower on 100,000 paths, and none bounds the work on hostile patterns.
"""

from __future__ import annotations

import re
from functools import lru_cache

from reviewer.errors import ToolError

MAX_ALTERNATIVES = 64
_ANY_SEGMENTS_LAZY = "(?:[^/]*/)*?"
_ANY_SEGMENTS = "(?:[^/]*/)*"


@lru_cache(maxsize=256)
def glob_matcher(pattern: str) -> re.Pattern[str]:
    """A compiled regex for `pattern`; use `fullmatch` on repository-relative paths."""
    alternatives = [_translate(p) for p in _expand_braces(pattern)]
    unique = list(dict.fromkeys(alternatives))
    return re.compile(unique[0] if len(unique) == 1 else "|".join(f"(?:{a})" for a in unique))


@lru_cache(maxsize=256)
def required_text(pattern: str) -> str:
    """The longest literal text every match of `pattern` contains ('' when none is sure).

    `text in path` runs in C; checking it before the regex halves the cost of filtering
    100,000 paths with a typical pattern like `**/*.py`.
    """
    if "{" in pattern or "\\" in pattern:
        return ""
    best = ""
    for segment in pattern.split("/"):
        if segment == "**":
            continue
        for run in re.split(r"\*+|\?|\[[^\]]*\]?", segment):
            if len(run) > len(best) and "[" not in run and "]" not in run:
                best = run
    return best


def basename_or_path_matcher(pattern: str) -> re.Pattern[str]:
    """For file filters: a glob without `/` matches the file name at any depth (like rg -g)."""
    return glob_matcher(pattern if "/" in pattern else f"**/{pattern}")


def _expand_braces(pattern: str) -> list[str]:
    results = [pattern]
    expanded: list[str] = []
    while results:
        current = results.pop()
        start, end = _first_brace(current)
        if start < 0:
            expanded.append(current)
            continue
        head, body, tail = current[:start], current[start + 1 : end], current[end + 1 :]
        results.extend(head + option + tail for option in _split_top_level(body))
        if len(results) + len(expanded) > MAX_ALTERNATIVES:
            raise ToolError(
                f"Invalid pattern '{pattern}': more than {MAX_ALTERNATIVES} alternatives."
            )
    return expanded[::-1]


def _first_brace(pattern: str) -> tuple[int, int]:
    """The first `{...}` holding a top-level comma, or (-1, -1). Others stay literal."""
    for start, char in enumerate(pattern):
        if char != "{" or _inside_class(pattern, start):
            continue
        level = 0
        for end in range(start, len(pattern)):
            if pattern[end] == "{":
                level += 1
            elif pattern[end] == "}":
                level -= 1
                if level == 0:
                    if len(_split_top_level(pattern[start + 1 : end])) > 1:
                        return start, end
                    break
    return -1, -1


def _inside_class(pattern: str, index: int) -> bool:
    opened = pattern.rfind("[", 0, index)
    return opened >= 0 and pattern.find("]", opened + 1) > index > opened


def _split_top_level(body: str) -> list[str]:
    parts, level, current = [], 0, []
    for char in body:
        if char == "," and level == 0:
            parts.append("".join(current))
            current = []
            continue
        level += char == "{"
        level -= char == "}"
        current.append(char)
    parts.append("".join(current))
    return parts


def _translate(pattern: str) -> str:
    segments = pattern.split("/")
    # Runs of fixed segments between `**` markers; consecutive `**` mean the same as one.
    runs: list[list[str]] = [[]]
    for segment in segments:
        if segment == "**":
            if runs[-1] or len(runs) == 1:
                runs.append([])
            continue
        runs[-1].append(segment)
    if len(runs) == 1:
        return _run(runs[0])
    out = [_run(runs[0]) + "/" if runs[0] else ""]
    for run in runs[1:-1]:
        out.append(f"(?>{_ANY_SEGMENTS_LAZY}{_run(run)}/)")
    last = runs[-1]
    out.append(f"{_ANY_SEGMENTS}{_run(last)}" if last else ".*")
    return "".join(out)


def _run(segments: list[str]) -> str:
    return "/".join(_segment(s) for s in segments)


def _segment(segment: str) -> str:
    pieces: list[list[str]] = [[]]
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            pieces.append([])
        elif char == "?":
            pieces[-1].append("[^/]")
        elif char == "[" and (end := _class_end(segment, i)) > 0:
            pieces[-1].append(_class(segment[i + 1 : end]))
            i = end
        else:
            pieces[-1].append(re.escape(char))
        i += 1
    if len(pieces) == 1:
        return "".join(pieces[0])
    out = ["".join(pieces[0])]
    out.extend(f"(?>[^/]*?{''.join(piece)})" for piece in pieces[1:-1] if piece)
    out.append("[^/]*" + "".join(pieces[-1]))
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    return end if end > start + 1 else -1


def _class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    escaped = body.replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
    return f"[^/{escaped}]" if negate else f"(?![/])[{escaped}]"
