"""Checking findings against the diff: each becomes inline (on a line GitHub accepts a comment
on) or summary-only, with the reason. None is dropped; duplicates within a run are merged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from reviewer.change import Change, DiffLine, FileChange, Hunk
from reviewer.change.lines import LineCounter
from reviewer.checks.finding_in import FindingIn
from reviewer.errors import ToolError
from reviewer.findings import (
    Finding,
    Placement,
    Severity,
    Side,
    fingerprint,
    occurrence_fingerprint,
    sort_findings,
)

MAX_EXCERPT_LINES = 12


def place(finding: FindingIn, change: Change, counter: LineCounter) -> Finding:
    """The Finding for what the model reported: anchored, excerpted and fingerprinted."""
    file = change.file(finding.path, finding.side)
    line, end_line = finding.line, finding.end_line
    if end_line == line:
        end_line = None
    placement, note, end_line, unchanged = placement_of(
        change, finding.path, finding.line, end_line, finding.side, finding.suggestion is not None
    )
    code = _excerpt(finding, file, counter)
    # A finding moved to where its quote is, or kept without its quote (grounding.py),
    # says so.
    note = "; ".join(part for part in (finding._grounding, finding._ticket_note, note) if part)
    return Finding(
        path=finding.path,
        line=line,
        end_line=end_line,
        side=finding.side,
        severity=finding.severity,
        category=finding.category,
        title=finding.title,
        body=finding.body.strip(),
        suggestion=finding.suggestion,
        fingerprint=fingerprint(finding.path, finding.title, code, finding.category),
        placement=placement,
        placement_note=note,
        on_unchanged_lines=unchanged,
        code=code,
        new_file_line=_where_removed(file, line) if finding.side == "LEFT" else None,
        confidence=finding.confidence,
        # A quote not found within grounding's bound (grounding.py), or a finding kept
        # without its intent claim (intent.py), is checked whatever its severity.
        force_verify=finding._verify or bool(finding._ticket_note),
        discard_reason=finding._refused,
        ticket=finding._ticket,
        ticket_quote=(finding.ticket_quote or "") if finding._ticket else "",
    )


def _where_removed(file: FileChange | None, old_line: int) -> int | None:
    """The new-file line where old line `old_line` was removed: the first line after it that
    the new file has, else the last one before it. None when the new file has no lines."""
    if file is None or file.status == "deleted":
        return None
    hunk = file.hunk_at(old_line, "LEFT")
    if hunk is None:
        return None
    before = None
    seen = False
    for diff_line in hunk.lines:
        if diff_line.old_line == old_line:
            seen = True
        if diff_line.new_line is not None:
            if seen:
                return diff_line.new_line
            before = diff_line.new_line
    if before is not None:
        return before
    return hunk.new_start or None


class Anchoring(NamedTuple):
    """Where a finding sits on the diff: inline or summary-only, the note saying why, the end
    line the comment can cover, and whether every line it covers is unchanged (a context
    line of the hunk, neither added nor removed)."""

    placement: Placement
    note: str
    end_line: int | None
    unchanged: bool = False


def placement_of(
    change: Change, path: str, line: int, end_line: int | None, side: Side, suggestion: bool
) -> Anchoring:
    """Inline or summary-only for a finding at `line..end_line` of `path`, the note saying
    why, the end line the comment can cover, and whether those lines are all unchanged."""
    file = change.file(path, side)
    if file is None:
        return Anchoring("summary", f"'{path}' is not changed by this review", end_line)
    hunk = file.hunk_at(line, side)
    if hunk is None:
        return Anchoring("summary", f"line {line} is not part of the diff", end_line)
    if end_line is None:
        return Anchoring("inline", "", None, _unchanged(hunk, line, line, side))
    # GitHub takes a multi-line comment only when both ends sit in the same hunk.
    numbers = [n for dl in hunk.lines if (n := _number(dl, side)) is not None]
    last_in_hunk = max(numbers)
    if end_line <= last_in_hunk:
        return Anchoring("inline", "", end_line, _unchanged(hunk, line, end_line, side))
    if suggestion:
        # A suggestion replaces exactly line..end_line: it cannot be cut to fit the hunk.
        return Anchoring("summary", f"lines {line}-{end_line} reach beyond the diff hunk", end_line)
    clamped = last_in_hunk if last_in_hunk > line else None
    note = f"reported as lines {line}-{end_line}; the comment covers the changed part"
    return Anchoring("inline", note, clamped, _unchanged(hunk, line, clamped or line, side))


def _unchanged(hunk: Hunk, first: int, last: int, side: Side) -> bool:
    """Whether lines first..last of `side` in `hunk` are all context lines."""
    return all(
        dl.kind == "context"
        for dl in hunk.lines
        if (n := _number(dl, side)) is not None and first <= n <= last
    )


def _number(diff_line: DiffLine, side: str) -> int | None:
    return diff_line.new_line if side == "RIGHT" else diff_line.old_line


def _excerpt(finding: FindingIn, file: FileChange | None, counter: LineCounter) -> str:
    last = min(finding.end_line or finding.line, finding.line + MAX_EXCERPT_LINES - 1)
    if finding.side == "LEFT":
        if file is None:
            return ""
        texts = [file.line(n, "LEFT") for n in range(finding.line, last + 1)]
        return "\n".join(dl.text for dl in texts if dl is not None)
    try:
        lines = counter.lines(finding.path)
    except ToolError:
        return ""
    return "\n".join(lines[finding.line - 1 : last])


def merge_duplicates(findings: list[Finding]) -> list[Finding]:
    """One finding per problem; the most severe (then the first) wins.

    The fingerprint leaves the line out (it must survive a push that moves the code), so two
    findings on identical code at different places (a repeated `requests.get(url)`) share
    it: they are told apart by their order in the file, the second getting a fingerprint of
    its own. Only findings at the same place are merged.
    """
    kept: dict[tuple[str, str, int], Finding] = {}
    for finding in findings:
        key = (finding.fingerprint, finding.side, finding.line)
        current = kept.get(key)
        if current is None:
            kept[key] = finding
        else:  # both counted
            winner = finding if finding.severity.rank > current.severity.rank else current
            kept[key] = replace(winner, merged_from=current.merged_from + finding.merged_from)
    places: dict[str, list[tuple[str, int]]] = {}
    for fingerprint_, side, line in sorted(kept):
        places.setdefault(fingerprint_, []).append((side, line))
    out = []
    for (fingerprint_, side, line), finding in kept.items():
        occurrence = places[fingerprint_].index((side, line))
        if occurrence:
            finding = replace(finding, fingerprint=occurrence_fingerprint(fingerprint_, occurrence))
        out.append(finding)
    return sort_findings(out)


def split_reported(
    findings: list[Finding], min_severity: Severity, max_findings: int
) -> tuple[list[Finding], list[Finding]]:
    """(reported, suppressed): below min_severity, or past max_findings, is suppressed."""
    reported, suppressed = [], []
    for finding in sort_findings(findings):
        if not finding.severity.at_least(min_severity) or len(reported) >= max_findings:
            suppressed.append(finding)
        else:
            reported.append(finding)
    return reported, suppressed
