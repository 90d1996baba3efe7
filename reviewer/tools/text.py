"""Turning file bytes into text the model can read: decoding, binary detection, long lines,
control characters, and names (`quote_path`: the tool-output sink for every repository path a
tool prints; `echo_path` for a path the model gave, echoed in a message)."""

from __future__ import annotations

from reviewer.workspace.paths import echo_path, quote_path

__all__ = ["echo_path", "quote_path"]

MAX_LINE_CHARS = 2000
# git's own heuristic: a NUL byte in the first 8,000 bytes means binary.
_BINARY_SNIFF_BYTES = 8000


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_SNIFF_BYTES]


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


# Control characters in file text, a commit subject or an author are shown as the Unicode
# symbol for them (\r as ␍, ESC as ␛, DEL as ␡; C1 controls as U+FFFD): a reader that breaks
# lines at \r, \v, \f, \x1c-\x1e, U+0085 or U+2028 (str.splitlines does) must not see a
# line the text did not have, such as a forged end of the tool output, and an escape
# sequence must not act. Tabs stay; the character count stays, one symbol per character.
_VISIBLE = {
    **{code: 0x2400 + code for code in range(0x20) if code != ord("\t")},
    0x7F: 0x2421,
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),
    0x2028: 0x2424,
    0x2029: 0x2424,
}


def visible(text: str) -> str:
    """One line of text as one line of tool output (see _VISIBLE)."""
    return text.translate(_VISIBLE)


def cut_line(line: str) -> str:
    """A line of text for tool output: control characters made visible, and a line over
    MAX_LINE_CHARS keeps its start and says how long it was."""
    line = visible(line)
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]} … [line cut: {len(line):,} characters]"


def split_lines(text: str) -> list[str]:
    """Lines without their endings; `\\r\\n` counts as one ending, as in git."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size:,} bytes"
    value = float(size) / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
