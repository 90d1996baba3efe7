"""Counted nouns, the one way every message and report says "1 file" and "2 files"."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`1 file`, `2 files`, `1,200 files`; `many` for a plural not made with -s
    (`plural(n, "entry", "entries")`)."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"
