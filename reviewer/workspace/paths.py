"""Turning a path or glob the model wrote into a clean repository-relative path, or refusing it.

This is the first line of containment and is purely lexical: the workspace then checks the
result against what really exists (symlinks, file types) at the reviewed revision.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from reviewer.errors import ToolError

MAX_PATH_CHARS = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")


def outside(raw: str) -> ToolError:
    return ToolError(f"Access denied: path '{raw}' resolves outside the working directory.")


def is_git_dir_name(component: str) -> bool:
    """`.git` in any spelling a case-insensitive or Windows file system would treat as it."""
    name = component.rstrip(". ").casefold()
    return name == ".git" or name == "git~1"


def git_dir_denied(raw: str) -> ToolError:
    return ToolError(
        f"Access denied: path '{raw}' is inside a .git directory, which is not readable."
    )


def _check_characters(raw: str, what: str) -> None:
    if "\x00" in raw:
        raise ToolError(f"Invalid {what}: it contains a NUL byte.")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError(f"Invalid {what}: longer than {MAX_PATH_CHARS} characters.")
    for char in raw:
        if unicodedata.category(char) in ("Cc", "Cf") and char != "\t":
            raise ToolError(
                f"Invalid {what}: it contains the control or format character U+{ord(char):04X}."
            )


def normalize_path(raw: object, *, root: str, allow_root: bool = True) -> str:
    """Return `raw` as a normalized path relative to the repository root ('' for the root).

    `root` is the absolute, resolved repository root; an absolute path inside it is accepted.
    Refuses anything that climbs out, names `.git`, or holds NUL or control characters.
    Percent-encoding is not decoded: `%2e%2e` is a file name, as it is on disk.
    """
    if not isinstance(raw, str):
        raise ToolError(f"Invalid path: expected a string, got {type(raw).__name__}.")
    _check_characters(raw, "path")
    text = raw.strip().replace("\\", "/")
    if text.startswith("~"):
        raise outside(raw)
    if _DRIVE.match(text):
        raise outside(raw)
    if text.startswith("/"):
        prefix = root.rstrip("/") + "/"
        if text == root.rstrip("/") or text == prefix:
            text = ""
        elif text.startswith(prefix):
            text = text[len(prefix) :]
        else:
            raise outside(raw)
    parts: list[str] = []
    for component in text.split("/"):
        if component in ("", "."):
            continue
        if component == "..":
            if not parts:
                raise outside(raw)
            parts.pop()
            continue
        if is_git_dir_name(component):
            raise git_dir_denied(raw)
        parts.append(component)
    if not parts and not allow_root:
        raise ToolError("Invalid path: a file path is required, not the repository root.")
    return "/".join(parts)


def check_glob(raw: object, what: str = "pattern") -> str:
    """Validate a glob the model wrote; globs are matched against listed paths, never the disk."""
    if not isinstance(raw, str):
        raise ToolError(f"Invalid {what}: expected a string, got {type(raw).__name__}.")
    _check_characters(raw, what)
    text = raw.strip().replace("\\", "/")
    if not text:
        raise ToolError(f"Invalid {what}: it is empty.")
    if text.startswith(("/", "~")) or _DRIVE.match(text):
        raise outside(raw)
    components = text.split("/")
    if ".." in components:
        raise outside(raw)
    if any(is_git_dir_name(c) for c in components):
        raise git_dir_denied(raw)
    while text.startswith("./"):
        text = text[2:]
    return text


@lru_cache(maxsize=256)
def glob_matcher(pattern: str) -> re.Pattern[str]:
    """Compile a glob: `*` and `?` stay within one directory, `**` spans any depth, `{a,b}`.

    Written here rather than taken from a library: the regexes general glob libraries emit
    are several times slower on 100,000 paths, and listing speed is a stated target.
    """
    return re.compile(_translate(pattern, depth=0))


def basename_or_path_matcher(pattern: str) -> re.Pattern[str]:
    """For file filters: a glob without `/` matches the file name at any depth (like rg -g)."""
    return glob_matcher(pattern if "/" in pattern else f"**/{pattern}")


_MAX_BRACE_DEPTH = 4


def _translate(pattern: str, depth: int) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
            end = i + 2
            if end == n:
                out.append(".*")
                i = end
                continue
            if pattern[end] == "/":
                out.append("(?:.*/)?")
                i = end + 1
                continue
        if char == "*":
            while i + 1 < n and pattern[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = _class_end(pattern, i)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                escaped = body.replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
                out.append(f"[^/{escaped}]" if negate else f"(?![/])[{escaped}]")
                i = end
        elif char == "{":
            end = _brace_end(pattern, i)
            if end < 0 or depth >= _MAX_BRACE_DEPTH:
                out.append(re.escape(char))
            else:
                options = _split_top_level(pattern[i + 1 : end])
                out.append("(?:" + "|".join(_translate(o, depth + 1) for o in options) + ")")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    return end if end > start + 1 else -1


def _brace_end(pattern: str, start: int) -> int:
    level = 0
    for i in range(start, len(pattern)):
        if pattern[i] == "{":
            level += 1
        elif pattern[i] == "}":
            level -= 1
            if level == 0:
                return i
    return -1


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
