"""What became of a case's findings after the review: posted, merged, discarded (by reason)
and unverified, counted from the review record of results.json, and summed over the cases.

So `reviewer eval --compare` of `verify = "off"` against `verify = "all"` shows not only the
scores but what the verification did to get them: how many findings it dropped and why, how
many it could not check.

- posted: the findings the case is scored on (the review's reported findings, after the
  post-review stage);
- merged: findings that were the same problem as another and were merged into it (a
  finding standing for three counts two);
- discarded: never posted, by reason: the noise table, refuted by verification, under
  min_confidence, invalid (refused by the review's checks and sent again unchanged,
  review/refusals.py);
- unverified: posted findings that verification could not check (a budget spent, the
  verifier's endpoint failed).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewer.review.refusals import REFUSED_AGAIN

# The reasons a finding is discarded, in the report's order.
DISCARD_REASONS = ("noise", "refuted", "min_confidence", "invalid")


def discard_reason_kind(finding: dict[str, Any]) -> str:
    """Which of DISCARD_REASONS a discarded finding (as JSON data) was discarded for."""
    verification = finding.get("verification") or {}
    if verification.get("verdict") == "refuted":
        return "refuted"
    if finding.get("noise") and finding.get("discard_reason", "") == finding.get("noise_note"):
        return "noise"
    if finding.get("discard_reason", "").startswith(REFUSED_AGAIN):
        return "invalid"
    return "min_confidence"


def case_outcomes(review: dict[str, Any] | None) -> dict[str, Any] | None:
    """The counts of one case's review record; None without a review."""
    if review is None:
        return None
    posted = review["findings"]
    stage = review.get("verification") or {}
    # Discarded by the review (the noise table), then by the post-review stage.
    discarded = [*review.get("discarded", ()), *stage.get("discarded", ())]
    data = [entry.get("finding", {}) for entry in discarded]
    by_reason = dict.fromkeys(DISCARD_REASONS, 0)
    for finding in data:
        by_reason[discard_reason_kind(finding)] += 1
    return {
        "posted": len(posted),
        "merged": sum(f.get("merged_from", 1) - 1 for f in (*posted, *data)),
        "discarded": len(discarded),
        "discarded_by": by_reason,
        "unverified": sum(f.get("verdict") == "unverified" for f in posted),
    }


def total_outcomes(cases: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """The counts of every case summed."""
    total: dict[str, Any] = {
        "posted": 0,
        "merged": 0,
        "discarded": 0,
        "discarded_by": dict.fromkeys(DISCARD_REASONS, 0),
        "unverified": 0,
    }
    for counts in cases:
        if counts is None:
            continue
        for key in ("posted", "merged", "discarded", "unverified"):
            total[key] += counts[key]
        for reason, count in counts["discarded_by"].items():
            total["discarded_by"][reason] = total["discarded_by"].get(reason, 0) + count
    return total
