"""What the parts of a review came to, together: one summary, one reason per distinct failure,
which files a part that did not finish leaves unreviewed, and the transcript. A change too
large for one request is reviewed in parts (batching.py), each its own agent loop.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reviewer.findings import FileCoverage
from reviewer.loop.agent import AgentOutcome
from reviewer.review.context import BatchContext
from reviewer.wording import plural

# A stop reason quoted in a file's coverage (the full reason is in the review's own): a
# longer one is cut where a reader sees it is cut.
_MAX_REASON_CHARS = 200

Runs = list[tuple[BatchContext, AgentOutcome]]


def summary(runs: Runs) -> str:
    def text(outcome: AgentOutcome) -> str:
        if outcome.submission is not None:
            return outcome.submission.summary.strip()
        what = "This part" if len(runs) > 1 else "The review"
        return outcome.last_text.strip() or f"{what} did not finish; no summary was written."

    if len(runs) == 1:
        return text(runs[0][1])
    if all(o.submission is None and not o.last_text.strip() for _, o in runs):
        return f"None of the {plural(len(runs), 'part')} finished; no summary was written."
    return "\n\n".join(
        f"**Part {number} of {len(runs)} ({batch.label}):** {text(outcome)}"
        for number, (batch, outcome) in enumerate(runs, 1)
    )


def reasons(runs: Runs) -> str:
    """Why the review is incomplete, one clause per distinct reason: a spent budget stops
    every part still to run, and a hundred parts must not make a hundred clauses."""
    failed = [(n, b, o) for n, (b, o) in enumerate(runs, 1) if o.submission is None]
    if len(runs) == 1:
        return failed[0][2].stop_reason if failed else ""
    by_reason: dict[str, list[tuple[int, BatchContext]]] = {}
    for number, batch, outcome in failed:
        by_reason.setdefault(outcome.stop_reason, []).append((number, batch))
    clauses = []
    for reason, parts in by_reason.items():
        if len(parts) == 1:
            number, batch = parts[0]
            clauses.append(f"part {number} ({batch.label}): {reason}")
        elif len(parts) == len(runs):
            clauses.append(f"all {plural(len(parts), 'part')}: {reason}")
        else:
            numbers = number_ranges([number for number, _ in parts])
            clauses.append(f"{plural(len(parts), 'part')} ({numbers} of {len(runs)}): {reason}")
    return "; ".join(clauses)


def number_ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 7, 9, 10] -> "1-3, 7, 9-10"."""
    spans: list[list[int]] = []
    for number in sorted(numbers):
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)


def transcript(runs: Runs, header: dict[str, Any]) -> list[dict[str, Any]]:
    """A header (what was reviewed, with what), then each part's messages and how it ended."""
    entries: list[dict[str, Any]] = [{"type": "review", **header}]
    for number, (batch, outcome) in enumerate(runs, 1):
        if len(runs) > 1:
            entries.append({"type": "batch", "part": number, "label": batch.label})
        entries.extend(outcome.transcript)
        entries.append(
            {
                "type": "end",
                "part": number,
                "submitted": outcome.submission is not None,
                "reason": outcome.stop_reason,
            }
        )
    return entries


def mark_unfinished(coverage: tuple[FileCoverage, ...], runs: Runs) -> tuple[FileCoverage, ...]:
    """A file counts as reviewed only when every loop that was shown it submitted a review.
    Its reason is the loop's, without the part's number: the parts of a review that failed
    as a whole share one reason, which a report can then say once (the review's own reason
    names the parts)."""
    unfinished: dict[str, str] = {}
    for batch, outcome in runs:
        if outcome.submission is not None:
            continue
        reason = " ".join(outcome.stop_reason.split())
        if len(reason) > _MAX_REASON_CHARS:  # cut where a reader sees it is cut
            reason = reason[: _MAX_REASON_CHARS - 1].rstrip() + "…"
        for path in batch.paths:
            unfinished.setdefault(path, f"did not finish: {reason}")
    return tuple(
        replace(c, reviewed=False, reason=unfinished[c.path])
        if c.path in unfinished and c.reviewed and not c.earlier
        else c
        for c in coverage
    )
