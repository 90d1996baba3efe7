"""`reviewer stats REPORT.json...`: how the bot's findings fared, per rule and severity, from
the JSON reports of its runs: how many it posted, how many were fixed, dismissed, or are
still open. A finding is counted once, by fingerprint, in the state of the last report (in
the order given) that names it: a pull request's runs can be passed in order.

Findings the ignore file kept from being posted are counted apart: nobody saw them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from reviewer.errors import ReviewerError, json_problem
from reviewer.findings import IGNORE_FILE_HOW, Severity
from reviewer.report.json_schema import FORMAT, VERSION, ReportV1, StateV1
from reviewer.safety.sinks import plain_cell, shown_width

COLUMNS = ("posted", "fixed", "dismissed", "open")


def read_reports(paths: Iterable[Path]) -> list[ReportV1]:
    """The reports, in the order given; one line (ReviewerError) for a file that is none."""
    return [_report(path) for path in paths]


def read_states(paths: Iterable[Path]) -> dict[str, StateV1]:
    """Fingerprint -> its last state across the reports."""
    return states_of(read_reports(paths))


def states_of(reports: Iterable[ReportV1]) -> dict[str, StateV1]:
    states: dict[str, StateV1] = {}
    for report in reports:
        states.update(report.states)
    return states


def _report(path: Path) -> ReportV1:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReviewerError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise ReviewerError(
            f"{path} is not JSON ({json_problem(exc)}); pass reviewer's JSON reports"
        ) from exc
    if isinstance(data, dict) and data.get("dry_run") is True:
        raise ReviewerError(
            f"{path} is the plan of a dry run, which holds no findings; pass the JSON report "
            "of a review (--format json without --dry-run)"
        )
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReviewerError(
            f'{path} is not a reviewer JSON report (no "format": "{FORMAT}"); write one '
            "with `--format json`"
        )
    if data.get("version") != VERSION:
        raise ReviewerError(
            f"{path} is a version {data.get('version')!r} report; this reviewer reads version "
            f"{VERSION}"
        )
    try:
        return ReportV1.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReviewerError(f"{path} is not a valid report: {where}: {first['msg']}") from exc


def stats_table(states: dict[str, StateV1]) -> str:
    """The table: one row per rule and severity (most severe first), then the totals."""
    rows: dict[tuple[str, Severity], Counter[str]] = {}
    ignored = 0
    for state in states.values():
        if state.state == "dismissed" and state.how == IGNORE_FILE_HOW:
            ignored += 1
            continue
        counts = rows.setdefault((state.rule, state.severity), Counter())
        counts["posted"] += 1
        counts["open" if state.state in ("new", "open") else state.state] += 1
    header = ("rule", "severity", *COLUMNS)
    # A report is a file anyone can hand over: its rules are untrusted text (plain_cell).
    body = [
        (plain_cell(rule), severity.value, *(str(counts[c]) for c in COLUMNS))
        for (rule, severity), counts in sorted(rows.items(), key=lambda i: (i[0][0], -i[0][1].rank))
    ]
    total = sum(rows.values(), Counter())
    lines = _aligned([header, *body, ("total", "", *(str(total[c]) for c in COLUMNS))])
    if ignored:
        lines.append(f"(and {ignored} kept from being posted by the ignore file)")
    if not rows and not ignored:
        lines = ["No findings in these reports."]
    return "\n".join(lines)


def _aligned(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(shown_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            _padded(cell, width, left=i < 2)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def _padded(cell: str, width: int, *, left: bool) -> str:
    pad = " " * (width - shown_width(cell))
    return cell + pad if left else pad + cell
