"""Turning file bytes into text the model can read: decoding, binary detection, long lines,
and names (`quote_path`: the tool-output sink for every repository path a tool prints)."""

from __future__ import annotations

from reviewer.workspace.paths import quote_path

__all__ = ["quote_path"]

MAX_LINE_CHARS = 2000
# git's own heuristic: a NUL byte in the first 8,000 bytes means binary.
_BINARY_SNIFF_BYTES = 8000


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_SNIFF_BYTES]


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


def cut_line(line: str) -> str:
    """A line over MAX_LINE_CHARS keeps its start and says how long it was."""
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
