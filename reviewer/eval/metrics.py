"""Scores: which finding matches which expected issue, and precision, recall and F1 from that.

Matching is one to one. Of all (issue, finding) pairs the judge calls a match, the most
confident is taken first, then the next whose issue and finding are both still free, and so
on (ties: the earlier issue, then the earlier finding). So one finding never counts for two
issues, and two findings of the same issue count once (the other is noise).

- TP: expected issues matched; FN: expected issues not matched; FP: findings not matched.
- precision = TP / findings, recall = TP / expected issues, F1 their harmonic mean; None
  where the denominator is zero (no findings: precision is undefined, not perfect).
- Per severity: recall over the issues of that (expected) severity; precision over the
  findings of that severity as the bot graded them (an unmatched finding has no expected
  severity, so the bot's own grade is the only one it has).
- Noise on clean cases: a case that expects no issue is a clean change, and every finding on
  it is noise; findings per clean case is the noise a team would read on such changes.
- Precision by the bot's confidence band and by the verifier's verdict on each finding, to
  see whether a threshold or the verification separates hits from noise ("unknown" and
  "none" where a finding has no confidence or was not verified).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

UNGRADED = "(none)"
# Confidence bands, lowest first: (label, lower bound inclusive); a finding without a
# confidence is "unknown".
CONFIDENCE_BANDS = (("<0.5", 0.0), ("0.5-0.8", 0.5), (">=0.8", 0.8))
NO_CONFIDENCE = "unknown"
BAND_ORDER = [*(name for name, _ in CONFIDENCE_BANDS), NO_CONFIDENCE]
# Verdicts a kept finding may carry, in the report's order; "none": not verified.
VERDICTS = ("confirmed", "uncertain", "unverified", "none")
NOT_VERIFIED = "none"


@dataclass(frozen=True)
class Pair:
    issue: int
    finding: int
    confidence: float


def greedy_match(pairs: Iterable[Pair]) -> list[Pair]:
    chosen: list[Pair] = []
    issues: set[int] = set()
    findings: set[int] = set()
    for pair in sorted(pairs, key=lambda p: (-p.confidence, p.issue, p.finding)):
        if pair.issue in issues or pair.finding in findings:
            continue
        chosen.append(pair)
        issues.add(pair.issue)
        findings.add(pair.finding)
    return sorted(chosen, key=lambda p: p.issue)


@dataclass(frozen=True)
class CaseScore:
    """One scored case under one judge: what was expected and found, and what matched."""

    repository: str
    issue_severities: tuple[str, ...]
    finding_severities: tuple[str, ...]
    matches: tuple[Pair, ...]
    # Per finding, in the order of finding_severities: its confidence band and its verdict.
    finding_bands: tuple[str, ...] = ()
    finding_verdicts: tuple[str, ...] = ()


def confidence_band(confidence: object) -> str:
    if not isinstance(confidence, int | float) or isinstance(confidence, bool):
        return NO_CONFIDENCE
    label = NO_CONFIDENCE
    for name, lower in CONFIDENCE_BANDS:
        if confidence >= lower:
            label = name
    return label


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def prf(tp: int, fp: int, fn: int) -> dict[str, Any]:
    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = round(2 * precision * recall / (precision + recall), 4) if tp else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


def case_metrics(score: CaseScore) -> dict[str, Any]:
    tp = len(score.matches)
    return prf(tp, len(score.finding_severities) - tp, len(score.issue_severities) - tp)


def summarize(scores: list[CaseScore]) -> dict[str, Any]:
    """Micro metrics over all cases, per severity and per repository."""
    tp = sum(len(s.matches) for s in scores)
    findings = sum(len(s.finding_severities) for s in scores)
    expected = sum(len(s.issue_severities) for s in scores)
    result = prf(tp, findings - tp, expected - tp)
    clean = [s for s in scores if not s.issue_severities]
    clean_findings = sum(len(s.finding_severities) for s in clean)
    result.update(
        cases=len(scores),
        expected=expected,
        findings=findings,
        findings_per_case=round(findings / len(scores), 3) if scores else None,
        unmatched_findings_per_case=round((findings - tp) / len(scores), 3) if scores else None,
        clean_cases=len(clean),
        clean_findings=clean_findings,
        findings_per_clean_case=round(clean_findings / len(clean), 3) if clean else None,
        by_severity=_by_severity(scores),
        by_confidence=_by_label(scores, "finding_bands", BAND_ORDER),
        by_verdict=_by_label(scores, "finding_verdicts", list(VERDICTS)),
        by_repository=_by_repository(scores),
    )
    return result


def _by_label(scores: list[CaseScore], field: str, order: list[str]) -> dict[str, dict[str, Any]]:
    """Findings and matched findings per label of each finding (every known label listed,
    so an empty band reads as 0, not as absent), and the precision of each."""
    counts = {label: {"findings": 0, "matched_findings": 0} for label in order}
    for score in scores:
        matched = {p.finding for p in score.matches}
        for index, label in enumerate(getattr(score, field)):
            row = counts.setdefault(label, {"findings": 0, "matched_findings": 0})
            row["findings"] += 1
            row["matched_findings"] += index in matched
    return {
        label: {**row, "precision": ratio(row["matched_findings"], row["findings"])}
        for label, row in counts.items()
    }


def _by_severity(scores: list[CaseScore]) -> dict[str, dict[str, Any]]:
    counts: dict[str, dict[str, int]] = defaultdict(
        lambda: {"expected": 0, "found": 0, "findings": 0, "matched_findings": 0}
    )
    for score in scores:
        matched_issues = {p.issue for p in score.matches}
        matched_findings = {p.finding for p in score.matches}
        for index, severity in enumerate(score.issue_severities):
            counts[severity]["expected"] += 1
            counts[severity]["found"] += index in matched_issues
        for index, severity in enumerate(score.finding_severities):
            counts[severity]["findings"] += 1
            counts[severity]["matched_findings"] += index in matched_findings
    return {
        severity: {
            **row,
            "recall": ratio(row["found"], row["expected"]),
            "precision": ratio(row["matched_findings"], row["findings"]),
        }
        for severity, row in sorted(counts.items(), key=lambda item: _severity_order(item[0]))
    }


_ORDER = ("critical", "high", "medium", "low", "info")


def _severity_order(severity: str) -> tuple[int, str]:
    return (_ORDER.index(severity) if severity in _ORDER else len(_ORDER), severity)


def _by_repository(scores: list[CaseScore]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[CaseScore]] = defaultdict(list)
    for score in scores:
        groups[score.repository].append(score)
    result = {}
    for repository, group in sorted(groups.items()):
        tp = sum(len(s.matches) for s in group)
        findings = sum(len(s.finding_severities) for s in group)
        expected = sum(len(s.issue_severities) for s in group)
        result[repository] = {**prf(tp, findings - tp, expected - tp), "cases": len(group)}
    return result
