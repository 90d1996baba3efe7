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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

UNGRADED = "(none)"


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
    result.update(
        cases=len(scores),
        expected=expected,
        findings=findings,
        findings_per_case=round(findings / len(scores), 3) if scores else None,
        unmatched_findings_per_case=round((findings - tp) / len(scores), 3) if scores else None,
        by_severity=_by_severity(scores),
        by_repository=_by_repository(scores),
    )
    return result


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
