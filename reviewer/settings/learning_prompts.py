"""The team's learnings (learnings.py) in a review's requests, and their use: a part's first
message is shown those for its files (and the unscoped ones), a finding's verification those
for its file, each within its share of the request, what is left out said; a verifier that
refutes (or confirms) a finding because of one names it (`submit_verdict`'s `learning`,
checked against the ids that check was shown), and the reports say which learnings were
shown and relied on (`learning_uses`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reviewer.findings import Finding, LearningUse
from reviewer.settings.learnings import LEARNINGS_FILE, Learning, Learnings
from reviewer.settings.prompts import fence_for
from reviewer.wording import plural

# The learnings of one part may take this share of its first message (the diff needs the
# rest), and those of one verification request at most MAX_VERIFY_CHARS.
LEARNINGS_SHARE = 0.10
MAX_VERIFY_CHARS = 6_000


@dataclass
class LearningUsage:
    """Which learnings reached which files of the review's parts, over all parts."""

    applied: dict[str, set[str]] = field(default_factory=dict)
    cuts: list[str] = field(default_factory=list)

    def note(self, learning_id: str, files: list[str]) -> None:
        self.applied.setdefault(learning_id, set()).update(files)


def learnings_for_part(
    learnings: Learnings,
    paths: list[str] | tuple[str, ...],
    limit: int,
    *,
    part: str = "",
    usage: LearningUsage | None = None,
) -> dict[str, object]:
    """The template value `learnings` of a part (its files `paths`): the learnings for any of
    them, in the file's order, within `limit` characters; what did not fit is said."""
    chosen = learnings.for_paths(paths)
    shown: list[Learning] = []
    room, left = limit, 0
    for entry, files in chosen:
        size = len(entry.prompt_line()) + 1
        if size > room:
            left += 1
            continue
        room -= size
        shown.append(entry)
        if usage is not None:
            usage.note(entry.id, files)
    where = f" in {part}" if part else ""
    notes = list(learnings.notes)
    if left:
        notes.append(
            f"{plural(left, 'learning')} left out{where} (the learnings of one part may take "
            f"{limit:,} characters)"
        )
        if usage is not None:
            usage.cuts.append(notes[-1])
    return learnings_value(shown, "; ".join(notes))


def learnings_for_finding(learnings: Learnings, path: str) -> list[Learning]:
    """The learnings a verification of a finding on `path` is shown, within
    MAX_VERIFY_CHARS."""
    shown, room = [], MAX_VERIFY_CHARS
    for entry in learnings.for_path(path):
        size = len(entry.prompt_line()) + 1
        if size <= room:
            shown.append(entry)
            room -= size
    return shown


def learnings_value(
    shown: list[Learning], note: str = "", *, verifying: bool = False
) -> dict[str, object]:
    """What the `_learnings.md.j2` include reads: the lines, a fence no line can close, a
    note of what was left out, and whether a verifier reads it."""
    lines = [entry.prompt_line() for entry in shown]
    return {
        "file": LEARNINGS_FILE,
        "entries": lines,
        "ids": [entry.id for entry in shown],
        "fence": fence_for("\n".join(lines)),
        "note": note,
        "verifying": verifying,
    }


def learning_uses(
    learnings: Learnings,
    applied: dict[str, tuple[str, ...]],
    verifications: Mapping[str, int],
    findings: Iterable[Finding],
) -> tuple[LearningUse, ...]:
    """Every learning read, with its use in the review: the files its parts reached, the
    checks that were shown it, and the findings whose verdict relied on it."""
    relied: dict[str, list[str]] = {}
    for finding in findings:
        check = finding.verification
        if check is not None and check.learning:
            relied.setdefault(check.learning, []).append(finding.fingerprint)
    return tuple(
        LearningUse(
            id=entry.id,
            scope=entry.scope,
            text=entry.text,
            line=entry.line,
            cut=entry.cut,
            applied_to=applied.get(entry.id, ()),
            verifications=verifications.get(entry.id, 0),
            relied_on=tuple(sorted(relied.get(entry.id, ()))),
        )
        for entry in learnings.entries
    )
