"""The SARIF 2.1.0 report, for GitHub code scanning and other SARIF viewers.

Decisions (see also docs):
- Rules are the categories (`bug`, `security`, ...; `review` for a finding without one).
  GitHub reads `security-severity` from the *rule*, not the result, so one `security` rule
  would give every security finding the same severity: security findings get one rule per
  severity instead (`security/high`, ...), each tagged `security` with its score. The result
  carries the score in its own properties too, for other viewers.
- A LEFT-side finding points at a removed line, which does not exist in the file SARIF
  locations refer to (the new version). Its location names the file with no region (a
  file-level result) and its message says which base lines it is about. Pointing at a
  nearby new line would be a guess that can land on unrelated code.
- `fixes` are given for RIGHT-side suggestions only: a replacement of whole lines
  `line..end_line` (no columns: the region runs to the end of the last line, newline
  excluded, so the inserted text has no final newline).
- Suppressed findings (below min_severity, past max_findings) are left out: the user asked
  not to see them, and code scanning would open alerts for them. Their number is in
  `run.properties`.
- An incomplete review sets `invocations[0].executionSuccessful` to false with an error
  notification saying why; files not reviewed are warning notifications.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from reviewer import __version__
from reviewer.findings import ClosedFinding, Finding, ReviewResult, Severity, sort_findings
from reviewer.report.common import (
    base_lines_text,
    line_range,
    partly_reviewed,
    skipped_files,
    stable_fingerprint,
    suppressed_total,
)
from reviewer.safety.sinks import data_name, displayed

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
)
# The PyPI project of this name is an unrelated one, and no public URL of this project is
# known: the optional informationUri is left out unless a caller passes the real one.
DEFAULT_INFORMATION_URI = ""
FINGERPRINT_KEY = "reviewerFingerprint/v1"
SRCROOT = "%SRCROOT%"
NO_CATEGORY = "review"

LEVELS = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub's bands: critical > 9.0, high 7.0-8.9, medium 4.0-6.9, low 0.1-3.9.
SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "1.0",
}
_DESCRIPTIONS = {
    "bug": "A defect: code that does not do what it is meant to.",
    "security": "A security weakness.",
    "performance": "Needless work, or work that does not scale.",
    "maintainability": "Code that is harder than it needs to be to read or change.",
    "style": "A departure from the project's conventions.",
    "docs": "Documentation that is missing, wrong or out of date.",
    "tests": "Missing, weak or wrong tests.",
    "intent": "The change does not do what its ticket asks, or does what it forbids.",
    NO_CATEGORY: "A review comment.",
}


def render_sarif(result: ReviewResult, *, information_uri: str = DEFAULT_INFORMATION_URI) -> str:
    """The review as a SARIF 2.1.0 log with one run."""
    # Names stay exact here: a URI percent-encodes a name's bytes, whatever they are; the
    # texts that name a file use data_name.
    log = to_sarif(displayed(result, _exact), information_uri=information_uri)
    return json.dumps(log, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def to_sarif(
    result: ReviewResult, *, information_uri: str = DEFAULT_INFORMATION_URI
) -> dict[str, Any]:
    findings = sort_findings(result.findings)
    rule_ids = sorted({rule_id(f) for f in findings})
    rule_index = {rule: index for index, rule in enumerate(rule_ids)}
    driver = {
        "name": "reviewer",
        **({"informationUri": information_uri} if information_uri else {}),
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [_rule(rule) for rule in rule_ids],
    }
    run = {
        "tool": {"driver": driver},
        "invocations": [_invocation(result)],
        "results": [
            _result(f, rule_index[rule_id(f)], result.base, result.incremental) for f in findings
        ],
        "columnKind": "unicodeCodePoints",
        "properties": {
            "reviewer": {
                "status": result.status,
                "incompleteReason": result.incomplete_reason,
                "model": result.model,
                "base": result.base,
                "head": result.head,
                "suppressedFindings": suppressed_total(result),
                "tokens": result.usage.total_tokens,
                "cachedPromptTokens": result.usage.cached_prompt_tokens,
                # USD; null when no price is known for the model.
                "costUsd": None if result.cost_usd is None else round(result.cost_usd, 6),
            }
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def rule_id(finding: Finding | ClosedFinding) -> str:
    category = finding.category or NO_CATEGORY
    if category == "security":
        return f"security/{finding.severity.value}"
    return category


def _exact(name: str) -> str:
    return name


def artifact_uri(path: str) -> str:
    """A repository-relative path as a relative URI reference (spaces and `%` escaped); a
    name that is not UTF-8 has its own bytes percent-encoded."""
    data = path.lstrip("/").encode("utf-8", "surrogateescape")
    return quote(data, safe="/-._~!$&'()*+,;=@")


def _rule(rule: str) -> dict[str, Any]:
    category, _, severity = rule.partition("/")
    label = category.capitalize() + (f" ({severity})" if severity else "")
    properties: dict[str, Any] = {"tags": [category]}
    if severity:
        properties["security-severity"] = SECURITY_SEVERITY[Severity(severity)]
    description = _DESCRIPTIONS.get(category, f"A {category} concern.")
    return {
        "id": rule,
        "name": "".join(part.capitalize() for part in rule.split("/")),
        "shortDescription": {"text": f"{label} finding of an AI code review"},
        "fullDescription": {"text": description},
        # GitHub code scanning shows `help` beside each alert.
        "help": {
            "text": f"{description} Each result's message says what was found and what to "
            "change; a suggested fix, when there is one, is in its `fixes`.",
            "markdown": f"{description}\n\nEach result's message says what was found and "
            "what to change; a suggested fix, when there is one, is attached to the result.",
        },
        "properties": properties,
    }


def _result(finding: Finding, index: int, base: str, incremental: bool) -> dict[str, Any]:
    text = finding.title.strip()
    if finding.body.strip():
        text += "\n\n" + finding.body.strip()
    artifact = {"uri": artifact_uri(finding.path), "uriBaseId": SRCROOT}
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if finding.side == "LEFT":
        # GitHub code scanning needs a region on every result (its SARIF rule GH1003), and
        # a region is a place in the new file: where the removed lines were.
        where = finding.new_file_line or 1
        place = (
            f"the region is line {where} of the new file, where they were"
            if finding.new_file_line
            else "the new revision has no such lines, so the region is line 1"
        )
        text += f"\n\n(On {base_lines_text(finding, base)}; {place}.)"
        physical["region"] = {"startLine": where}
    else:
        physical["region"] = _region(finding)
    properties: dict[str, Any] = {
        "severity": finding.severity.value,
        "category": finding.category or NO_CATEGORY,
        "side": finding.side,
        "placement": finding.placement,
        "tags": [finding.category or NO_CATEGORY],
    }
    if finding.category == "security":
        properties["security-severity"] = SECURITY_SEVERITY[finding.severity]
    if finding.side == "LEFT":
        properties["baseLines"] = line_range(finding)
    if finding.merged_from > 1:
        properties["mergedFrom"] = finding.merged_from
    if finding.noise:
        properties["noise"] = finding.noise_note
    if finding.suggestion_dropped:
        properties["suggestionDropped"] = finding.suggestion_dropped
    # How sure the finding is: the model's confidence and the verifier's verdict (SARIF's
    # property bag; a viewer that does not know them shows them as they are).
    if finding.confidence is not None:
        properties["confidence"] = finding.confidence
    if finding.verification is not None:
        check = finding.verification
        properties["verification"] = {
            "verdict": check.verdict,
            "reason": check.reason,
            "toolCalls": check.tool_calls,
            **({"severityBefore": check.severity_before.value} if check.severity_before else {}),
        }
    print_ = stable_fingerprint(finding)
    sarif: dict[str, Any] = {
        "ruleId": rule_id(finding),
        "ruleIndex": index,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {FINGERPRINT_KEY: print_},
        "properties": properties,
    }
    if incremental:
        # A pull request's later run: SARIF's own words for new and still-open results.
        sarif["baselineState"] = "unchanged" if finding.earlier else "new"
    if finding.suggestion is not None and finding.side == "RIGHT":
        sarif["fixes"] = [_fix(finding, artifact)]
    return sarif


def _region(finding: Finding) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": finding.line}
    if finding.end_line and finding.end_line > finding.line:
        region["endLine"] = finding.end_line
    if finding.code:
        region["snippet"] = {"text": finding.code}
    return region


def _fix(finding: Finding, artifact: dict[str, str]) -> dict[str, Any]:
    deleted: dict[str, Any] = {"startLine": finding.line}
    if finding.end_line and finding.end_line > finding.line:
        deleted["endLine"] = finding.end_line
    inserted = (finding.suggestion or "").removesuffix("\n")
    return {
        "description": {"text": f"Replace line(s) {line_range(finding)} with the suggestion."},
        "artifactChanges": [
            {
                "artifactLocation": dict(artifact),
                "replacements": [{"deletedRegion": deleted, "insertedContent": {"text": inserted}}],
            }
        ],
    }


def _invocation(result: ReviewResult) -> dict[str, Any]:
    notifications: list[dict[str, Any]] = []
    if not result.complete:
        reason = result.incomplete_reason or "no reason was recorded"
        notifications.append(
            {
                "level": "error",
                "message": {
                    "text": f"The review is incomplete: {reason}. Its results may be partial; "
                    "an incomplete review is not a clean one."
                },
            }
        )
    for path, reason in skipped_files(result):
        notifications.append(
            {
                "level": "warning",
                "message": {"text": f"Not reviewed: {data_name(path)}: {reason}"},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(path), "uriBaseId": SRCROOT}
                        }
                    }
                ],
            }
        )
    for path, what in partly_reviewed(result):
        notifications.append(
            {
                "level": "note",
                "message": {"text": f"{data_name(path)}: {what}"},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(path), "uriBaseId": SRCROOT}
                        }
                    }
                ],
            }
        )
    invocation: dict[str, Any] = {"executionSuccessful": result.complete}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return invocation
