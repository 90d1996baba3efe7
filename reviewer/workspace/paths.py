"""Turning a path or glob the model wrote into a clean repository-relative path, or refusing it.

This is the first line of containment and is purely lexical: the workspace then checks the
result against what really exists (symlinks, file types) at the reviewed revision.
"""

from __future__ import annotations

import re
import unicodedata

from reviewer.errors import ToolError
from reviewer.safety.invisible import INVISIBLE_CHAR

MAX_PATH_CHARS = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")


def outside(raw: str) -> ToolError:
    return ToolError(
        f"Access denied: path '{echo_path(raw)}' resolves outside the working directory."
    )


def is_git_dir_name(component: str) -> bool:
    """`.git` in any spelling a case-insensitive or Windows file system would treat as it."""
    name = component.rstrip(". ").casefold()
    return name == ".git" or name == "git~1"


def git_dir_denied(raw: str) -> ToolError:
    return ToolError(
        f"Access denied: path '{echo_path(raw)}' is inside a .git directory, which is not readable."
    )


# What git escapes in a quoted name (core.quotePath=false): these, and other control bytes
# as octal. Format characters (bidi overrides, zero-width, tag characters), the other
# invisible ones (a Hangul filler, a variation selector: safety/invisible.py) and the Unicode
# line and paragraph separators are escaped as \uXXXX (\UXXXXXXXX past U+FFFF) too, so a
# name can neither break a line of tool output nor reorder or hide what is read.
_C_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r",
              '"': '"', "\\": "\\"}  # fmt: skip
_C_UNESCAPES = {value: key for key, value in _C_ESCAPES.items()}
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# A well-formed quoted name: between the quotes, plain characters and the escapes above. Octal
# stops at \377 (a byte), \U at U+10FFFF; anything else (`"C:\Users"`, `"a\"`) is not a
# quoted name, and is taken literally.
_ESCAPE = r'\\(?:[abtnvfr"\\]|[0-3][0-7]{2}|u[0-9a-fA-F]{4}|U(?:000[0-9a-fA-F]|0010)[0-9a-fA-F]{4})'
_QUOTED = re.compile(rf'"(?:[^"\\]|{_ESCAPE})*"', re.DOTALL)
_QUOTED_ESCAPE = re.compile(
    r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|((?:\\[0-3][0-7]{2})+)|\\(.)", re.DOTALL
)


def quote_path(name: str) -> str:
    """A repository name as one line of tool output, the way git quotes names: unchanged
    when it holds nothing special, else in double quotes with C-style escapes. This is the
    one sink for every name a tool prints; the quoted form is accepted back as a path
    (normalize_path unquotes it)."""
    if _plain(name) or not _needs_quotes(name):
        return name
    out = []
    for char in name:
        category = unicodedata.category(char)
        if char in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[char])
        elif category == "Cc" or "\udc80" <= char <= "\udcff":
            # A control character, or a byte that is not UTF-8 (decoded with surrogateescape):
            # its bytes in octal, as git writes them.
            data = char.encode("utf-8", "surrogateescape")
            out.append("".join(f"\\{byte:03o}" for byte in data))
        elif category in _ESCAPED_CATEGORIES or INVISIBLE_CHAR.match(char):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _needs_escape(char: str) -> bool:
    # `"` anywhere (not only in front) and `\` are quoted as git quotes them: a bare `\` would
    # be read back as a separator, and the quoted form then always names the file exactly.
    return (
        char in _C_ESCAPES
        or unicodedata.category(char) in _ESCAPED_CATEGORIES
        or INVISIBLE_CHAR.match(char) is not None
    )


def _plain(name: str) -> bool:
    """The common case, decided in C: printable ASCII without `"` or `\\`, no space at
    either end (printable ASCII holds no control or format character)."""
    return (
        name.isascii()
        and name.isprintable()
        and '"' not in name
        and "\\" not in name
        and name[:1] != " "
        and name[-1:] != " "
    )


def _needs_quotes(name: str) -> bool:
    # A name that starts or ends with white space is quoted too (git does not): bare, the
    # space is invisible in a line of output and a reader would strip it.
    return name != name.strip() or any(_needs_escape(char) for char in name)


