"""Noise classes as data: the kinds of finding that are mostly noise (`data/noise.toml`), how
a finding is recognised as one, and what is done with it before anything is posted.

The table is the one source: the system prompt renders it for the model (`prompt_rows`), and
`apply_noise_table` applies it. Recognition is mechanical, and the reason it gives says which
test matched ("title says 'docstring'", "none of its lines is in the diff"), so a reader can
check it. Nothing is lost: a discarded finding goes to the report's `discarded` list.

A word list never decides against a concrete failure (noise_words.py): a class discards or
lowers a finding only when its title's words say the remark and nothing else, its body says
nothing beside the remark, and no word names a failure; a finding the words cannot decide
(recognised by its category alone, by its body's start, a title or a body that says more, a
failure named, text the lists cannot read) is sent to verification instead, its severity
kept. Every phrase of a class is read one way: `title_words` anywhere in the title,
`starts_with` at its start, and each is taken out before the rest is read (said_beside).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from functools import cache, cached_property
from importlib.resources import files
from typing import Literal

from reviewer.change import Change
from reviewer.checks.noise_words import Words, phrase_pattern, plain_text, readable
from reviewer.findings import Finding, Severity

Action = Literal["discard", "info", "verify"]
ACTIONS: dict[str, str] = {
    "discard": "discarded",
    "info": "lowered to info",
    "verify": "sent to verification",
}
# A finding spanning more lines than this is looked up in the diff by its first lines only.
_MAX_RANGE_LOOKUP = 2000


@dataclass(frozen=True)
class Seen:
    """How a finding was recognised as of a class: the reason, what said so (its title's
    words, its category, its body's start, its place), and the class's phrases the title
    holds."""

    why: str
    by: Literal["title", "category", "body", "place"]
    phrases: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoiseClass:
    name: str
    description: str
    action: Action
    outside_diff: bool = False
    categories: tuple[str, ...] = ()
    title_words: tuple[str, ...] = ()
    starts_with: tuple[str, ...] = ()

    @cached_property
    def _phrases(self) -> tuple[tuple[str, re.Pattern[str]], ...]:
        """The class's phrases, `title_words` (anywhere in a title) and `starts_with` (at its
        start) alike: each is a phrase the words test reads the same way (said_beside)."""
        words = dict.fromkeys((*self.title_words, *self.starts_with))
        return tuple((word, phrase_pattern(word)) for word in words)

    def _said(self, text: str, *, anywhere: bool) -> tuple[str, ...]:
        """The class's phrases `text` says: a `starts_with` phrase at its start only, a
        `title_words` phrase anywhere (when `anywhere`)."""
        text = plain_text(text)
        start = text.lstrip()
        return tuple(
            word
            for word, pattern in self._phrases
            if (word in self.starts_with and pattern.match(start))
            or (anywhere and word in self.title_words and pattern.search(text))
        )

    def seen(self, finding: Finding, change: Change) -> Seen | None:
        """How `finding` is recognised as of this class, or None when it is not."""
        if self.outside_diff:
            if _touches_diff(finding, change):
                return None
            return Seen("none of its lines is in the diff", "place")
        said = self._said(finding.title, anywhere=True)
        if said:
            longest = max(said, key=len)
            how = "starts with" if longest in self.starts_with else "says"
            return Seen(f"title {how} '{longest}'", "title", said)
        if finding.category in self.categories:
            return Seen(f"category {finding.category}", "category")
        opening = self._said(finding.body, anywhere=False)
        if opening:
            return Seen(f"the body starts with '{max(opening, key=len)}'", "body")
        return None

    def phrase_patterns(self, said: tuple[str, ...] | None = None) -> tuple[re.Pattern[str], ...]:
        """The patterns of the phrases `said` (None: all the class's), longest first (taken
        out of a text in that order, "trailing whitespace" before "whitespace")."""
        chosen = [(w, pattern) for w, pattern in self._phrases if said is None or w in said]
        return tuple(pattern for _word, pattern in sorted(chosen, key=lambda p: -len(p[0])))


@dataclass(frozen=True)
class Match:
    """A finding's class, how it was recognised, and what is done: the class's action, or
    verify when the words could not decide (`undecided` says why)."""

    noise_class: NoiseClass
    why: str
    action: Action
    undecided: str = ""


@dataclass(frozen=True)
class NoiseTable:
    classes: tuple[NoiseClass, ...]
    words: Words
    exempt_categories: tuple[str, ...] = ()

    def classify(self, finding: Finding, change: Change) -> Match | None:
        """The first class the finding is in, with how it was recognised and what is done."""
        if finding.category in self.exempt_categories:
            return None
        for noise_class in self.classes:
            seen = noise_class.seen(finding, change)
            if seen is None:
                continue
            if noise_class.action == "verify":
                return Match(noise_class, seen.why, "verify")
            undecided = self.undecided(noise_class, finding, seen)
            if undecided:
                return Match(noise_class, seen.why, "verify", undecided)
            return Match(noise_class, f"{seen.why}, names no concrete failure", noise_class.action)
        return None

    def undecided(self, noise_class: NoiseClass, finding: Finding, seen: Seen) -> str:
        """Why the words cannot decide against `finding`, or "" when they can."""
        failure = self.words.failure_named(f"{finding.title}\n{finding.body}")
        if failure:
            return f"it names a concrete failure ('{failure}')"
        if not readable(plain_text(f"{finding.title}\n{finding.body}")):
            return (
                "its words are not plain text the table can read (a lookalike letter or "
                "another script)"
            )
        if seen.by == "category":
            return "only its category says so, and a category is not evidence"
        if seen.by == "body":
            return "only its body says so, not its title"
        more = self.words.said_beside(finding.title, noise_class.phrase_patterns(seen.phrases))
        if more:
            return f"its title says more ('{more}')"
        # The title's words say only the remark; a body that says more than the remark (the
        # class's phrases, code, filler) is something the words cannot judge either.
        more = self.words.said_beside(finding.body, noise_class.phrase_patterns())
        if more:
            return f"its body says more ('{more}')"
        return ""


@cache
def noise_table() -> NoiseTable:
    text = files("reviewer").joinpath("data/noise.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    classes = []
    for row in data["class"]:
        match = row.get("match", {})
        if row["action"] not in ACTIONS:
            raise ValueError(f"noise.toml: unknown action {row['action']!r}")
        unknown = set(match) - {"outside_diff", "categories", "title_words", "starts_with"}
        if unknown:
            raise ValueError(f"noise.toml: class {row['name']}: unknown match {sorted(unknown)}")
        classes.append(
            NoiseClass(
                name=row["name"],
                description=row["description"],
                action=row["action"],
                outside_diff=bool(match.get("outside_diff", False)),
                **{
                    key: tuple(str(v).lower() for v in match.get(key, ()))
                    for key in ("categories", "title_words", "starts_with")
                },
            )
        )
    words = Words(
        tuple(str(w).lower() for w in data["words"]["concrete_failure"]),
        frozenset(str(w).lower() for w in data["words"]["filler"]),
    )
    return NoiseTable(tuple(classes), words, tuple(data.get("exempt_categories", ())))


def prompt_rows() -> list[dict[str, str]]:
    """The table as the system prompt shows it: what kind of finding, and what is done."""
    return [
        {"name": c.name, "description": c.description, "action": ACTIONS[c.action]}
        for c in noise_table().classes
    ]


def apply_noise_table(
    findings: list[Finding], change: Change, table: NoiseTable | None = None
) -> tuple[list[Finding], list[Finding]]:
    """(kept, discarded). Every finding in a class carries `noise` (the class's name),
    `noise_action` (what was done) and `noise_note` (what and why); a discarded one is kept
    for the reports."""
    table = table or noise_table()
    kept, discarded = [], []
    for finding in findings:
        found = table.classify(finding, change)
        if found is None:
            kept.append(finding)
            continue
        noise_class, why = found.noise_class, found.why
        marked = replace(finding, noise=noise_class.name, noise_action=found.action)
        if found.action == "discard":
            note = f"discarded: {noise_class.description} ({why})"
            discarded.append(replace(marked, noise_note=note, discard_reason=note))
        elif found.action == "info":
            note = (
                f"lowered from {finding.severity.value} to info: {noise_class.description} "
                f"({why})"
            ) if finding.severity != Severity.INFO else f"{noise_class.description} ({why})"
            kept.append(replace(marked, severity=Severity.INFO, noise_note=note))
        elif found.undecided:
            note = (
                f"to be verified, not {ACTIONS[noise_class.action]}: {noise_class.description} "
                f"({why}, but {found.undecided})"
            )
            kept.append(replace(marked, noise_note=note, force_verify=True))
        else:
            note = f"to be verified: {noise_class.description} ({why})"
            kept.append(replace(marked, noise_note=note, force_verify=True))
    return kept, discarded


def noise_counts(findings: list[Finding] | tuple[Finding, ...]) -> dict[str, int]:
    """How many findings each class of the table took, every class named (0 included)."""
    counts = {c.name: 0 for c in noise_table().classes}
    for finding in findings:
        if finding.noise:
            counts[finding.noise] = counts.get(finding.noise, 0) + 1
    return counts


def undecided_counts(findings: list[Finding] | tuple[Finding, ...]) -> dict[str, int]:
    """Of each class's findings, how many its words could not decide: sent to verification
    instead of the class's action (every class named, 0 included)."""
    by_class = {c.name: c for c in noise_table().classes}
    counts = dict.fromkeys(by_class, 0)
    for finding in findings:
        known = by_class.get(finding.noise)
        if known is not None and known.action != "verify" and finding.noise_action == "verify":
            counts[finding.noise] += 1
    return counts


def noise_text(findings: list[Finding] | tuple[Finding, ...]) -> str:
    """`noise table: 1 discarded (linter), 1 sent to verification instead (linter), 2 lowered
    to info (nit)`; "" when none matched."""
    by_class = {c.name: c for c in noise_table().classes}
    undecided = undecided_counts(findings)
    parts = []
    for name, count in noise_counts(findings).items():
        action = by_class[name].action if name in by_class else "info"
        decided = count - undecided.get(name, 0)
        if decided:
            parts.append(f"{decided} {ACTIONS[action]} ({name})")
        if undecided.get(name, 0):
            parts.append(f"{undecided[name]} sent to verification instead ({name})")
    return "noise table: " + ", ".join(parts) if parts else ""


def _touches_diff(finding: Finding, change: Change) -> bool:
    file = change.file(finding.path, finding.side)
    if file is None:
        return False
    last = min(finding.last_line, finding.line + _MAX_RANGE_LOOKUP)
    return any(file.hunk_at(n, finding.side) is not None for n in range(finding.line, last + 1))
