"""What is posted on GitHub, rendered from the neutral findings: inline comment bodies (with
suggestion blocks and a fingerprint marker), the review body, the summary comment (with the
state of the last review in a hidden marker), and workflow-command annotations.

Pure functions; github.py posts what these return.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from reviewer.findings import Finding, ReviewResult, Severity, sort_findings
from reviewer.forge.signing import Signer
from reviewer.report.common import line_range, verification_words
from reviewer.report.markdown import counts_sentence, findings_shown, render_markdown
from reviewer.report.mdtext import cap_text, fence, inline_code, neutralize, neutralize_line
from reviewer.safety.redact import environment_redactor
from reviewer.safety.sinks import command_line, data_name, map_strings, shown_name
from reviewer.wording import plural

# GitHub refuses bodies over 65,536 characters; leave room for markers and notes.
MAX_BODY_CHARS = 60_000
# The first line of the summary comment; its state is on the last line (forge/memory.py).
SUMMARY_MARKER = "<!-- reviewer:summary -->"
# Our markers are read back only from the last line of a body the bot wrote. Untrusted text
# that looks like one anywhere in a body is broken up first (defuse_markers), so even a
# reader that scanned the whole body could not be fooled.
_ANY_MARKER = re.compile(r"(?i)(<!--\s*)(reviewer)(\s*:)")
# Payloads of our signed markers (signing.py).
_FINGERPRINT = re.compile(r"fingerprint=([0-9a-f]{16})")
_REVIEW = re.compile(r"run=([A-Za-z0-9_.-]{1,80}) fingerprints=([0-9a-f,]*)")
# Where every finding can be read when the summary comment cannot hold them all.
FULL_LIST = (
    "This run's job summary and its JSON report (the action's `report` output) list all of them."
)
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


def defuse_markers(text: str) -> str:
    """Text that holds nothing a reader of our markers could take for one: a zero-width
    non-joiner goes between `reviewer` and its colon (invisible, and never in our markers)."""
    return _ANY_MARKER.sub(lambda m: f"{m.group(1)}{m.group(2)}\u200c{m.group(3)}", text)


def has_marker(text: str) -> bool:
    return _ANY_MARKER.search(text) is not None


def last_line(body: str | None) -> str:
    return (body or "").rstrip().rsplit("\n", 1)[-1].strip()


def fingerprint_marker(fingerprint: str, signer: Signer) -> str:
    return signer.marker(f"fingerprint={fingerprint}")


def comment_fingerprint(body: str | None, signer: Signer) -> str | None:
    """The fingerprint an inline comment of ours ends with (signed), else None."""
    payload = signer.read(last_line(body))
    match = _FINGERPRINT.fullmatch(payload or "")
    return match.group(1) if match else None


def review_marker(run_id: str, fingerprints: list[str], signer: Signer) -> str:
    return signer.marker(f"run={run_id} fingerprints={','.join(fingerprints)}")


def review_marker_of(body: str | None, signer: Signer) -> tuple[str, set[str]] | None:
    """(run id, fingerprints of the findings folded into it) from a review body of ours."""
    match = _REVIEW.fullmatch(signer.read(last_line(body)) or "")
    if not match:
        return None
    return match.group(1), {fp for fp in match.group(2).split(",") if fp}


def is_summary(body: str | None) -> bool:
    return (body or "").split("\n", 1)[0].strip() == SUMMARY_MARKER


Redact = Callable[[str], str]
# The info string of a finding's suggestion block: the forge's syntax (GitHub: `suggestion`
# replaces the commented lines; GitLab: `suggestion:-N+M`, lines above and below).
SuggestionInfo = Callable[[Finding], str]


def github_suggestion(finding: Finding) -> str:
    return "suggestion"


def comment_body(
    finding: Finding,
    signer: Signer,
    *,
    redact: Redact | None = None,
    suggestion_info: SuggestionInfo = github_suggestion,
) -> str:
    """One inline comment: severity, title, the body, a suggestion block, the fingerprint.
    Redacted value by value (see summary_comment)."""
    redact = redact or environment_redactor()
    finding = map_strings(finding, redact)
    category = f" · {finding.category}" if finding.category else ""
    title = neutralize(finding.title, redact=redact)
    parts = [f"{_LABEL[finding.severity]}{category}: {title}", ""]
    parts.append(neutralize(finding.body, redact=redact))
    if finding.suggestion is not None and finding.side == "RIGHT":
        if has_marker(finding.suggestion):
            # A suggestion is applied as written, so it cannot be defused: it is left out.
            parts += ["", "*(The suggested change holds a bot marker; see the JSON report.)*"]
        else:
            parts += ["", fence(finding.suggestion.rstrip("\n"), suggestion_info(finding))]
    if finding.placement_note:
        parts += ["", f"<sub>{neutralize(finding.placement_note, redact=redact)}</sub>"]
    checked, reason = verification_words(finding)
    if checked:
        why = f": {neutralize_line(reason, redact=redact)}" if reason else ""
        parts += ["", f"<sub>{checked}{why}</sub>"]
    text, cut = cap_text(defuse_markers("\n".join(parts)), MAX_BODY_CHARS)
    if cut:
        text += "\n\n*(cut: the comment was too long for GitHub)*"
    return f"{text}\n\n{fingerprint_marker(finding.fingerprint, signer)}"


def review_comment(
    finding: Finding, signer: Signer, *, redact: Redact | None = None
) -> dict[str, Any]:
    """The `comments[]` entry of a review for an inline finding."""
    comment: dict[str, Any] = {
        "path": finding.path,
        "body": comment_body(finding, signer, redact=redact),
        "line": finding.last_line,
        "side": finding.side,
    }
    if finding.end_line and finding.end_line != finding.line:
        comment["start_line"] = finding.line
        comment["start_side"] = finding.side
    return comment


def review_body(
    new_inline: int,
    folded: list[Finding],
    run_id: str,
    summary_url: str | None,
    fold_reason: str,
    signer: Signer,
    *,
    redact: Redact | None = None,
) -> str:
    """The review's own text: how many comments this run adds, and any that could not be
    placed inline (they are written here in full, so none is lost). Its last line names the
    run and the folded findings' fingerprints."""
    where = f" ([summary]({summary_url}))" if summary_url else ""
    lines = [f"**reviewer** added {plural(new_inline, 'inline comment')} on this push{where}."]
    if folded:
        lines += ["", f"These findings could not be placed on their lines ({fold_reason}):", ""]
        redact = redact or environment_redactor()
        for finding in sort_findings(folded):
            lines.append(_folded(map_strings(finding, redact), redact))
    text, cut = cap_text(defuse_markers("\n".join(lines)), MAX_BODY_CHARS)
    if cut:
        text += "\n\n*(cut: see the summary comment for the rest)*"
    return f"{text}\n\n{review_marker(run_id, [f.fingerprint for f in folded], signer)}"


