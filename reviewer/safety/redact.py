"""Keeping secrets out of what the model reads and what the bot posts.

Two sources: values of the process environment that look secret (the bot runs beside
GITHUB_TOKEN and an API key), and well-known secret formats found in repository files
(secret_formats.py: a row each, with its source).

Speed. Every diff, file and tool output the model reads passes through `Redactor`, so it
must keep up with `git diff`: one `re.sub` over an alternation of all the formats ran at
~3 MB/s, because `re` tries the whole alternation at nearly every character. Instead, every
format names the literal text ("anchors") each of its matches starts with; one prefilter
regex finds where an anchor sits (`re` skips quickly to the next of a few rare characters
of the anchors, then checks the rest of an anchor around it), and the full alternation is
tried only at those places, in order, exactly as `re.sub` would have tried it there: the
output is the same (the tests compare the two on generated texts). 75-140 MB/s on real diffs
(bench/bench_redact.py; 74-115 MB/s since the GitLab rows and the invisible characters).
Standard library only: it is fast enough, so no multi-pattern search package is needed.

Invisible characters. A zero-width space (or a soft hyphen, a word joiner, a tag character:
invisible.py's table) inside a token hides it from every pattern while the token still
works once copied. When such a character follows one a secret can hold, the text is also
matched with the invisible characters removed, and each secret found so is redacted over
its whole span in the text, the invisible characters in it included.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from reviewer.safety.invisible import INVISIBLE_RUN, INVISIBLE_SET
from reviewer.safety.secret_formats import FORMATS, KEY_FOOTER, KEY_HEADER
from reviewer.safety.shapes import map_strings

REDACTED = "[REDACTED]"

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH(?!OR)|SESSION"
    r"|COOKIE|(?:^|_)(?:KEY|PASS|PWD|PIN|SALT)(?:$|_)",
    re.IGNORECASE,
)
# Names that look secret by the rule above but never hold a secret: the shell's working
# directories (POSIX sh sets PWD and OLDPWD), whose values are in every path the bot prints.
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})
# Long opaque values are redacted whatever their variable is called: a token passed under an
# innocent name is still a token. Paths, URLs without credentials and lists are not opaque.
_OPAQUE_VALUE = re.compile(r"[A-Za-z0-9_\-+=/.]{24,}")
_MIN_SECRET_LEN = 6
_HEX = re.compile(r"[0-9a-f]+")


# What every match is checked with; its order decides between formats that match at the
# same place, as it did when this was the one regex run over the whole text.
_FORMAT_RE = re.compile("|".join(f"(?:{row.pattern})" for row in FORMATS), re.DOTALL)

# The characters of the anchors, rarest first in source code and diffs (measured on sympy's
# history, this repository's and Python's standard library; the digits, `R`, `=`, `f` and `d`
# of the GitLab anchors placed by their counts in this repository's `git log -p`); unlisted
# ones count as rarest. `re` finds the prefilter's next candidate by testing each character
# of the text against the set of characters the anchors are searched by, then tries a match
# there: common ones would stop it at every other word.
_COMMONEST_LAST = "JKBGzC98I3NR4E1kv/SA=:xybg-.h_mufpcdloiansrte"


def _cost(char: str) -> int:
    """How much searching for `char` costs, relatively."""
    return _COMMONEST_LAST.find(char) + 2


def _usable(anchor: str, ignore_case: bool) -> set[str]:
    """The characters of `anchor` it may be searched by."""
    # Compared ignoring case, a letter also matches its other cases (and `re` adds a few
    # non-ASCII look-alikes), so the character found would not tell which anchor it is:
    # such an anchor is searched by an ASCII character that has no case, like `_`.
    usable = {c for c in anchor if not ignore_case or (c.isascii() and not c.isalpha())}
    if not usable:
        raise ValueError(f"anchor {anchor!r} has no character the prefilter can search for")
    return usable


def _choose_pivots(anchors: list[tuple[str, bool]]) -> list[int]:
    """For each (anchor, ignore_case), the index of the character it is searched by.

    Few and rare characters: a greedy weighted set cover, so anchors share characters
    (`_` serves every `..._` anchor) instead of each taking its own rarest one.
    """
    usable = [_usable(anchor, ignore_case) for anchor, ignore_case in anchors]
    chosen: set[str] = set()
    uncovered = list(range(len(anchors)))
    while uncovered:
        counts: dict[str, int] = {}
        for index in uncovered:
            for char in usable[index]:
                counts[char] = counts.get(char, 0) + 1
        best = min(counts, key=lambda char: (_cost(char) / counts[char], char))
        chosen.add(best)
        uncovered = [index for index in uncovered if best not in usable[index]]
    return [
        min(
            (i for i, char in enumerate(anchor) if char in chosen and char in usable[index]),
            key=lambda i, anchor=anchor: _cost(anchor[i]),
        )
        for index, (anchor, _) in enumerate(anchors)
    ]


def _build_prefilter() -> tuple[re.Pattern[str], dict[str, tuple[int, ...]]]:
    """The prefilter regex, and for each character it finds, where a match may start
    relative to it (an offset per anchor searched by that character)."""
    anchors = [(row, anchor) for row in FORMATS for anchor in row.anchors]
    pivots = _choose_pivots([(anchor, row.ignore_case) for row, anchor in anchors])
    # pivot -> (text before it, ignore case) -> the texts that may follow it
    contexts: dict[str, dict[tuple[str, bool], list[str]]] = {}
    offsets: dict[str, set[int]] = {}
    for (row, anchor), i in zip(anchors, pivots, strict=True):
        before = contexts.setdefault(anchor[i], {})
        before.setdefault((anchor[:i], row.ignore_case), []).append(anchor[i + 1 :])
        offsets.setdefault(anchor[i], set()).add((len(anchor) if row.after_anchor else 0) - i)
    branches = []
    for pivot, followers in contexts.items():
        # The rest of each anchor is checked around the character found without consuming
        # any more text, so that no character of the text goes untried. Anchors with the
        # same text before the pivot share one lookbehind and an alternation of what may
        # follow, which `re` folds into a few character tests.
        alternatives = []
        for (head, ignore_case), tails in followers.items():
            context = ""
            if "" not in tails:
                context += "(?=" + "|".join(re.escape(tail) for tail in tails) + ")"
            if head:
                context += f"(?<={re.escape(head + pivot)})"
            if ignore_case and context:
                context = f"(?i:{context})"
            alternatives.append(context)
        # Every branch starts with a literal character: `re` then skips to the next place
        # that has one of them without trying the branches anywhere else.
        rest = "" if "" in alternatives else "(?:" + "|".join(alternatives) + ")"
        branches.append(re.escape(pivot) + rest)
    return re.compile("|".join(branches)), {c: tuple(sorted(d)) for c, d in offsets.items()}


_PREFILTER, _START_OFFSETS = _build_prefilter()
if FORMATS[0].pattern != rf"{KEY_HEADER}.*?({KEY_FOOTER}|\Z)":
    raise ValueError("the private-key row must stay first: _redact_formats relies on it")
_KEY_BEGIN = re.compile(KEY_HEADER)
_KEY_END = re.compile(KEY_FOOTER)


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The environment values that must never appear in output, longest first."""
    found: set[str] = set()
    for name, value in environ.items():
        value = value.strip()
        if len(value) < _MIN_SECRET_LEN:
            continue
        if name in _NOT_SECRET_NAMES:
            continue
        if _SECRET_NAME.search(name) or (_OPAQUE_VALUE.fullmatch(value) and not _is_path(value)):
            found.add(value)
    return tuple(sorted(found, key=len, reverse=True))


