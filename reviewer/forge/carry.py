"""Carrying a finding of an earlier run forward: it stays open while the code it points at
still stands (found again by the hash of its lines, nearest its old line), and is closed
(fixed) once that code changed. A finding a later run files again under another category is
the earlier one (`as_earlier`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from reviewer.change import Change
from reviewer.change.lines import LineCounter
from reviewer.errors import ToolError
from reviewer.findings import Finding, Severity, Side, fingerprint
from reviewer.review.anchor import placement_of


@dataclass(frozen=True)
class OpenFinding:
    """A finding as the state keeps it: enough to find its code again and to show it."""

    fingerprint: str
    severity: Severity
    path: str
    line: int
    end_line: int | None
    side: Side
    title: str
    body: str = ""
    category: str | None = None
    code_hash: str = ""
    code_lines: int = 0
    suggestion: str | None = None


def open_finding(finding: Finding) -> OpenFinding:
    return OpenFinding(
        fingerprint=finding.fingerprint,
        severity=finding.severity,
        path=finding.path,
        line=finding.line,
        end_line=finding.end_line,
        side=finding.side,
        title=finding.title,
        body=finding.body,
        category=finding.category,
        code_hash=code_hash(finding.code.split("\n")) if finding.code else "",
        code_lines=len(finding.code.split("\n")) if finding.code else 0,
        suggestion=finding.suggestion,
    )


# --- findings that are still open ----------------------------------------------------------


def code_hash(lines: list[str]) -> str:
    folded = "\n".join(" ".join(line.split()) for line in lines)
    return hashlib.sha256(folded.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def still_open(
    carried: Iterable[OpenFinding], change: Change, counter: LineCounter
) -> list[Finding]:
    """The carried findings whose code still stands, placed where it stands now."""
    found = []
    for item in carried:
        located = _find_code(item, change, counter)
        if located is None:
            continue
        line, code = located
        end = item.end_line + (line - item.line) if item.end_line else None
        placement, note, end, unchanged = placement_of(
            change, item.path, line, end, item.side, False
        )
        found.append(
            Finding(
                path=item.path,
                line=line,
                end_line=end,
                side=item.side,
                severity=item.severity,
                category=item.category,
                title=item.title,
                body=item.body,
                suggestion=item.suggestion,
                fingerprint=item.fingerprint,
                placement=placement,
                placement_note=note,
                on_unchanged_lines=unchanged,
                code=code,
                earlier=True,
            )
        )
    return found


def _find_code(item: OpenFinding, change: Change, counter: LineCounter) -> tuple[int, str] | None:
    """Where the finding's code stands now (nearest its old line) and that code, or None."""
    text: dict[int, str]
    if item.side == "LEFT":
        file = change.file(item.path, "LEFT")
        if file is None:
            return None
        text = {
            number: dl.text
            for hunk in file.hunks
            for dl in hunk.lines
            if (number := dl.old_line) is not None
        }
    else:
        try:
            text = dict(enumerate(counter.lines(item.path), start=1))
        except ToolError:
            return None
    if item.code_lines == 0:
        # Nothing to compare: open while its line still exists.
        return (item.line, text[item.line]) if item.line in text else None
    matches: list[tuple[int, list[str]]] = []
    for start in text:
        window = [text.get(n) for n in range(start, start + item.code_lines)]
        if None in window:
            continue
        lines = [line for line in window if line is not None]
        if code_hash(lines) == item.code_hash:
            matches.append((start, lines))
    if not matches:
        return None
    start, lines = min(matches, key=lambda match: abs(match[0] - item.line))
    return start, "\n".join(lines)


# --- the same problem under another category -----------------------------------------------


class Earlier(Protocol):
    """What a run remembers of a finding (open, suppressed, fixed or dismissed)."""

    @property
    def fingerprint(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def category(self) -> str | None: ...


def as_earlier(findings: Iterable[Finding], earlier: Iterable[Earlier]) -> list[Finding]:
    """The findings, each one that an earlier run filed under another category (the same
    file, title and code: its fingerprint under that category is the earlier one's) given
    the earlier fingerprint. The category is part of a fingerprint, and a model's category
    for one problem varies from run to run (an intent claim dropped in one run, kept in the
    next): without this the same problem got a second comment on its line, and a dismissed
    one came back under a new category. Its category stays this run's."""
    by_path: dict[str, list[Earlier]] = {}
    for item in earlier:
        by_path.setdefault(item.path, []).append(item)
    out = []
    for finding in findings:
        for item in by_path.get(finding.path, ()):
            if item.category != finding.category and item.fingerprint == fingerprint(
                finding.path, finding.title, finding.code, item.category
            ):
                finding = replace(finding, fingerprint=item.fingerprint)
                break
        out.append(finding)
    return out
