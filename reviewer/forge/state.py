"""What the bot remembers of one change request between runs (memory.py reads and writes it
on a signed line of its summary comment; scope.py decides a run's scope from it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewer.findings import ClosedFinding
from reviewer.forge.carry import OpenFinding


@dataclass(frozen=True)
class PullState:
    head: str  # the head the run that wrote this looked at
    reviewed_at: str | None = None  # every file of the pull request at this commit was reviewed
    reviewed_files: dict[str, str] = field(default_factory=dict)  # path -> blob, since then
    findings: tuple[OpenFinding, ...] = ()
    # Open findings the state had no room for: counted so the gate can still see them.
    dropped: dict[str, int] = field(default_factory=dict)
    # The model's summary of the last complete review that asked it, and that review's head.
    summary: str = ""
    summary_at: str | None = None
    # Findings of the pull request that were fixed or dismissed (the summary lists them), the
    # threads the bot resolved itself (GitHub may not name an app as `resolvedBy`), and how
    # many closed records the state had no room for.
    closed: tuple[ClosedFinding, ...] = ()
    resolved: tuple[str, ...] = ()
    closed_cut: int = 0
    # Open findings kept out of the reported list (min_severity, max_findings): remembered so a
    # run that does not see them again still counts them; cut first when room runs out, and
    # how many were cut (they never gate: they did not when they were found).
    suppressed: tuple[OpenFinding, ...] = ()
    suppressed_cut: int = 0
    # The head of the last full review that was asked for (`/review`, `full-review: true`)
    # and sent the model a request, complete or not: someone without write access gets one
    # per head (asking.py).
    full_review_at: str | None = None
