"""The reviewdog Diagnostic Format, rdjson: one `DiagnosticResult`, for `reviewdog -f=rdjson`.

reviewdog then posts the findings to GitLab, Gerrit, Bitbucket, Gitea or GitHub. The format is
defined by reviewdog's proto/rdf/reviewdog.proto; reviewdog reads it with protojson (unknown
fields ignored, strings must be valid UTF-8) and fills a diagnostic's missing severity and
source from the result's.

Decisions:
- Ranges are whole lines, given without columns: reviewdog.proto reads a range whose start and
  end both omit the column as line-wise, end line included. That is how reviewdog's own diff
  parser writes suggestions, and the only form its reporters turn into a suggestion of exactly
  those lines (GitLab's `suggestion:-0+N` takes N = end.line - start.line; GitHub's needs the
  suggestion's lines to equal the comment's). The column form `{3,1}..{6,1}` would make GitLab
  replace line 6 too. So a suggestion for lines 3..5 has range `{line 3}..{line 5}` and its
  text without the final newline (the reporters add one), exactly like reviewdog's diff parser.
- Every range has an `end` (equal to `start` for one line): GitLab's reporter skips a
  suggestion without one.
- Suggestions are given for RIGHT-side findings only, and only the pipeline's: a finding with
  a suggestion keeps its exact lines (anchor.py never clamps it), so the range is its lines.
- A LEFT-side finding (removed lines) is placed where SARIF places it: at the line of the new
  file where the lines were (`Finding.new_file_line`), its message naming the base lines;
  without such a line (a deleted file) it names the file only.
- reviewdog posts `message` as Markdown into the comment, so it is the model's text made safe
  for Markdown (mdtext), like every comment we post ourselves; the body is capped.
- An incomplete review has no field of its own in rdjson: it is an ERROR diagnostic of its own
  (code `review-incomplete`), first in the list, at line 1 of the first changed file.
  reviewdog shows it only where its filter lets that line through; the exit code 2 is the
  guard (use `set -o pipefail` in a pipe).
- Suppressed findings are left out, as in SARIF.
- How sure a finding is (the model's confidence, the verifier's verdict and reason) is a
  last line of `message`, as in the comments we post ourselves: reviewdog posts only the
  message (and the code), and `original_output` is not shown to anyone.
"""

from __future__ import annotations

import json
from typing import Any

from reviewer.findings import Finding, ReviewResult, Severity, sort_findings
from reviewer.report.common import (
    base_lines_text,
    incomplete_notice,
    notice_path,
    verification_words,
)
from reviewer.report.mdtext import cap_text, neutralize, neutralize_line
from reviewer.report.sarif import rule_id
from reviewer.safety.sinks import data_name, printable

SOURCE_NAME = "reviewer"
INCOMPLETE_CODE = "review-incomplete"
# A comment far past this is refused by the hosts reviewdog posts to (GitHub: 65,536).
MAX_BODY_CHARS = 20_000

SEVERITIES = {
    Severity.CRITICAL: "ERROR",
    Severity.HIGH: "ERROR",
    Severity.MEDIUM: "WARNING",
    Severity.LOW: "INFO",
    Severity.INFO: "INFO",
}


def render_rdjson(result: ReviewResult, *, information_uri: str = "") -> str:
    """The review as one reviewdog `DiagnosticResult` (JSON)."""
    document = to_rdjson(printable(result, data_name), information_uri=information_uri)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def to_rdjson(result: ReviewResult, *, information_uri: str = "") -> dict[str, Any]:
    source: dict[str, str] = {"name": SOURCE_NAME}
    if information_uri:
        source["url"] = information_uri
    diagnostics = [_diagnostic(f, result.base) for f in sort_findings(result.findings)]
    if not result.complete:
        diagnostics.insert(0, _incomplete(result))
    return {"source": source, "diagnostics": diagnostics}


def _diagnostic(finding: Finding, base: str) -> dict[str, Any]:
    body, cut = cap_text(finding.body.strip(), MAX_BODY_CHARS)
    parts = [neutralize_line(finding.title)]
    if body:
        parts.append(neutralize(body, min_heading=3))
    if cut:
        parts.append(f"(The text was cut at {MAX_BODY_CHARS:,} characters.)")
    location: dict[str, Any] = {"path": finding.path}
    if finding.side == "LEFT":
        where = finding.new_file_line
        place = (
            f"shown at line {where} of the new file, where they were"
            if where
            else "the new file has no such place"
        )
        parts.append(neutralize_line(f"(On {base_lines_text(finding, base)}; {place}.)"))
        if where:
            location["range"] = _lines(where, where)
    else:
        location["range"] = _lines(finding.line, finding.last_line)
    checked, reason = verification_words(finding)
    if checked:
        parts.append(neutralize_line(f"({checked}{': ' + reason if reason else ''})"))
    diagnostic: dict[str, Any] = {
        "message": "\n\n".join(parts),
        "location": location,
        "severity": SEVERITIES[finding.severity],
        "code": {"value": rule_id(finding)},
    }
    if finding.side == "RIGHT" and finding.suggestion is not None:
        diagnostic["suggestions"] = [
            {
                "range": _lines(finding.line, finding.last_line),
                "text": finding.suggestion.removesuffix("\n"),
            }
        ]
    return diagnostic


def _lines(first: int, last: int) -> dict[str, Any]:
    """Lines first..last, both included (reviewdog's line-wise range: no columns)."""
    return {"start": {"line": first}, "end": {"line": last}}


def _incomplete(result: ReviewResult) -> dict[str, Any]:
    return {
        "message": neutralize_line(incomplete_notice(result)),
        "location": {"path": notice_path(result), "range": _lines(1, 1)},
        "severity": "ERROR",
        "code": {"value": INCOMPLETE_CODE},
    }
