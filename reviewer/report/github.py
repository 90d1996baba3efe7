"""What is posted on GitHub, rendered from the neutral findings: inline comment bodies (with
suggestion blocks and a fingerprint marker), the review body, the summary comment (with the
state of the last review in a hidden marker), and workflow-command annotations.

Pure functions; github.py posts what these return.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reviewer.ci import workflow_command
from reviewer.findings import Finding, ReviewResult, Severity, sort_findings
from reviewer.report.markdown import render_markdown
from reviewer.report.mdtext import cap_text, fence, neutralize

# GitHub refuses bodies over 65,536 characters; leave room for markers and notes.
MAX_BODY_CHARS = 60_000
SUMMARY_MARKER = "<!-- reviewer:summary -->"
_STATE = re.compile(r"<!-- reviewer:state (\{.*?\}) -->")
_FINGERPRINT = re.compile(r"<!-- reviewer:fingerprint=([0-9a-f]{6,64}) -->")
_RUN = "<!-- reviewer:run={run} -->"
# GitHub shows 10 annotations of each level per step: the most severe go first.
MAX_ANNOTATIONS = 30

_LABEL = {
    Severity.CRITICAL: "🔴 **Critical**",
    Severity.HIGH: "🟠 **High**",
    Severity.MEDIUM: "🟡 **Medium**",
    Severity.LOW: "🔵 **Low**",
    Severity.INFO: "⚪ **Info**",
}
_LEVEL = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "notice",
    Severity.INFO: "notice",
}


def fingerprint_marker(fingerprint: str) -> str:
    return f"<!-- reviewer:fingerprint={fingerprint} -->"


def fingerprints_in(body: str | None) -> set[str]:
    return set(_FINGERPRINT.findall(body or ""))


def run_marker(run_id: str) -> str:
    return _RUN.format(run=run_id)


def comment_body(finding: Finding) -> str:
    """One inline comment: severity, title, the body, a suggestion block, the fingerprint."""
    category = f" · {finding.category}" if finding.category else ""
    parts = [f"{_LABEL[finding.severity]}{category}: {neutralize(finding.title)}", ""]
    parts.append(neutralize(finding.body))
    if finding.suggestion is not None and finding.side == "RIGHT":
        suggestion = finding.suggestion.rstrip("\n")
        parts += ["", fence(suggestion, "suggestion")]
    if finding.placement_note:
        parts += ["", f"<sub>{neutralize(finding.placement_note)}</sub>"]
    text, cut = cap_text("\n".join(parts), MAX_BODY_CHARS)
    if cut:
        text += "\n\n*(cut: the comment was too long for GitHub)*"
    return f"{text}\n\n{fingerprint_marker(finding.fingerprint)}"


def review_comment(finding: Finding) -> dict[str, Any]:
    """The `comments[]` entry of a review for an inline finding."""
    comment: dict[str, Any] = {
        "path": finding.path,
        "body": comment_body(finding),
        "line": finding.last_line,
        "side": finding.side,
    }
    if finding.end_line and finding.end_line != finding.line:
        comment["start_line"] = finding.line
        comment["start_side"] = finding.side
    return comment


def review_body(
    new_inline: int, folded: list[Finding], run_id: str, summary_url: str | None, fold_reason: str
) -> str:
    """The review's own text: how many comments this run adds, and any that could not be
    placed inline (they are written here in full, so none is lost)."""
    where = f" ([summary]({summary_url}))" if summary_url else ""
    noun = "comment" if new_inline == 1 else "comments"
    lines = [f"**reviewer** added {new_inline} inline {noun} on this push{where}."]
    if folded:
        lines += ["", f"These findings could not be placed on their lines ({fold_reason}):", ""]
        for finding in sort_findings(folded):
            lines.append(_folded(finding))
    lines += ["", run_marker(run_id)]
    text, cut = cap_text("\n".join(lines), MAX_BODY_CHARS)
    return text if not cut else text + "\n\n*(cut: see the summary comment for the rest)*"


def _folded(finding: Finding) -> str:
    head = (
        f"- {_LABEL[finding.severity]} `{finding.path}:{finding.line}`: {neutralize(finding.title)}"
    )
    body = "\n".join("  " + line for line in neutralize(finding.body).splitlines())
    return f"{head}\n{body}\n  {fingerprint_marker(finding.fingerprint)}"


def summary_comment(
    result: ReviewResult, *, head: str, base: str, note: str = "", reviewed_since: str | None = None
) -> str:
    """The one summary comment, edited in place on every run; its state marker records the
    head it reviewed, for the next run's incremental review."""
    state = json.dumps({"head": head, "base": base}, separators=(",", ":"))
    parts = [SUMMARY_MARKER]
    if note:
        parts += [f"> {neutralize(note)}", ""]
    if reviewed_since:
        parts += [
            f"*Reviewed the commits since `{reviewed_since[:12]}`; earlier findings stand.*",
            "",
        ]
    parts.append(render_markdown(result, max_bytes=MAX_BODY_CHARS - 2_000, title="AI review"))
    parts.append(f"<!-- reviewer:state {state} -->")
    return "\n".join(parts)


def summary_state(body: str | None) -> dict[str, str]:
    match = _STATE.search(body or "")
    if not match:
        return {}
    try:
        state = json.loads(match.group(1))
    except json.JSONDecodeError:
        return {}
    return {k: v for k, v in state.items() if isinstance(k, str) and isinstance(v, str)}


def annotations(findings: tuple[Finding, ...] | list[Finding]) -> list[str]:
    """Workflow commands for the findings, most severe first (GitHub shows only a few)."""
    lines = []
    for finding in sort_findings(list(findings))[:MAX_ANNOTATIONS]:
        lines.append(
            workflow_command(
                _LEVEL[finding.severity],
                f"{finding.title}\n\n{finding.body}",
                file=finding.path,
                line=finding.line if finding.side == "RIGHT" else None,
                endLine=finding.end_line if finding.side == "RIGHT" else None,
                title=f"{finding.severity.value}: {finding.title}"[:200],
            )
        )
    return lines
