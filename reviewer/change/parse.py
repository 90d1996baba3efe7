"""The parser for git's patch format: bytes in, `FileChange`s out, no git and no I/O.

It expects what `git diff` prints with `a/` and `b/` prefixes (load_change pins them). The
input is split into files with `bytes.find`, each file's header is read line by line as
bytes (paths are bytes, and must round-trip exactly), and each file's hunks are decoded
once and walked once. No regex: every line costs one dispatch on its first character.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from reviewer.change.model import FileChange, Hunk, Status
from reviewer.errors import ReviewerError

# GitHub stops showing one file's diff past 500 KB of raw diff or 20,000 lines (docs:
# "Repository limits"); a comment there cannot be placed, and a patch that size is of no use
# to the model either. 500 KB is read as 500,000 bytes: erring low keeps `locate` honest.
MAX_FILE_PATCH_BYTES = 500_000
MAX_FILE_PATCH_LINES = 20_000

# git calls a file binary when its first 8,000 bytes hold a NUL (xdiff's FIRST_FEW_BYTES).
BINARY_SNIFF_BYTES = 8000

_FILE_HEADER = b"diff --git "


class PatchError(ReviewerError):
    """The patch is not in the shape git prints; anchoring on it would put comments astray."""


@dataclass
class _Header:
    """What a file's extended header lines said; paths are raw bytes, still prefixed."""

    git_line: bytes = b""
    minus: bytes | None = None  # the --- name, None when absent
    plus: bytes | None = None
    moved_from: bytes | None = None  # rename from / copy from
    moved_to: bytes | None = None
    status: Status = "modified"
    old_mode: str | None = None
    new_mode: str | None = None
    index_mode: str | None = None
    similarity: int | None = None
    binary: bool = False


def parse_patch(
    raw: bytes,
    *,
    start: int = 0,
    max_file_patch_bytes: int = MAX_FILE_PATCH_BYTES,
    max_file_patch_lines: int = MAX_FILE_PATCH_LINES,
    modes: Mapping[str, tuple[str | None, str | None]] | None = None,
) -> list[FileChange]:
    """Parse `git diff` output (a/ b/ prefixes) into files; text before the first file is
    ignored. `modes` (path -> old, new mode, from `--raw`) fills in the modes that a patch
    leaves out: a rename without edits says nothing about the file's mode."""
    files = []
    for begin, end in _file_spans(raw, start):
        change = _parse_file(raw[begin:end], max_file_patch_bytes, max_file_patch_lines)
        if modes and (change.old_mode is None or change.new_mode is None):
            known = modes.get(change.path)
            if known:
                change = replace(
                    change,
                    old_mode=change.old_mode or (None if change.status == "added" else known[0]),
                    new_mode=change.new_mode or (None if change.status == "deleted" else known[1]),
                )
        files.append(change)
    return files


def _file_spans(raw: bytes, start: int = 0) -> Iterator[tuple[int, int]]:
    # A line that starts "diff --git " can only be a file header: inside a hunk every line
    # starts with a space, +, - or \, and paths with a newline are quoted by git.
    if not raw.startswith(_FILE_HEADER, start):
        found = raw.find(b"\n" + _FILE_HEADER, start)
        if found < 0:
            return
        start = found + 1
    while True:
        nxt = raw.find(b"\n" + _FILE_HEADER, start)
        if nxt < 0:
            yield start, len(raw)
            return
        yield start, nxt + 1
        start = nxt + 1


def _parse_file(section: bytes, max_bytes: int, max_lines: int) -> FileChange:
    body_at = section.find(b"\n@@ ")
    head = _parse_header(section if body_at < 0 else section[:body_at])
    old_path, new_path = _paths(head)
    path = old_path if head.status == "deleted" else new_path
    if path is None:
        raise PatchError(f"cannot read the file names of a patch: {head.git_line[:200]!r}")
    old_mode, new_mode = head.old_mode, head.new_mode
    if head.index_mode is not None:  # "index 1a2b..3c4d 100644": an unchanged mode
        old_mode, new_mode = old_mode or head.index_mode, new_mode or head.index_mode
    common = {
        "path": path,
        "old_path": None if head.status == "added" else old_path,
        "status": head.status,
        "old_mode": None if head.status == "added" else old_mode,
        "new_mode": None if head.status == "deleted" else new_mode,
        "binary": head.binary,
        "similarity": head.similarity,
    }
    if body_at < 0:
        return FileChange(**common)
    body = section[body_at + 1 :]
    if len(section) > max_bytes or body.count(b"\n") > max_lines:
        # Every hunk line follows a newline, so counting "\n+" and "\n-" in the body counts
        # added and deleted lines at memchr speed, without building any of them.
        additions, deletions = body.count(b"\n+"), body.count(b"\n-")
        return FileChange(**common, additions=additions, deletions=deletions, oversized=True)
    hunks, additions, deletions = parse_hunks(body, path)
    return FileChange(**common, hunks=hunks, additions=additions, deletions=deletions)


