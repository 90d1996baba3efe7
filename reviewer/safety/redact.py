"""Keeping secrets out of what the model reads and what the bot posts.

Two sources: values of the process environment that look secret (the bot runs beside
GITHUB_TOKEN and an API key), and well-known secret formats found in repository files.

Speed. Every diff, file and tool output the model reads passes through `Redactor`, so it
must keep up with `git diff`: one `re.sub` over an alternation of all the formats ran at
~3 MB/s, because `re` tries the whole alternation at nearly every character. Instead, every
format names the literal text ("anchors") each of its matches starts with; one prefilter
regex finds where an anchor sits (`re` skips quickly to the next of a few rare characters
of the anchors, then checks the rest of an anchor around it), and the full alternation is
tried only at those places, in order, exactly as `re.sub` would have tried it there: the
output is the same (the tests compare the two on generated texts). 75-140 MB/s on real diffs
(bench/bench_redact.py). Standard library only: it is fast enough, so no multi-pattern
search package is needed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

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


class _Format(NamedTuple):
    """One secret format: a row of `_FORMATS`."""

    name: str
    pattern: str
    # Literal text that every match starts with (one of these). Only where an anchor occurs
    # is the pattern tried, so a match without one would be missed: keep them exact.
    anchors: tuple[str, ...]
    # The anchor is the text just before a match (the pattern's lookbehind), not its start.
    after_anchor: bool = False
    # The anchor is compared as the pattern compares it, ignoring case (`re.IGNORECASE`).
    ignore_case: bool = False


# A private key block runs from its BEGIN line to its END line, or to the end of the text
# when it has none (a read cut at 50,000 characters can end inside a key).
_KEY_HEADER = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"
_KEY_FOOTER = r"-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"

_FORMATS: tuple[_Format, ...] = (
    # First: `_redact_formats` finds its end without the regex (see there).
    _Format("private key", rf"{_KEY_HEADER}.*?({_KEY_FOOTER}|\Z)", ("-----BEGIN",)),
    _Format(
        "GitHub token",
        r"\b(gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _Format("OpenAI key", r"\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}\b", ("sk-",)),
    _Format("Anthropic key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}\b", ("sk-ant-",)),
    _Format(
        "AWS access key id",
        r"\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    _Format(
        "AWS secret key",
        r"(?i:aws_secret_access_key)\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}",
        ("aws_secret_access_key",),
        ignore_case=True,
    ),
    _Format("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", ("xox",)),
    _Format(
        "Slack webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
        ("https://hooks.slack.com/services/",),
    ),
    _Format("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}\b", ("AIza",)),
    _Format(
        "Stripe key",
        r"\b[rs]k_(live|test)_[0-9A-Za-z]{16,}\b",
        ("rk_live_", "rk_test_", "sk_live_", "sk_test_"),
    ),
    _Format("GitLab token", r"\bglpat-[0-9A-Za-z_\-]{20,}\b", ("glpat-",)),
    _Format("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    _Format(
        "JSON web token",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b",
        ("eyJ",),
    ),
    _Format(
        "URL credentials",
        r"(?<=://)[^/\s:@]{1,128}:[^/\s@]{1,256}(?=@)",
        ("://",),
        after_anchor=True,
    ),
)
# What every match is checked with; its order decides between formats that match at the
# same place, as it did when this was the one regex run over the whole text.
_FORMAT_RE = re.compile("|".join(f"(?:{row.pattern})" for row in _FORMATS), re.DOTALL)

# The characters of the anchors, rarest first in source code and diffs (measured on sympy's
# history, this repository's and Python's standard library); unlisted ones count as rarest.
# `re` finds the prefilter's next candidate by testing each character of the text against
# the set of characters the anchors are searched by, then tries a match there: common ones
# would stop it at every other word.
_COMMONEST_LAST = "JKBGzCINEkv/SA:xybg-.h_mupcloiansrte"


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
    anchors = [(row, anchor) for row in _FORMATS for anchor in row.anchors]
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
if _FORMATS[0].pattern != rf"{_KEY_HEADER}.*?({_KEY_FOOTER}|\Z)":
    raise ValueError("the private-key row must stay first: _redact_formats relies on it")
_KEY_BEGIN = re.compile(_KEY_HEADER)
_KEY_END = re.compile(_KEY_FOOTER)


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

    def __call__(self, text: str) -> str:
        # `in` is a fast substring search; a value absent from the text can never match, so
        # the alternation of the values present (in the same longest-first order) replaces
        # exactly what the alternation of all of them would.
        if self._values:
            present = [value for value in self._values if value in text]
            if present:
                pattern = _env_pattern(tuple(present))
                assert pattern is not None
                text = pattern.sub(REDACTED, text)
        return _redact_formats(text)


def environment_redactor() -> Redactor:
    """The Redactor of the process environment as it is now; built again only when the
    environment changed (a sink may ask for it once per value)."""
    return _redactor_for(tuple(os.environ.items()))


@lru_cache(maxsize=4)
def _redactor_for(environ: tuple[tuple[str, str], ...]) -> Redactor:
    return Redactor(dict(environ))


def _redact_formats(text: str) -> str:
    """`_FORMAT_RE.sub(_replace_format, text)`, trying the regex only where an anchor is."""
    first = _PREFILTER.search(text)  # most texts have no anchor: the cheapest way to say so
    if first is None:
        return text
    starts: set[int] = set()
    for hit in _PREFILTER.finditer(text, first.start()):
        found = hit.start()
        for offset in _START_OFFSETS[hit.group()]:
            starts.add(found + offset)
    pieces: list[str] = []
    done = 0  # where the last replaced match ended: `re.sub` resumes its search there
    for start in sorted(starts):
        # Places inside a match already replaced are skipped, as `re.sub` never looks
        # there. `match` with a position still sees the text before it, so `\b` and the
        # lookbehind of a format behave as in a search of the whole text.
        if start < done or start > len(text):
            continue
        if text.startswith("-----BEGIN", start) and (header := _KEY_BEGIN.match(text, start)):
            # The private-key row is the regex's first alternative, so it is the one that
            # matches here, and its `.*?` can only end at the first END line or at the end.
            # `re` would try the END pattern at each character of the block (~25 MB/s, for
            # the rest of the text when there is no END line); searching for it is the same.
            footer = _KEY_END.search(text, header.end())
            end, replacement = (footer.end() if footer else len(text)), REDACTED
        else:
            match = _FORMAT_RE.match(text, start)
            if match is None:
                continue
            end, replacement = match.end(), _replace_format(match)
        pieces.append(text[done:start])
        pieces.append(replacement)
        done = end
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


# Keep the assignment prefix of `aws_secret_access_key = ...` so the line still reads.
_AWS_SECRET_PREFIX = re.compile(r"(?i)aws_secret_access_key\s*[=:]\s*[\"']?")


def _replace_format(match: re.Match[str]) -> str:
    prefix = _AWS_SECRET_PREFIX.match(match.group(0))
    return (prefix.group(0) if prefix else "") + REDACTED


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
