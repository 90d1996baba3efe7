"""What one loop's submissions were refused for, so that a refusal is not repeated forever.

A small model told that a finding is invalid often sends the same finding again, and again,
until a budget ends the review and every finding is lost with it (Qwen2.5-Coder-1.5B under
llama.cpp, bench/README.md). So each finding is refused once: sent again unchanged (same
place, same title) with the same problem, the submission is taken without it, and the
finding is discarded with why, kept in the JSON report's `discarded` list. A quote that is
in no file has its own, kinder rule (grounding.ground: the quote is dropped, the finding
kept), keyed by the quote in `quotes`; so has an `intent` finding's ticket claim
(checks/intent.py: the claim is dropped, the finding kept and verified), in `ticket_quotes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewer.checks.finding_in import FindingIn

REFUSED_AGAIN = "not accepted, and sent again unchanged after the model was told why"


@dataclass
class Refusals:
    # The quotes refused as in no file (grounding.ground), by path, side and quoted lines.
    quotes: set[tuple[str, ...]] = field(default_factory=set)
    # The intent claims refused (checks/intent.py), by place, title and ticket quote: sent
    # again unchanged, the finding is kept without the claim.
    ticket_quotes: set[tuple[str, ...]] = field(default_factory=set)
    # The problem each finding was refused for, by its place and title.
    findings: dict[tuple[str, str, int, int | None, str], str] = field(default_factory=dict)

    def again(self, finding: FindingIn, problem: str) -> bool:
        """True when `finding` was refused for `problem` before: it is then marked to be
        discarded (`_refused`) instead of refused again."""
        key = (finding.path, finding.side, finding.line, finding.end_line, finding.title)
        if self.findings.get(key) == problem:
            finding._refused = f"{REFUSED_AGAIN}: {problem}"
            return True
        self.findings[key] = problem
        return False