def _parse_header(block: bytes) -> _Header:
    head = _Header()
    for line in block.split(b"\n"):
        if line.startswith(b"diff --git "):
            head.git_line = line[11:]
        elif line.startswith(b"index "):
            parts = line.split(b" ")
            if len(parts) == 3:
                head.index_mode = parts[2].decode("ascii")
        elif line.startswith(b"--- "):
            head.minus = line[4:]
        elif line.startswith(b"+++ "):
            head.plus = line[4:]
        elif line.startswith(b"old mode "):
            head.old_mode = line[9:].decode("ascii")
        elif line.startswith(b"new mode "):
            head.new_mode = line[9:].decode("ascii")
        elif line.startswith(b"deleted file mode "):
            head.status, head.old_mode = "deleted", line[18:].decode("ascii")
        elif line.startswith(b"new file mode "):
            head.status, head.new_mode = "added", line[14:].decode("ascii")
        elif line.startswith((b"rename from ", b"copy from ")):
            head.status = "renamed" if line[0] == ord("r") else "copied"
            head.moved_from = line[line.index(b" from ") + 6 :]
        elif line.startswith((b"rename to ", b"copy to ")):
            head.moved_to = line[line.index(b" to ") + 4 :]
        elif line.startswith(b"similarity index "):
            head.similarity = int(line[17:].rstrip(b"%"))
        elif line.startswith(b"Binary files "):
            head.binary = True
        elif line.startswith(b"GIT binary patch"):
            head.binary = True
            break  # base85 data follows, nothing more to read
    return head


def _paths(head: _Header) -> tuple[str | None, str | None]:
    """The old and new paths, from the most exact source the header has."""
    old = new = None
    if head.moved_from is not None and head.moved_to is not None:
        old, new = unquote(head.moved_from), unquote(head.moved_to)
    else:
        if head.minus is not None:
            old = _strip_prefix(_name_field(head.minus), b"a/")
        if head.plus is not None:
            new = _strip_prefix(_name_field(head.plus), b"b/")
        if (head.minus is None or head.plus is None) and head.git_line:
            # Mode-only, binary, empty and pure-rename patches have no ---/+++ lines; their
            # two names are then equal, which makes the `diff --git` line unambiguous.
            a_name, b_name = _split_git_line(head.git_line)
            if head.minus is None:
                old = _strip_prefix(a_name, b"a/")
            if head.plus is None:
                new = _strip_prefix(b_name, b"b/")
        # A /dev/null side is the side of an added or deleted file: the other name stands.
        old, new = old if old is not None else new, new if new is not None else old
    return _decode_path(old), _decode_path(new)


def _name_field(value: bytes) -> bytes | None:
    if value == b"/dev/null":
        return None
    # git ends a name holding a space with a tab (like GNU diff); a name that really ends
    # with a tab would have been quoted, its tab escaped.
    if value.endswith(b"\t"):
        value = value[:-1]
    return unquote(value)


def _split_git_line(rest: bytes) -> tuple[bytes, bytes]:
    if rest.startswith(b'"'):
        first, end = _read_quoted(rest, 0)
        second = rest[end + 1 :]
        return first, unquote(second) if second.startswith(b'"') else second
    half = (len(rest) - 1) // 2
    if rest[half : half + 1] == b" " and rest[2:half] == rest[half + 3 :]:
        return rest[:half], rest[half + 1 :]
    cut = rest.rfind(b' "b/') if rest.endswith(b'"') else rest.find(b" b/")
    if cut < 0:
        raise PatchError(f"cannot read the file names of a patch: {rest[:200]!r}")
    second = rest[cut + 1 :]
    return rest[:cut], unquote(second) if second.startswith(b'"') else second


def _strip_prefix(name: bytes | None, prefix: bytes) -> bytes | None:
    if name is None:
        return None
    return name[len(prefix) :] if name.startswith(prefix) else name


def _decode_path(name: bytes | None) -> str | None:
    # surrogateescape, like the workspace: a name that is not UTF-8 still round-trips to
    # the exact bytes on disk and in git (os.fsencode gives them back).
    return None if name is None else name.decode("utf-8", "surrogateescape")


_ESCAPES = {ord(k): v for k, v in zip('abtnvfr"\\', b'\a\b\t\n\v\f\r"\\', strict=True)}


