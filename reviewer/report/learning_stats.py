"""`reviewer stats`, the learnings part: how the team's learnings (.reviewer/learnings.md)
were used across the JSON reports given, and which were never used, so a stale one can be
removed.

The learnings listed are those of the last report (in the order given) that has any: the
file as it is now; a learning removed since is not listed. Each is counted over every report
that holds it (by its scope and text, whatever its id there): in how many reviews it was
shown (to a part of the review or a verification) and how many findings' verdicts relied on
it. Never used: shown in none of them. A report is a file anyone can hand over: its texts are
untrusted (plain_cell).
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewer.report.json_context import LearningV1
from reviewer.report.json_schema import ReportV1
from reviewer.safety.sinks import plain_cell, shown_width
from reviewer.settings.learnings import LEARNINGS_FILE, learning_line
from reviewer.wording import plural

# A learning's text in the table is cut to this many characters (the report has it whole).
_SHOWN_CHARS = 60


def learnings_table(reports: Sequence[ReportV1]) -> str:
    """The table of the current learnings' use, then those never used; "" with none."""
    current = next((r.learnings for r in reversed(reports) if r.learnings), [])
    if not current:
        return ""
    rows = []
    never = []
    for learning in current:
        held = [item for r in reports for item in r.learnings if _key(item) == _key(learning)]
        shown = sum(1 for item in held if item.applied_to or item.verifications)
        relied = sum(len(item.relied_on) for item in held)
        rows.append((_short(learning), str(len(held)), str(shown), str(relied)))
        if not shown and not relied:
            never.append(learning)
    header = ("learning", "reviews", "shown", "relied on")
    widths = [max(shown_width(row[i]) for row in (header, *rows)) for i in range(4)]
    lines = [
        f"Learnings ({LEARNINGS_FILE}) in {plural(len(reports), 'report')}: "
        f"{plural(len(current), 'learning')}, {len(never)} never used",
        *(
            "  ".join(
                cell + " " * (width - shown_width(cell)) if i == 0
                else " " * (width - shown_width(cell)) + cell
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in (header, *rows)
        ),
    ]  # fmt: skip
    if never:
        lines += ["", "Never used (shown to no review and no verification): remove if stale"]
        lines += [plain_cell(learning_line(item.scope, item.text)) for item in never]
    return "\n".join(lines)


def _key(item: LearningV1) -> tuple[str, str]:
    return item.scope, item.text


def _short(item: LearningV1) -> str:
    text = learning_line(item.scope, item.text).removeprefix("- ")
    cut = text[:_SHOWN_CHARS] + ("…" if len(text) > _SHOWN_CHARS else "")
    return plain_cell(cut)