def off_line_body(
    finding: Finding, comment: str, reason: str, *, redact: Redact | None = None
) -> str:
    """An inline comment (`comment_body`) posted where its line could not take it, as a
    thread of its own: its place named first (the base's lines for a removed one), then the
    comment as it is, its signed fingerprint still its last line."""
    redact = redact or environment_redactor()
    side = " of the base" if finding.side == "LEFT" else ""
    where = inline_code(f"{shown_name(redact(finding.path))}:{line_range(finding)}")
    head = defuse_markers(f"**On {where}{side}**, not on the line itself: {reason}.")
    return f"{head}\n\n{comment}"


def _folded(finding: Finding, redact: Redact) -> str:
    where = inline_code(f"{shown_name(finding.path)}:{finding.line}")
    head = f"- {_LABEL[finding.severity]} {where}: {neutralize_line(finding.title, redact=redact)}"
    body = neutralize(finding.body, redact=redact)
    body = "\n".join("  " + line for line in body.splitlines())
    return f"{head}\n{body}"


def summary_comment(
    result: ReviewResult,
    *,
    state_line: str,
    notes: tuple[str, ...] = (),
    redact: Redact | None = None,
) -> str:
    """The one summary comment, edited in place on every run: the marker on its first line,
    the report, and the state for the next run on its last line (signed: left as it is).

    Everything is redacted value by value before it is rendered, never as one text: a secret
    format that runs to the end of its text (a key header without its END line, in a file
    name or a finding) would hide every finding after it. Defusing markers can lengthen
    text, so the report is measured after it and rendered smaller when it has to be. Each
    value is redacted again in its final form, after Markdown decoded it (mdtext.neutralize):
    a secret written as character references or escapes is caught there."""
    redact = redact or environment_redactor()
    head = "".join(f"> {neutralize_line(note, redact=redact)}\n\n" for note in notes)
    safe = map_strings(result, redact)
    room = MAX_BODY_CHARS - len(state_line) - len(SUMMARY_MARKER) - 2
    budget = room - len(head)
    while True:
        report = render_markdown(safe, max_bytes=budget, full_list=FULL_LIST, redact=redact)
        text = defuse_markers(head + report)
        if len(text) <= room or budget < 2_000:
            break
        budget -= len(text) - room + 100
    if len(text) > room:  # a last resort that keeps GitHub's limit whatever redaction did
        # Every count again, how many findings the cut left out too (a note naming none is
        # the longest, so the text is cut for that one).
        def note(shown: int) -> str:
            counts = counts_sentence(safe, shown)
            return f"\n\n_(cut to fit GitHub's size limit: {counts}. {FULL_LIST})_"

        text = cap_text(text, room - len(note(0)))[0]
        text += note(findings_shown(text))
    return f"{SUMMARY_MARKER}\n{text.rstrip()}\n{state_line}"


def annotations(
    findings: tuple[Finding, ...] | list[Finding], *, redact: Redact | None = None
) -> list[str]:
    """Workflow commands for the findings, most severe first (GitHub shows only a few).
    Annotations are plain text (the runner decodes only its own `%` escapes, which
    command_line applies after redaction), so the values are redacted as they are."""
    redact = redact or environment_redactor()
    lines = []
    for finding in sort_findings(list(findings))[:MAX_ANNOTATIONS]:
        title = redact(finding.title)
        lines.append(
            command_line(
                _LEVEL[finding.severity],
                f"{title}\n\n{redact(finding.body)}",
                file=redact(data_name(finding.path)),
                line=finding.line if finding.side == "RIGHT" else None,
                endLine=finding.end_line if finding.side == "RIGHT" else None,
                title=f"{finding.severity.value}: {title}"[:200],
            )
        )
    return lines
