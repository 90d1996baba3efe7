"""Noise classes as data: the kinds of finding that are mostly noise (`data/noise.toml`), how
a finding is recognised as one, and what is done with it before anything is posted.

The table is the one source: the system prompt renders it for the model (`prompt_rows`), and
`apply_noise_table` applies it. Recognition is mechanical, and the reason it gives says which
test matched ("title says 'docstring'", "none of its lines is in the diff"), so a reader can
check it. Nothing is lost: a discarded finding goes to the report's `discarded` list.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib.resources import files
from typing import Literal

from reviewer.change import Change
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
class NoiseClass:
    name: str
    description: str
    action: Action
    outside_diff: bool = False
    categories: tuple[str, ...] = ()
    title_words: tuple[str, ...] = ()
    starts_with: tuple[str, ...] = ()
    unless_words: tuple[str, ...] = ()

    def why(self, finding: Finding, change: Change) -> str:
        """How `finding` is recognised as of this class, or "" when it is not."""
        reasons = []
        if self.outside_diff:
            if _touches_diff(finding, change):
                return ""
            reasons.append("none of its lines is in the diff")
        if self.categories or self.title_words:
            if finding.category in self.categories:
                reasons.append(f"category {finding.category}")
            else:
                word = _first_word(self.title_words, finding.title)
                if not word:
                    return ""
                reasons.append(f"title says '{word}'")
        if self.starts_with:
            start = next(
                (s for s in self.starts_with
                 for text in (finding.title, finding.body) if text.lower().lstrip().startswith(s)),
                "",
            )  # fmt: skip
            if not start:
                return ""
            reasons.append(f"starts with '{start}'")
        if self.unless_words:
            if _first_word(self.unless_words, f"{finding.title}\n{finding.body}"):
                return ""
            reasons.append("names no concrete failure")
        return ", ".join(reasons)


@dataclass(frozen=True)
class NoiseTable:
    classes: tuple[NoiseClass, ...]
    exempt_categories: tuple[str, ...] = ()

    def classify(self, finding: Finding, change: Change) -> tuple[NoiseClass, str] | None:
        """The first class the finding is in, with how it was recognised."""
        if finding.category in self.exempt_categories:
            return None
        for noise_class in self.classes:
            why = noise_class.why(finding, change)
            if why:
                return noise_class, why
        return None


@cache
def noise_table() -> NoiseTable:
    text = files("reviewer").joinpath("data/noise.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    named = data.get("words", {})
    classes = []
    for row in data["class"]:
        # A list of words may be given by its name under [words] (one list, several classes).
        match = {
            key: named[value] if isinstance(value, str) and key.endswith("_words") else value
            for key, value in row.get("match", {}).items()
        }
        if row["action"] not in ACTIONS:
            raise ValueError(f"noise.toml: unknown action {row['action']!r}")
        classes.append(
            NoiseClass(
                name=row["name"],
                description=row["description"],
                action=row["action"],
                outside_diff=bool(match.get("outside_diff", False)),
                **{
                    key: tuple(str(v).lower() for v in match.get(key, ()))
                    for key in ("categories", "title_words", "starts_with", "unless_words")
                },
            )
        )
    return NoiseTable(tuple(classes), tuple(data.get("exempt_categories", ())))


def prompt_rows() -> list[dict[str, str]]:
    """The table as the system prompt shows it: what kind of finding, and what is done."""
    return [
        {"name": c.name, "description": c.description, "action": ACTIONS[c.action]}
        for c in noise_table().classes
    ]


def apply_noise_table(
    findings: list[Finding], change: Change, table: NoiseTable | None = None
) -> tuple[list[Finding], list[Finding]]:
    """(kept, discarded). Every finding in a class carries `noise` (the class's name) and
    `noise_note` (what was done and why); a discarded one is kept for the reports."""
    table = table or noise_table()
    kept, discarded = [], []
    for finding in findings:
        found = table.classify(finding, change)
        if found is None:
            kept.append(finding)
            continue
        noise_class, why = found
        if noise_class.action == "discard":
            note = f"discarded: {noise_class.description} ({why})"
            discarded.append(
                replace(finding, noise=noise_class.name, noise_note=note, discard_reason=note)
            )
        elif noise_class.action == "info":
            note = (
                f"lowered from {finding.severity.value} to info: {noise_class.description} "
                f"({why})"
            ) if finding.severity != Severity.INFO else f"{noise_class.description} ({why})"
            kept.append(
                replace(finding, severity=Severity.INFO, noise=noise_class.name, noise_note=note)
            )
        else:
            note = f"to be verified: {noise_class.description} ({why})"
            kept.append(
                replace(finding, noise=noise_class.name, noise_note=note, force_verify=True)
            )
    return kept, discarded


def noise_counts(findings: list[Finding] | tuple[Finding, ...]) -> dict[str, int]:
    """How many findings each class of the table took, every class named (0 included)."""
    counts = {c.name: 0 for c in noise_table().classes}
    for finding in findings:
        if finding.noise:
            counts[finding.noise] = counts.get(finding.noise, 0) + 1
    return counts


def noise_text(findings: list[Finding] | tuple[Finding, ...]) -> str:
    """`noise table: 1 discarded (linter), 2 lowered to info (nit)`; "" when none matched."""
    by_class = {c.name: c for c in noise_table().classes}
    parts = []
    for name, count in noise_counts(findings).items():
        if count:
            action = by_class[name].action if name in by_class else "info"
            parts.append(f"{count} {ACTIONS[action]} ({name})")
    return "noise table: " + ", ".join(parts) if parts else ""


def _touches_diff(finding: Finding, change: Change) -> bool:
    file = change.file(finding.path, finding.side)
    if file is None:
        return False
    last = min(finding.last_line, finding.line + _MAX_RANGE_LOOKUP)
    return any(file.hunk_at(n, finding.side) is not None for n in range(finding.line, last + 1))


def _first_word(words: tuple[str, ...], text: str) -> str:
    lowered = text.lower()
    for word in words:
        if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", lowered):
            return word
    return ""
