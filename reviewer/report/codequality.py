"""The GitLab Code Quality report (`artifacts: reports: codequality:`).

GitLab documents a JSON array of issues, a subset of the Code Climate spec: `description`,
`check_name`, `fingerprint`, `severity` (info, minor, major, critical, blocker),
`location.path` and `location.lines.begin`; no byte order mark
(https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format). GitLab's parser
validates each issue against its own schema and stops at the first invalid one, keys issues by
fingerprint (two issues with one fingerprint are one), and the merge request widget shows the
issues whose fingerprints the target branch's report does not have.

Decisions:
- The fingerprint is the finding's own, which leaves the line number out: a push that moves
  the code keeps it, so the widget does not call a moved finding new. A repeated fingerprint
  (never made by the pipeline, which merges duplicates) is made unique, so GitLab keeps both.
- Our five severities map one to one onto GitLab's five: critical -> blocker, high ->
  critical, medium -> major, low -> minor, info -> info.
- `check_name` is the SARIF rule id (`bug`, `security/high`, ...) under `reviewer/`: GitLab
  merges the reports of every job of a pipeline, so the name says which tool it is from.
- `description` is the title on one line, neutralized like every other sink's text
  (`neutralize_line`: HTML as text, `@mentions` that do not ping, GitLab references broken):
  the widget shows it, and tools copy it into notes.
- A LEFT-side finding (removed lines) is at the line of the new file where they were, else
  line 1 (GitLab needs a line), and its description names the base lines.
- An incomplete review is an issue of its own, severity blocker, at line 1 of the first
  changed file (GitLab links every issue to a file), its fingerprint tied to the reviewed head
  and the reason: every incomplete run shows it as new in the widget.
- Suppressed findings are left out, as in SARIF.
- How sure a finding is goes at the end of `description` ("[confidence 0.9 · verification:
  uncertain]", without the verifier's reason): GitLab's schema has no field for it, and
  `description` is the one text every reader of the report shows. The fingerprint leaves
  it out, so a finding verified differently in the next run is not new.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from reviewer.findings import (
    Finding,
    ReviewResult,
    Severity,
    occurrence_fingerprint,
    sort_findings,
)
from reviewer.report.common import (
    base_lines_text,
    incomplete_notice,
    notice_path,
    one_line,
    stable_fingerprint,
    verification_words,
)
from reviewer.report.mdtext import neutralize_line
from reviewer.report.sarif import rule_id
from reviewer.safety.sinks import data_name, printable

CHECK_PREFIX = "reviewer/"
INCOMPLETE_CHECK = CHECK_PREFIX + "review-incomplete"

SEVERITIES = {
    Severity.CRITICAL: "blocker",
    Severity.HIGH: "critical",
    Severity.MEDIUM: "major",
    Severity.LOW: "minor",
    Severity.INFO: "info",
}


def render_codequality(result: ReviewResult) -> str:
    """The review as a GitLab Code Quality report: a JSON array of issues."""
    issues = to_codequality(printable(result, data_name))
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def to_codequality(result: ReviewResult) -> list[dict[str, Any]]:
    issues = [_issue(f, result.base) for f in sort_findings(result.findings)]
    if not result.complete:
        issues.insert(0, _incomplete(result))
    return _unique_fingerprints(issues)


def _issue(finding: Finding, base: str) -> dict[str, Any]:
    description = neutralize_line(one_line(finding.title))
    lines: dict[str, int] = {"begin": finding.line}
    if finding.side == "LEFT":
        where = finding.new_file_line
        place = f"line {where} of the new file" if where else "the new file has no such place"
        description += f" (on {base_lines_text(finding, base)}; {place})"
        lines = {"begin": where or 1}
    elif finding.end_line and finding.end_line > finding.line:
        lines["end"] = finding.end_line
    checked, _reason = verification_words(finding)
    if checked:
        description += f" [{checked}]"
    return {
        "description": description,
        "check_name": CHECK_PREFIX + rule_id(finding),
        "fingerprint": stable_fingerprint(finding),
        "severity": SEVERITIES[finding.severity],
        "location": {"path": finding.path, "lines": lines},
    }


def _incomplete(result: ReviewResult) -> dict[str, Any]:
    key = "\x1f".join((INCOMPLETE_CHECK, result.head, result.incomplete_reason))
    return {
        "description": incomplete_notice(result),
        "check_name": INCOMPLETE_CHECK,
        "fingerprint": hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16],
        "severity": "blocker",
        "location": {"path": notice_path(result), "lines": {"begin": 1}},
    }


def _unique_fingerprints(issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GitLab keeps one issue per fingerprint: a repeated one gets a derived fingerprint (as
    anchor.merge_duplicates does), so no issue disappears."""
    seen: dict[str, int] = {}
    for issue in issues:
        print_ = issue["fingerprint"]
        count = seen.get(print_, 0)
        seen[print_] = count + 1
        if count:
            issue["fingerprint"] = occurrence_fingerprint(print_, count)
    return issues
