"""Turning a path or glob the model wrote into a clean repository-relative path, or refusing it.

This is the first line of containment and is purely lexical: the workspace then checks the
result against what really exists (symlinks, file types) at the reviewed revision.
"""

from __future__ import annotations

import re
import unicodedata

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


# What git escapes in a quoted name (core.quotePath=false): these, and other control bytes
# as octal. Format characters (bidi overrides, zero-width) are escaped as \uXXXX too, so a
# name can neither break a line of tool output nor reorder what is read.
_C_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r",
              '"': '"', "\\": "\\"}  # fmt: skip
_C_UNESCAPES = {value: key for key, value in _C_ESCAPES.items()}
_QUOTED_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|((?:\\[0-7]{3})+)|\\(.)", re.DOTALL)


def quote_path(name: str) -> str:
    """A repository name as one line of tool output, the way git quotes names: unchanged
    when it holds nothing special, else in double quotes with C-style escapes. The quoted
    form is accepted back as a path (normalize_path unquotes it)."""
    if not any(_needs_escape(char) for char in name) and not name.startswith('"'):
        return name
    out = []
    for char in name:
        if char in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[char])
        elif unicodedata.category(char) == "Cc":
            out.append("".join(f"\\{byte:03o}" for byte in char.encode("utf-8", "surrogateescape")))
        elif unicodedata.category(char) == "Cf" or 0xD800 <= ord(char) <= 0xDFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _needs_escape(char: str) -> bool:
    return char in _C_ESCAPES or unicodedata.category(char) in ("Cc", "Cf", "Cs")


def unquote_path(raw: str) -> str | None:
    """The name inside a git-style quoted path, or None when `raw` is not one."""
    text = raw.strip()
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return None

    def one(match: re.Match[str]) -> str:
        unicode, octal, simple = match.groups()
        if unicode:
            return chr(int(unicode, 16))
        if octal:
            data = bytes(int(octal[i + 1 : i + 4], 8) for i in range(0, len(octal), 4))
            return data.decode("utf-8", "surrogateescape")
        return _C_UNESCAPES.get(simple, simple)

    return _QUOTED_ESCAPE.sub(one, text[1:-1])


def _check_characters(raw: str, what: str, *, quoted: bool = False) -> None:
    if "\x00" in raw:
        raise ToolError(f"Invalid {what}: it contains a NUL byte.")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError(f"Invalid {what}: longer than {MAX_PATH_CHARS} characters.")
    if quoted:
        # Asked for by its quoted form: a control character is then part of a real name,
        # which must still be listed at the revision to be read.
        return
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
    unquoted = unquote_path(raw)
    _check_characters(raw if unquoted is None else unquoted, "path", quoted=unquoted is not None)
    text = raw.strip().replace("\\", "/") if unquoted is None else unquoted
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
