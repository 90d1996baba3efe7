"""The stage after the review, run by the evaluation from cached reviews.

A review's findings pass a second stage before they are posted (the verification: each
finding checked by its own short loop that tries to refute it; `verify`, `verify_model`,
`min_confidence`). For `reviewer eval --compare` of `verify = "off"` against
`verify = "all"` to cost only the verification, the evaluation splits the two:

- the review stage runs with the post-review settings turned off, and its cache key leaves
  them out, so both settings share one cached review;
- the post-review stage runs on the cached review's findings and is cached on its own,
  keyed by the review's key and every setting (the post-review ones included).

The stage is reached through one seam, `verification.post_review_stage(settings)`: it returns the
program's stage (for every value of the settings: with `verify = "off"` a stage that keeps
the findings as they are, so "off" and "all" share the cached review), or None while the
program has no stage apart. With None the review runs as the settings say (any
verification inside it) and its key keeps every setting, so an answer is never reused for
settings it was not made under.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.context.tickets.model import Ticket
from reviewer.findings import Finding, Severity, Usage
from reviewer.review.context import ChangeInfo
from reviewer.settings.config import Settings

# Settings that belong to the post-review stage: never in the review stage's key.
POST_REVIEW_SETTINGS = frozenset({"verify", "verify_model", "min_confidence"})
# What the review stage runs with when a post-review stage is run apart (those of these
# settings the program has).
REVIEW_STAGE_OVERRIDES: dict[str, Any] = {"verify": "off", "min_confidence": 0}


@dataclass(frozen=True)
class StageInput:
    """A complete review's findings and what a verifier needs to look at the code again."""

    root: Path
    base: str
    head: str
    info: ChangeInfo
    settings: Settings
    findings: tuple[Finding, ...]
    # The tickets the review was shown (an intent finding's check is given its ticket).
    tickets: tuple[Ticket, ...] = ()
    # The case's learnings text (None: the base's .reviewer/learnings.md), for the verifier.
    learnings: str | None = None


@dataclass(frozen=True)
class StageOutput:
    # The findings kept (posted), each with its confidence and verdict where it has them.
    findings: tuple[Finding, ...]
    # The findings left out, each as JSON with the reason (kept for the report, not scored).
    discarded: tuple[dict[str, Any], ...] = ()
    usage: Usage = dataclasses.field(default_factory=Usage)
    cost: float | None = None
    # False when the stage could not finish (its answer is then not cached).
    complete: bool = True


PostReview = Callable[[StageInput], StageOutput]
# Chooses the stage for a case's settings; None: no stage apart (see the module's text).
StageChooser = Callable[[Settings], PostReview | None]


def review_stage_flags(flags: dict[str, Any]) -> dict[str, Any]:
    """The flags of a review whose post-review stage runs apart: that stage turned off."""
    known = Settings.model_fields
    return {**flags, **{k: v for k, v in REVIEW_STAGE_OVERRIDES.items() if k in known}}


def finding_data(finding: Finding) -> dict[str, Any]:
    """A finding whole, as JSON, to rebuild it from the cache for the post-review stage."""
    return dataclasses.asdict(finding)


def discarded_json(finding: Finding) -> dict[str, Any]:
    """A discarded finding for results.json: its title, why, and the finding whole."""
    data = dataclasses.asdict(finding)
    data["severity"] = str(finding.severity.value)
    return {"title": finding.title, "reason": finding.discard_reason, "finding": data}


def finding_from_data(data: dict[str, Any]) -> Finding:
    names = {f.name for f in dataclasses.fields(Finding)}
    values = {k: v for k, v in data.items() if k in names}
    values["severity"] = Severity(values["severity"])
    return Finding(**values)