def _is_path(value: str) -> bool:
    """Paths and commit ids are not secrets, and are common in output."""
    if _HEX.fullmatch(value):
        return True
    return value.startswith(("/", "./", "~")) or (value.count("/") >= 2 and " " not in value)


@lru_cache(maxsize=16)
def _env_pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    if not values:
        return None
    return re.compile("|".join(re.escape(v) for v in values))


class Redactor:
    """Replaces secrets with a marker. Built once per run from the environment it started in."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._values = secret_values(os.environ if environ is None else environ)
        # The characters a secret may hold beyond printable ASCII other than space: the
        # environment's own, and the letters `re.IGNORECASE` matches to ASCII ones (the AWS
        # row ignores case): "the 52 ASCII letters and 4 additional non-ASCII letters"
        # (docs.python.org/3/library/re.html#re.I).
        self._held = frozenset("\u0130\u0131\u017f\u212a").union(
            char for value in self._values for char in value if not _printable_ascii(char)
        )

    def __call__(self, text: str) -> str:
        if not text.isascii() and self._hides(text):
            return _replaced(text, self._spans_through_invisible(text))
        # `in` is a fast substring search; a value absent from the text can never match, so
        # the alternation of the values present (in the same longest-first order) replaces
        # exactly what the alternation of all of them would.
        pattern = self._present(text)
        if pattern is not None:
            text = pattern.sub(REDACTED, text)
        return _redact_formats(text)

    def _hides(self, text: str) -> bool:
        """Whether a run of invisible characters sits between two characters a secret may
        hold: only there can it hide one (taking it out joins them). Between any others (an
        emoji's selector or joiner, a keycap's selector before U+20E3, a Persian non-joiner,
        a zero-width space beside a space) the text is matched as it is.

        Speed: a diff with one emoji is all stored four bytes a character, which `re` scans
        slowly (~100 MB/s for the next non-ASCII character; ~30 MB/s for a class as wide as
        the invisible characters'). Most pieces of it are ASCII still: a slice says so in C
        (`isascii`), and only the others are scanned."""
        for low in range(0, len(text), _PIECE):
            piece = text[low : low + _PIECE + 1]  # one more: the next piece's first neighbour
            if piece.isascii():
                continue
            for found in _NON_ASCII.finditer(piece, 1):
                at = low + found.start()
                if found.group() not in INVISIBLE_SET or text[at - 1] in INVISIBLE_SET:
                    continue  # not invisible, or inside a run (its first character decides)
                end = at + 1
                while end < len(text) and text[end] in INVISIBLE_SET:
                    end += 1
                if end < len(text) and self._holds(text[at - 1]) and self._holds(text[end]):
                    return True
        return False

    def _holds(self, char: str) -> bool:
        return _printable_ascii(char) or char in self._held

    def _present(self, text: str) -> re.Pattern[str] | None:
        """The alternation of the environment's secrets that occur in `text`, if any."""
        if not self._values:
            return None
        return _env_pattern(tuple(value for value in self._values if value in text))

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secrets of `text` are: environment values and formats."""
        pattern = self._present(text)
        spans = [match.span() for match in pattern.finditer(text)] if pattern else []
        return spans + _format_spans(text)

    def _spans_through_invisible(self, text: str) -> list[tuple[int, int]]:
        """The secrets of `text`, and those of `text` without its invisible characters, each
        over its whole span in `text` (the invisible characters inside it included)."""
        at: list[int] = []  # where each run of invisible characters was, in the stripped text
        removed: list[int] = []  # how many characters were removed up to the end of that run
        for run in INVISIBLE_RUN.finditer(text):
            at.append(run.start() - (removed[-1] if removed else 0))
            removed.append((removed[-1] if removed else 0) + run.end() - run.start())

        def original(index: int) -> int:
            run = bisect_right(at, index) - 1
            return index + (removed[run] if run >= 0 else 0)

        stripped = INVISIBLE_RUN.sub("", text)
        hidden = [(original(start), original(end - 1) + 1) for start, end in self._spans(stripped)]
        return self._spans(text) + hidden


_NON_ASCII = re.compile("[^\x00-\x7f]")


def _printable_ascii(char: str) -> bool:
    return "!" <= char <= "~"
_PIECE = 2048  # characters; measured on this repository's `git log -p` (1-64 KB)


def environment_redactor() -> Redactor:
    """The Redactor of the process environment as it is now; built again only when the
    environment changed (a sink may ask for it once per value)."""
    return _redactor_for(tuple(os.environ.items()))


@lru_cache(maxsize=4)
def _redactor_for(environ: tuple[tuple[str, str], ...]) -> Redactor:
    return Redactor(dict(environ))


def _redact_formats(text: str) -> str:
    """`_FORMAT_RE.sub(_replace_format, text)`, trying the regex only where an anchor is."""
    return _replaced(text, _format_spans(text))


def _format_spans(text: str) -> list[tuple[int, int]]:
    """Where `_FORMAT_RE.sub` would put a marker: the matches, in order, that it would find
    (less the name an AWS secret is assigned to, which stays), trying the regex only where
    an anchor is."""
    first = _PREFILTER.search(text)  # most texts have no anchor: the cheapest way to say so
    if first is None:
        return []
    starts: set[int] = set()
    for hit in _PREFILTER.finditer(text, first.start()):
        found = hit.start()
        for offset in _START_OFFSETS[hit.group()]:
            starts.add(found + offset)
    spans: list[tuple[int, int]] = []
    done = 0  # where the last match ended: `re.sub` resumes its search there
    for start in sorted(starts):
        # Places inside a match already found are skipped, as `re.sub` never looks there.
        # `match` with a position still sees the text before it, so `\b` and the lookbehind
        # of a format behave as in a search of the whole text.
        if start < done or start > len(text):
            continue
        if text.startswith("-----BEGIN", start) and (header := _KEY_BEGIN.match(text, start)):
            # The private-key row is the regex's first alternative, so it is the one that
            # matches here, and its `.*?` can only end at the first END line or at the end.
            # `re` would try the END pattern at each character of the block (~25 MB/s, for
            # the rest of the text when there is no END line); searching for it is the same.
            footer = _KEY_END.search(text, header.end())
            spans.append((start, footer.end() if footer else len(text)))
        else:
            match = _FORMAT_RE.match(text, start)
            if match is None:
                continue
            kept = _AWS_SECRET_PREFIX.match(match.group(0))
            spans.append((start + (kept.end() if kept else 0), match.end()))
        done = spans[-1][1]
    return spans


def _replaced(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each span (overlapping ones joined) replaced by one marker."""
    if not spans:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in sorted(spans):
        if end <= done:
            continue
        if start >= done:  # touching ones stay two markers, as `re.sub` writes them
            pieces += [text[done:start], REDACTED]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


# Keep the assignment prefix of `aws_secret_access_key = ...` so the line still reads.
_AWS_SECRET_PREFIX = re.compile(r"(?i)aws_secret_access_key\s*[=:]\s*[\"']?")


# What a line of a PEM body looks like; used to decide whether a search hit needs a look at
# its whole file.
PEM_BODY_LINE = re.compile(r"^\s*[A-Za-z0-9+/=]{16,}\s*$")


def mask_private_keys(text: str) -> str:
    """Every line of a private-key block becomes [REDACTED], keeping the line count.

    The pattern redactor needs a block's BEGIN line in the same text; a tool that shows a
    range of lines (read_file_lines, blame, a search hit) may show body lines without it.
    Masking the file's text before any tool slices it closes that gap.
    """
    if "PRIVATE KEY" not in text:
        return text
    lines = text.split("\n")
    inside = False
    for index, line in enumerate(lines):
        if not inside and _KEY_BEGIN.search(line):
            inside = True
        if inside:
            ending = _KEY_END.search(line) is not None
            lines[index] = REDACTED + ("\r" if line.endswith("\r") else "")
            inside = not ending
    return "\n".join(lines)


def redact_values(value: Any, redact: Callable[[str], str]) -> Any:
    """Every string inside `value` (dataclasses, mappings, lists, tuples) redacted, names
    included; the shape kept. Reports and transcripts pass through this before they are
    written anywhere."""
    return map_strings(value, redact)