def unquote_path(raw: str) -> str | None:
    """The name inside a well-formed git-style quoted path, or None when `raw` is not one."""
    text = raw.strip()
    if not _QUOTED.fullmatch(text):
        return None

    def one(match: re.Match[str]) -> str:
        short, long, octal, simple = match.groups()
        if short or long:
            return chr(int(short or long, 16))
        if octal:
            data = bytes(int(octal[i + 1 : i + 4], 8) for i in range(0, len(octal), 4))
            return data.decode("utf-8", "surrogateescape")
        return _C_UNESCAPES[simple]

    return _QUOTED_ESCAPE.sub(one, text[1:-1])


def echo_path(raw: object) -> str:
    """A path the model gave, for a message: as written, so the model recognises its own
    words; quoted as quote_path quotes a name when it holds a character refused in a path
    argument (never true of a raw path that got past normalize_path: this is the backstop)."""
    text = raw if isinstance(raw, str) else str(raw)
    if not any(unicodedata.category(char) in _ESCAPED_CATEGORIES for char in text):
        return text
    name = unquote_path(text)
    return quote_path(text if name is None else name)


def _refused(char: str) -> bool:
    # Control characters only. Format characters (a zero-width joiner in an emoji, a
    # zero-width space) are legal in names, and a changed file may hold them: such a path
    # names a file or nothing, and every name printed back is quoted with them made visible.
    return unicodedata.category(char) == "Cc" and char != "\t"


def _check_characters(raw: str, what: str) -> None:
    if "\x00" in raw:
        raise ToolError(f"Invalid {what}: it contains a NUL byte.")
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError(f"Invalid {what}: longer than {MAX_PATH_CHARS} characters.")
    # Our own output never shows these raw (names are quoted), so the model never needs to
    # send one: a quoted name spells them as escapes.
    for char in raw:
        if _refused(char):
            raise ToolError(
                f"Invalid {what}: it contains the control character U+{ord(char):04X}; "
                'spell it as a quoted name ("a\\tb"), as the tools print one.'
            )


def _check_name(name: str, what: str) -> None:
    """A name spelled by escapes, or from the repository: any character a file name can hold."""
    if "\x00" in name:
        raise ToolError(f"Invalid {what}: it contains a NUL byte.")
    if len(name) > MAX_PATH_CHARS:
        raise ToolError(f"Invalid {what}: longer than {MAX_PATH_CHARS} characters.")
    try:
        name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"Invalid {what}: U+{ord(name[exc.start]):04X} is a lone surrogate, which no file "
            "name holds."
        ) from exc


def normalize_path(
    raw: object, *, root: str, allow_root: bool = True, unquote: bool = True, tidy: bool = True
) -> str:
    """Return `raw` as a normalized path relative to the repository root ('' for the root).

    `root` is the absolute, resolved repository root; an absolute path inside it is accepted.
    Refuses anything that climbs out, names `.git`, or holds NUL or control characters.
    A well-formed double-quoted C-style string (as quote_path prints a name) is unquoted
    first, unless `unquote` is false; the name it spells may hold control characters, and
    faces every other check. Percent-encoding is not decoded: `%2e%2e` is a file name.
    `tidy` forgives a model's slips (white space around the path, `\\` for `/`); without it
    the text is taken exactly, for names that really hold those (Workspace.normalize tries
    both, the exact name first).
    """
    if not isinstance(raw, str):
        raise ToolError(f"Invalid path: expected a string, got {type(raw).__name__}.")
    _check_characters(raw, "path")
    name = unquote_path(raw) if unquote else None
    if name is None:
        text = raw.strip().replace("\\", "/") if tidy else raw
    else:
        _check_name(name, "path")
        text = name
    return _relative(text, raw, root, allow_root)


def normalize_name(name: str, *, root: str) -> str:
    """A path made of repository text (a symlink's target joined to the rest of a path), as
    normalize_path makes one: never unquoted nor stripped, and any character a file name
    can hold is allowed; `..`, absolute paths and `.git` are refused all the same."""
    _check_name(name, "path")
    return _relative(name.replace("\\", "/"), name, root, True)


def _relative(text: str, raw: str, root: str, allow_root: bool) -> str:
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
