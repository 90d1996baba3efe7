"""How the noise table reads a finding's words, and when its words cannot decide.

A word list can recognise a remark ("Line too long", "Function added"), but it cannot tell
that a finding names no real problem: "SQL injection via string formatting" holds
"formatting", and a weak model files `os.system(input())` under category style. So the words
decide against a finding (discard it, lower it) only when all of these hold, and otherwise
the finding is sent to verification, where a model reads the code:

- the title says the remark and nothing else: once the class's phrases (`title_words`, or
  the `starts_with` phrase it opens with: "Consider: build_query() lets any user read every
  table" keeps "lets"), code (`...`, identifiers, numbers) and the table's filler words
  ("the", "line", "missing") are taken out, no word is left ("Whitespace in filename splits
  arguments" keeps "splits");
- the body says nothing beside the remark either, read the same way with all the class's
  phrases ("Trailing whitespace" whose body says "This string reaches `os.system` with what
  the user typed" keeps "reaches"): a title alone never decides against what the body says;
- neither the title nor the body names a concrete failure (the table's failure words, read
  as word starts: "inject" is "injection", "injected", "sql_injection"); a negation is not
  read ("no crash" names a crash: the verifier decides);
- the text is plain: after folding (compatibility forms such as fullwidth or mathematical
  letters, accents, invisible characters, case), every letter is ASCII. A lookalike letter
  (a Cyrillic i, U+0456, in "injection") or any other script is text the English lists cannot read.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property

# A code span, kept whole: what is inside is code, not words.
_CODE_SPAN = re.compile(r"`+[^`]*`+")
# A chunk of a title that is code, a number or punctuation, not a word: it holds a digit or
# one of these marks, or a capital inside it (camelCase), or no letter at all.
_CODE_MARK = re.compile(r"[0-9_./\\()\[\]{}<>=:#@$%&*+|~^`]")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
# Punctuation around a word ("(131", "call,", "Note:").
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")


def plain_text(text: str) -> str:
    """`text` as the lists read it: compatibility forms folded (fullwidth, mathematical and
    superscript letters, ligatures), accents and other combining marks and invisible
    characters (zero-width spaces, joiners, soft hyphens) removed. Case is kept."""
    text = unicodedata.normalize("NFKC", text)
    kept = (
        ch
        for ch in unicodedata.normalize("NFD", text)
        if unicodedata.category(ch) not in ("Mn", "Me", "Cf")
    )
    return unicodedata.normalize("NFC", "".join(kept))


def readable(text: str) -> bool:
    """Whether every letter of `text` (after plain_text) is ASCII: only such text can be
    read by English word lists; anything else (a lookalike letter, another script) is not
    decided by them."""
    return all(ch.isascii() for ch in text if ch.isalpha())


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A phrase as whole words (not inside an identifier: `formatting_helper` does not say
    'formatting'), any case, any spaces between its words."""
    words = r"\s+".join(re.escape(word) for word in phrase.split())
    return re.compile(rf"(?<![\w-]){words}(?![\w-])", re.IGNORECASE)


def failure_pattern(entries: tuple[str, ...]) -> re.Pattern[str]:
    """The table's failure words as one pattern: `stem*` is any word starting with the
    stem, a plain entry is the whole word. A word starts after anything but a letter or a
    digit, so a failure word inside an identifier (`sql_injection`, `crash_handler`) counts:
    the list errs toward verification, never toward a discard."""
    parts = []
    for entry in entries:
        stem = entry.endswith("*")
        words = r"[\s-]+".join(re.escape(word) for word in entry.rstrip("*").split())
        parts.append(words + (r"[a-z0-9]*" if stem else r"(?![a-z0-9])"))
    return re.compile(rf"(?<![a-z0-9])(?:{'|'.join(parts)})", re.IGNORECASE)


@dataclass(frozen=True)
class Words:
    """The table's lists, compiled once: failure words (a list of entries, `stem*` or whole
    words) and filler words (what a title may hold beside a remark's phrase)."""

    failure: tuple[str, ...]
    filler: frozenset[str]

    @cached_property
    def _failure(self) -> re.Pattern[str]:
        return failure_pattern(self.failure)

    def failure_named(self, text: str) -> str:
        """The first concrete failure `text` names ("injection"), or ""."""
        found = self._failure.search(plain_text(text))
        return found.group(0).lower() if found else ""

    def said_beside(self, title: str, phrases: tuple[re.Pattern[str], ...]) -> str:
        """The first word of `title` that is neither one of `phrases`, nor code, nor filler:
        what the title says beside the remark ("" when nothing)."""
        text = plain_text(title)
        for pattern in phrases:
            text = pattern.sub(" ", text)
        for chunk in _CODE_SPAN.sub(" ", text).split():
            word = _EDGE.sub("", chunk)
            if not word or not any(ch.isalpha() for ch in word):
                continue
            if _CODE_MARK.search(word) or _INNER_CAPITAL.search(word):
                continue
            if word.lower() not in self.filler:
                return word
        return ""
