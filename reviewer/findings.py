"""The neutral data in the middle: what producers (the agent) and reporters share.

Nothing here does I/O. A `Finding` is what the model reported, plus what the pipeline
learned about it (its fingerprint, and whether it can sit inline on the diff); a
`ReviewResult` is the whole outcome of one review, complete or not.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal


class Severity(StrEnum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Higher is more severe: critical 4 ... info 0."""
        return _RANKS[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


_RANKS = {
    Severity.CRITICAL: 4,
    Severity.HIGH: 3,
    Severity.MEDIUM: 2,
    Severity.LOW: 1,
    Severity.INFO: 0,
}

CATEGORIES = (
    "bug", "security", "performance", "maintainability", "style", "docs", "tests", "intent",
)  # fmt: skip
# `intent`: the change does not do what a ticket it names asks, or does what it forbids;
# such a finding quotes the ticket's words (`Finding.ticket_quote`, checks/intent.py).
INTENT = "intent"
Side = Literal["RIGHT", "LEFT"]
Placement = Literal["inline", "summary"]
# What the verification pass (verify.py) said of a finding; `unverified` when it could not
# run (a budget spent, the verifier's endpoint failed).
VerdictName = Literal["confirmed", "refuted", "uncertain", "unverified"]


@dataclass(frozen=True)
class Verification:
    """The verification of one finding: the verdict, its reason (one or two sentences), the
    tool calls the verifier made, and the severity the model gave when the verifier changed
    it (None when unchanged)."""

    verdict: VerdictName
    reason: str
    tool_calls: int = 0
    severity_before: Severity | None = None
    # The id of the team's learning (.reviewer/learnings.md) the verdict relied on, one the
    # verifier was shown; empty when it named none.
    learning: str = ""


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    severity: Severity
    title: str
    body: str
    end_line: int | None = None
    side: Side = "RIGHT"
    category: str | None = None
    suggestion: str | None = None
    # Set by the pipeline, not the model:
    fingerprint: str = ""
    placement: Placement = "summary"
    # Why a finding could not be inline (e.g. "line 80 is not part of the diff").
    placement_note: str = ""
    # Inline on lines the diff shows around the change (context), none of them added or
    # removed: reports say so, not "on a changed line".
    on_unchanged_lines: bool = False
    # The code the finding points at (lines line..end_line of its side), for reports.
    code: str = ""
    # Reported by an earlier run of the same pull request and still open (its code is
    # unchanged); False for what this run found.
    earlier: bool = False
    # For a LEFT finding: the line of the new file where its removed lines were (the first
    # line after them), so a tool that needs a place in the new file (SARIF) has one.
    new_file_line: int | None = None
    # Why its suggestion was left out (suggestion_check.py); empty when none was dropped.
    suggestion_dropped: str = ""
    # How many reported findings this one stands for: the same problem found by several
    # parts or loops is merged (merging.py), and each is counted.
    merged_from: int = 1
    # The noise class it is in (noise.py, data/noise.toml), what was done ("discard", "info",
    # "verify": the class's action, or verify when its words could not decide) and why.
    noise: str = ""
    noise_action: str = ""
    noise_note: str = ""
    # To be verified even when the `verify` severity floor would skip it (a noise class's
    # "verify" action): a mark the verification step reads.
    force_verify: bool = False
    # Why it was discarded (the noise table, refuted by verification, under min_confidence):
    # never posted, never gating, in the JSON report's `discarded`.
    discard_reason: str = ""
    # The model's own confidence (0..1) when it gave one, and what verification said.
    confidence: float | None = None
    verification: Verification | None = None
    # An `intent` finding: the ticket whose words it quotes (its key), and those words.
    ticket: str = ""
    ticket_quote: str = ""

    @property
    def inline(self) -> bool:
        return self.placement == "inline"

    @property
    def last_line(self) -> int:
        return self.end_line or self.line


def fingerprint(path: str, title: str, anchor_text: str, category: str | None = None) -> str:
    """A stable id for a finding that does not depend on its line number.

    It hashes the file, the kind of problem (category and normalized title) and the code the
    finding is anchored on (whitespace folded), so a push that moves the code keeps the id,
    and a push that changes the code gives a new one.
    """
    normalized_title = re.sub(r"[^a-z0-9]+", " ", title.lower()).strip()
    code = " ".join(anchor_text.split())
    digest = hashlib.sha256(
        "\x1f".join((path, category or "", normalized_title, code)).encode("utf-8", "surrogatepass")
    ).hexdigest()
    return digest[:16]


def occurrence_fingerprint(fingerprint_: str, occurrence: int) -> str:
    """The fingerprint of the `occurrence`-th (1, 2, ...) repeat of a finding whose own
    fingerprint is taken: identical code at another place, told apart by its order."""
    return hashlib.sha256(f"{fingerprint_}#{occurrence}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    # The part of `prompt_tokens` the server read from its prompt cache (billed at the
    # cached-input price), when it reports it (`prompt_tokens_details.cached_tokens`).
    cached_prompt_tokens: int = 0
    # Replies whose tool calls were read from their text (reviewer/llm/text_calls.py).
    replies_read_from_text: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.requests + other.requests,
            self.cached_prompt_tokens + other.cached_prompt_tokens,
            self.replies_read_from_text + other.replies_read_from_text,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.requests - other.requests,
            self.cached_prompt_tokens - other.cached_prompt_tokens,
            self.replies_read_from_text - other.replies_read_from_text,
        )


@dataclass(frozen=True)
class ModelPrice:
    """The price a review uses, and where it comes from (for reports to say)."""

    model: str
    input: float
    cached_input: float
    output: float
    source: str

    def cost(self, usage: Usage) -> float:
        """USD for `usage`: cached prompt tokens at the cached price, the rest at `input`."""
        cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
        return (
            (usage.prompt_tokens - cached) * self.input
            + cached * self.cached_input
            + usage.completion_tokens * self.output
        ) / 1_000_000

    def most(self, prompt_tokens: int, reply_tokens: int) -> float:
        """The most a request can cost: no cache hit, and the whole reply room used."""
        return (prompt_tokens * self.input + reply_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class FileCoverage:
    """A changed file and whether the review covered it; `reason` says why not."""

    path: str
    status: str
    reviewed: bool
    reason: str = ""
    # Reviewed by an earlier run and unchanged since, so this run did not show it again.
    earlier: bool = False
    # Its diff was cut to fit a request: the model was shown only `shown_lines` (new-file
    # line ranges, first and last) and told to read the rest with the tools.
    partly_reviewed: bool = False
    shown_lines: tuple[tuple[int, int], ...] = ()

    @property
    def shown_text(self) -> str:
        """`lines 1-4,771 shown` for a partly reviewed file; empty for one shown whole."""
        if not self.partly_reviewed:
            return ""
        if not self.shown_lines:
            return "only removed lines shown"
        spans = [f"{a:,}-{b:,}" if a != b else f"{a:,}" for a, b in self.shown_lines]
        noun = "lines" if len(spans) > 1 or "-" in spans[0] else "line"
        return f"{noun} {', '.join(spans)} shown"


@dataclass(frozen=True)
class RuleFileUse:
    """A rule file of the repository (AGENTS.md, a Cursor rule, ...) whose text the model was
    given: the changed files it reached, and what of it was cut or left out, and why."""

    path: str
    applied_to: tuple[str, ...]
    cut: str = ""


@dataclass(frozen=True)
class TicketUse:
    """A ticket the change names (reviewer/context/tickets/): read and shown to the model
    (`read`; `cut` says what of its text was left out), or not, and why (`why`)."""

    key: str
    url: str = ""
    title: str = ""
    status: str = ""
    read: bool = False
    why: str = ""
    cut: str = ""


@dataclass(frozen=True)
class LearningUse:
    """A learning of the team (.reviewer/learnings.md at the base) and its use in a review:
    the changed files whose part it reached, how many verification requests showed it, and
    the fingerprints of the findings whose verdict relied on it."""

    id: str
    scope: str
    text: str
    line: int
    cut: str = ""
    applied_to: tuple[str, ...] = ()
    verifications: int = 0
    relied_on: tuple[str, ...] = ()

    @property
    def used(self) -> bool:
        return bool(self.applied_to or self.verifications or self.relied_on)


# How a finding the ignore file (.reviewer/ignore.toml) names is shown as dismissed.
IGNORE_FILE_HOW = "ignore file"


@dataclass(frozen=True)
class ClosedFinding:
    """A finding that no longer counts: fixed (its code changed, at `commit`) or dismissed
    (by a person on its thread, or by the ignore file: `by`, `how`, `reason`)."""

    fingerprint: str
    severity: Severity
    category: str | None
    path: str
    title: str
    state: Literal["fixed", "dismissed"]
    commit: str = ""
    by: str = ""
    how: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ReviewResult:
    status: Literal["complete", "incomplete"]
    summary: str
    findings: tuple[Finding, ...]
    model: str
    base: str
    head: str
    files: tuple[FileCoverage, ...] = ()
    usage: Usage = field(default_factory=Usage)
    duration_seconds: float = 0.0
    tool_calls: int = 0
    turns: int = 0
    # Why the review is incomplete (budget, error), for every report to say.
    incomplete_reason: str = ""
    # Findings kept out of the reported list by min_severity or max_findings: annotated,
    # not dropped, so a report can still count or list them.
    suppressed: tuple[Finding, ...] = ()
    # Findings below the reporting threshold found by earlier runs that the bot's memory of
    # the change request no longer lists one by one (forge/memory.py had no room): counted
    # with `suppressed` wherever a report says how many there are.
    suppressed_unlisted: int = 0
    # A pull request's later run: findings and files say what was new in this run.
    incremental: bool = False
    # The rule files whose instructions reached the model (rule_files.py).
    rule_files: tuple[RuleFileUse, ...] = ()
    # The team's learnings read at the base (settings/learnings.py), each with its use, and
    # what of the file was left out or cut, and why.
    learnings: tuple[LearningUse, ...] = ()
    learnings_notes: tuple[str, ...] = ()
    # The model's price, when one is known (settings or the shipped table): the cost.
    price: ModelPrice | None = None
    # Findings of the pull request that were fixed or dismissed; never counted, never posted.
    closed: tuple[ClosedFinding, ...] = ()
    # Findings discarded before posting, each with its `discard_reason`: by the noise table,
    # refuted by verification, or under min_confidence. Never posted, never counted, kept
    # for the JSON report so nothing is lost.
    discarded: tuple[Finding, ...] = ()
    # The part of `usage` the verification pass spent, and the price of the model it used
    # (verify_model, else the review's): priced apart, never at the review model's price.
    verification_usage: Usage = field(default_factory=Usage)
    verification_price: ModelPrice | None = None
    verification_model: str = ""
    # The tickets the change names: what the model was told the change is for; how many
    # more it named (not read, not listed one by one), and why, one note a line.
    tickets: tuple[TicketUse, ...] = ()
    tickets_unlisted: int = 0
    tickets_notes: tuple[str, ...] = ()

    @property
    def unverified(self) -> tuple[Finding, ...]:
        """Reported findings that verification could not check (they are kept)."""
        return tuple(
            f
            for f in (*self.findings, *self.suppressed)
            if f.verification is not None and f.verification.verdict == "unverified"
        )

    @property
    def fixed(self) -> tuple[ClosedFinding, ...]:
        return tuple(c for c in self.closed if c.state == "fixed")

    @property
    def dismissed(self) -> tuple[ClosedFinding, ...]:
        return tuple(c for c in self.closed if c.state == "dismissed")

    @property
    def cost_usd(self) -> float | None:
        """What the review cost (USD), from the server's counts, the verification's part at
        its own model's price; None without a price for either."""
        if self.price is None:
            return None
        checks = self.verification_usage
        if not checks.requests:
            return self.price.cost(self.usage)
        if self.verification_price is None:
            return None
        return self.price.cost(self.usage - checks) + self.verification_price.cost(checks)

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def highest_severity(self) -> Severity | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=lambda s: s.rank)

    def counts(self) -> dict[Severity, int]:
        counts = dict.fromkeys(Severity, 0)
        for finding in self.findings:
            counts[finding.severity] += 1
        return counts


def sort_findings(findings: list[Finding] | tuple[Finding, ...]) -> list[Finding]:
    """Most severe first, then by file and line: the order every report uses."""
    return sorted(findings, key=lambda f: (-f.severity.rank, f.path, f.line, f.title))
