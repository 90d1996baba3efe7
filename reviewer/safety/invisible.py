"""Characters that show nothing where they stand: one table, two uses.

A zero-width space inside `ghp_...` hides a token from a pattern while a reader (or a tool
that copies the text) still gets the token; a right-to-left override reorders what a reader
sees (Trojan source, CVE-2021-42574); tag characters spell hidden ASCII. So:
- redact.py matches secrets in the text with these characters removed, and redacts the whole
  span they sat in (`INVISIBLE_RUN`);
- sinks.clean_text, the one way untrusted text reaches a terminal, a log line or a page
  (mdtext.neutralize and mdsafe.escape_text call it), shows each one as `<U+XXXX>`
  (`SHOWN`), except where it is part of ordinary writing (`_KEPT`).

The table is Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt; UAX #44
§5.7.2: "should be ignored in rendering unless explicitly supported"), plus the interlinear
annotation characters, which hide the text between them. tests/test_invisible.py checks
that every format character (category Cf) is in it or in `VISIBLE_FORMAT`.
"""

from __future__ import annotations

import re

# (first, last, what): code points that render as nothing.
INVISIBLE: tuple[tuple[int, int, str], ...] = (
    (0x00AD, 0x00AD, "soft hyphen"),
    (0x034F, 0x034F, "combining grapheme joiner"),
    (0x061C, 0x061C, "Arabic letter mark (bidirectional)"),
    (0x115F, 0x1160, "Hangul choseong and jungseong fillers"),
    (0x17B4, 0x17B5, "Khmer inherent vowels"),
    (0x180B, 0x180F, "Mongolian free variation selectors and vowel separator"),
    (0x200B, 0x200F, "zero-width space, non-joiner and joiner; left-to-right, right-to-left marks"),
    (0x202A, 0x202E, "bidirectional embeddings and overrides"),
    (0x2060, 0x206F, "word joiner, invisible operators, bidirectional isolates, deprecated"),
    (0x3164, 0x3164, "Hangul filler"),
    (0xFE00, 0xFE0F, "variation selectors 1-16"),
    (0xFEFF, 0xFEFF, "zero-width no-break space (byte order mark)"),
    (0xFFA0, 0xFFA0, "halfwidth Hangul filler"),
    (0xFFF0, 0xFFF8, "reserved, default ignorable"),
    (0xFFF9, 0xFFFB, "interlinear annotation anchor, separator, terminator"),
    (0x1BCA0, 0x1BCA3, "shorthand format controls"),
    (0x1D173, 0x1D17A, "musical symbol format controls"),
    (0xE0000, 0xE0FFF, "tag characters (hidden ASCII), variation selectors 17-256, reserved"),
)
# Format characters that are drawn (signs spanning the digits after them, hieroglyph layout
# controls): shown as written, never removed.
VISIBLE_FORMAT: tuple[tuple[int, int, str], ...] = (
    (0x0600, 0x0605, "Arabic number signs"),
    (0x06DD, 0x06DD, "Arabic end of ayah"),
    (0x070F, 0x070F, "Syriac abbreviation mark"),
    (0x0890, 0x0891, "Arabic pound and piastre marks above"),
    (0x08E2, 0x08E2, "Arabic disputed end of ayah"),
    (0x110BD, 0x110BD, "Kaithi number sign"),
    (0x110CD, 0x110CD, "Kaithi number sign above"),
    (0x13430, 0x1343F, "Egyptian hieroglyph format controls"),
)


def _class(rows: tuple[tuple[int, int, str], ...]) -> str:
    return "".join(
        re.escape(chr(first)) + (f"-{re.escape(chr(last))}" if last != first else "")
        for first, last, _ in rows
    )


INVISIBLE_CLASS = _class(INVISIBLE)
# The same as a set: `INVISIBLE_SET.isdisjoint(text)` says "none here" at ~600 MB/s, where
# `re` scans non-ASCII text for a class this wide at ~30 MB/s.
INVISIBLE_SET = frozenset(
    chr(code) for first, last, _ in INVISIBLE for code in range(first, last + 1)
)
INVISIBLE_CHAR = re.compile(f"[{INVISIBLE_CLASS}]")
INVISIBLE_RUN = re.compile(f"[{INVISIBLE_CLASS}]+")

# Where an invisible character is part of ordinary writing, and shown as written (the plain
# real cases): an emoji's presentation selector (⚠️ is U+26A0 U+FE0F; a keycap 1️⃣ is
# `1` U+FE0F U+20E3), the joiner inside an emoji sequence (👩‍💻) or between letters of a
# script that joins (Devanagari, Persian), the non-joiner between such letters. Each is
# one character between visible non-ASCII ones, so at most one bit hides in each place; a
# run of them, one after ASCII (inside `ghp_...`), a selector other than these two, and
# every other character of the table are shown.
_SEEN = f"[^\\x00-\\x7f{INVISIBLE_CLASS}]"  # a visible non-ASCII character
_KEPT = (
    f"(?<={_SEEN})[\ufe0e\ufe0f](?![\ufe00-\ufe0f\U000e0100-\U000e01ef])",
    "(?<=[0-9#*])\ufe0f(?=\u20e3)",
    f"(?<={_SEEN}|\ufe0f)[\u200c\u200d](?={_SEEN})",
)
SHOWN = re.compile(f"(?!{'|'.join(_KEPT)})[{INVISIBLE_CLASS}]")


def show_invisible(text: str) -> str:
    """Every invisible character of `text` (but those of ordinary writing) as `<U+XXXX>`."""
    if text.isascii() or INVISIBLE_SET.isdisjoint(text):
        return text
    return SHOWN.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", text)
