"""The table of invisible characters (reviewer/safety/invisible.py), and where ordinary writing
keeps one: the hostile case and the plain real case that would fool the rule, each way."""

from __future__ import annotations

import itertools
import unicodedata

import pytest

from reviewer.safety.invisible import INVISIBLE, VISIBLE_FORMAT, show_invisible


def _covers(rows: tuple[tuple[int, int, str], ...], code: int) -> bool:
    return any(first <= code <= last for first, last, _ in rows)


def test_every_format_character_is_in_the_table_or_drawn() -> None:
    missing = [
        f"U+{code:04X} {unicodedata.name(chr(code), '?')}"
        for code in range(0x110000)
        if unicodedata.category(chr(code)) == "Cf"
        and not _covers(INVISIBLE, code)
        and not _covers(VISIBLE_FORMAT, code)
    ]
    assert missing == []


def test_the_rows_do_not_overlap() -> None:
    rows = sorted(INVISIBLE + VISIBLE_FORMAT)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(rows))


@pytest.mark.parametrize(
    "hostile, shown",
    [
        ("ghp_\u200babc", "ghp_<U+200B>abc"),  # inside a token
        ("\U000e0069\U000e0067\U000e006e", "<U+E0069><U+E0067><U+E006E>"),  # tag ASCII
        ("a\ufe0fb", "a<U+FE0F>b"),  # a selector after ASCII hides a bit
        ("\u26a0\ufe0f\ufe0f", "\u26a0<U+FE0F><U+FE0F>"),  # a run of selectors: all of it
        ("\u26a0\ufe01", "\u26a0<U+FE01>"),  # a selector no emoji uses
        ("@\u200doctocat", "@<U+200D>octocat"),  # a joiner after ASCII
        ("x\u202ey", "x<U+202E>y"),  # bidirectional override
        ("pass\u00adword \u3164 \u2060", "pass<U+00AD>word <U+3164> <U+2060>"),
    ],
)
def test_hidden_characters_are_shown(hostile: str, shown: str) -> None:
    assert show_invisible(hostile) == shown


@pytest.mark.parametrize(
    "plain",
    [
        "\u26a0\ufe0f Warning",  # ⚠️: an emoji's presentation selector
        "1\ufe0f\u20e3 first",  # keycap 1️⃣
        "\U0001f469\u200d\U0001f4bb coder",  # 👩‍💻: an emoji sequence
        "\U0001f3f3\ufe0f\u200d\U0001f308 flag",  # 🏳️‍🌈: selector, then joiner
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, with its non-joiner
        "\u0915\u094d\u200d\u0937",  # Devanagari, a joiner between letters
        "caf\u00e9 \u0600\u0661",  # an accent; an Arabic number sign, which is drawn
    ],
)
def test_ordinary_writing_is_left_as_written(plain: str) -> None:
    assert show_invisible(plain) == plain