def unquote(value: bytes) -> bytes:
    """A path as git prints it, C-quoted or bare, back to its exact bytes."""
    if not value.startswith(b'"'):
        return value
    name, end = _read_quoted(value, 0)
    if end != len(value):
        raise PatchError(f"unexpected text after a quoted path: {value[:200]!r}")
    return name


def _read_quoted(data: bytes, start: int) -> tuple[bytes, int]:
    out = bytearray()
    i = start + 1
    size = len(data)
    while i < size:
        byte = data[i]
        if byte == 0x22:  # closing quote
            return bytes(out), i + 1
        if byte == 0x5C and i + 1 < size:  # backslash
            nxt = data[i + 1]
            if 0x30 <= nxt <= 0x37:  # \ooo: one byte in octal, always three digits
                out.append(int(data[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            if nxt not in _ESCAPES:
                raise PatchError(f"unknown escape in a quoted path: {data[:200]!r}")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(byte)
        i += 1
    raise PatchError(f"unterminated quoted path: {data[:200]!r}")


def parse_hunks(body: bytes, path: str = "") -> tuple[tuple[Hunk, ...], int, int]:
    """The hunks of one file (from its first `@@` line on), and its added and deleted counts.

    Each hunk keeps its text as the patch has it (Hunk builds lines on demand), so parsing
    is finding the `@@` lines and counting markers, all with str methods in C: no object per
    line. Every hunk must hold exactly the lines its header announces."""
    # One decode for the whole body: "\n" is never part of a multi-byte sequence and the
    # replacement decoder never swallows it, so splitting after decoding gives the same lines.
    text = body.decode("utf-8", "replace")
    if text.endswith("\n"):
        text = text[:-1]
    if not text:
        return (), 0, 0
    if not text.startswith("@"):
        line = text.split("\n", 1)[0]
        raise PatchError(f"unexpected line in the patch of '{path}': {line[:200]!r}")
    hunks: list[Hunk] = []
    additions = deletions = 0
    start = 0
    while start >= 0:
        header_end = text.find("\n", start)
        header_line = text[start:] if header_end < 0 else text[start:header_end]
        old_start, old_count, new_start, new_count, section = _hunk_header(header_line, path)
        if header_end < 0:
            hunk_body, start = "", -1
        else:
            following = text.find("\n@", header_end)
            end = len(text) if following < 0 else following
            hunk_body = text[header_end + 1 : end]
            start = -1 if following < 0 else following + 1
        added, removed = _check_hunk(hunk_body, old_count, new_count, header_line, path)
        additions += added
        deletions += removed
        hunks.append(Hunk(old_start, old_count, new_start, new_count, section, body=hunk_body))
    return tuple(hunks), additions, deletions


# A hunk line starts with " ", "+", "-" or "\\" (or is empty: diff.suppressBlankEmpty).
_BAD_LINE = re.compile(r"\n[^ +\-\\\n]")


def _check_hunk(
    hunk_body: str, old_count: int, new_count: int, header: str, path: str
) -> tuple[int, int]:
    """(added, removed) of a hunk's text, after checking it is the hunk its header says."""
    if not hunk_body:
        lines = added = removed = markers = 0
    else:
        framed = "\n" + hunk_body
        bad = _BAD_LINE.search(framed)
        if bad is not None:
            line = framed[bad.start() + 1 :].split("\n", 1)[0]
            raise PatchError(f"unexpected line in the patch of '{path}': {line[:200]!r}")
        lines = hunk_body.count("\n") + 1
        added = framed.count("\n+")
        removed = framed.count("\n-")
        markers = framed.count("\n\\")
    context = lines - added - removed - markers
    if removed + context != old_count or added + context != new_count:
        raise PatchError(
            f"a hunk of '{path}' does not hold the lines its header announces ({header[:200]})"
        )
    return added, removed


def _hunk_header(line: str, path: str) -> tuple[int, int, int, int, str]:
    # "@@ -12,5 +12,7 @@ def name():"; a count of 1 may be left out ("@@ -1 +1 @@").
    end = line.find(" @@", 3)
    if not line.startswith("@@ -") or end < 0:
        raise PatchError(f"bad hunk header in the patch of '{path}': {line[:200]!r}")
    old, plus, new = line[4:end].partition(" +")
    old_start, _, old_count = old.partition(",")
    new_start, _, new_count = new.partition(",")
    try:
        numbers = (
            int(old_start),
            int(old_count) if old_count else 1,
            int(new_start),
            int(new_count) if new_count else 1,
        )
    except ValueError:
        numbers = ()
    if not plus or len(numbers) != 4 or min(numbers) < 0:
        raise PatchError(f"bad hunk header in the patch of '{path}': {line[:200]!r}")
    section = line[end + 3 :]
    return (*numbers, section[1:] if section.startswith(" ") else section)
