"""The JSON report's shape, version 1: the pydantic models (here and in json_context.py) are
its one definition. They build the document and read it back (`reviewer.report.json_report`)
and give its JSON Schema, shipped as reviewer/report/schema/report-v1.json. Adding a key is
compatible within version 1; renaming, removing or retyping one needs version 2.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ConfigDict, Field

from reviewer.findings import Severity
from reviewer.report.json_base import Strict as _Strict
from reviewer.report.json_context import (
    ContextV1,
    LearningProposalV1,
    LearningV1,
    RuleFileV1,
)

FORMAT = "reviewer-report"
VERSION = 1
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class FindingV1(_Strict):
    path: str = Field(
        description="Repository-relative path, '/'-separated; a name that is not valid UTF-8 "
        'is given in git\'s quoted form ("latin-\\351.txt").'
    )
    line: int = Field(ge=1, description="First line, on the side given by `side`.")
    end_line: int | None = Field(ge=1, description="Last line of a range; null for one line.")
    side: Literal["RIGHT", "LEFT"] = Field(
        description="RIGHT: the new file (head); LEFT: a removed line of the base version."
    )
    severity: Severity
    category: str | None = Field(
        description="bug, security, performance, maintainability, style, docs, tests, intent "
        "(the change does not do what its ticket asks), or null."
    )
    title: str
    body: str = Field(description="Markdown, as the model wrote it.")
    suggestion: str | None = Field(
        description="Exact replacement text for lines line..end_line; null when none."
    )
    fingerprint: str = Field(description="Stable id that does not depend on the line number.")
    inline: bool = Field(description="True when the finding sits on a commentable diff line.")
    placement_note: str = Field(description="Why it is not inline, or how it was placed.")
    on_unchanged_lines: bool = Field(
        False,
        description="Inline on unchanged lines the diff shows around the change (context), "
        "none of them added or removed.",
    )
    code: str = Field(description="The code the finding points at (its lines, its side).")
    earlier: bool = Field(
        False,
        description="Reported by an earlier run of the same pull request and still open.",
    )
    noise: str = Field(
        "", description="The noise table's class it is in (data/noise.toml); empty if none."
    )
    noise_action: Literal["", "discard", "info", "verify"] = Field(
        "",
        description="What the noise table did: its class's action, or verify when the "
        "class's words could not decide (a concrete failure named, a title that says more, "
        "a category alone); empty if in no class.",
    )
    noise_note: str = Field(
        "", description="What the noise table did with it, and how it was recognised."
    )
    force_verify: bool = Field(
        False,
        description="To be verified even below the `verify` severity floor (the noise "
        "table sent it to verification).",
    )
    suggestion_dropped: str = Field(
        "",
        description="Why the model's suggested change was left out (it would not apply "
        "cleanly); empty when none was.",
    )
    merged_from: int = Field(
        1,
        ge=1,
        description="How many reported findings this one stands for: the same problem (same "
        "file and side, overlapping lines, alike titles) found by several parts or loops is "
        "reported once.",
    )
    confidence: float | None = Field(
        None, ge=0, le=1, description="The model's confidence (0..1); null when it gave none."
    )
    verification: VerificationV1 | None = Field(
        None, description="The verification pass's verdict; null when it was not checked."
    )
    ticket: str = Field(
        "", description="An intent finding: the key of the ticket whose words it quotes."
    )
    ticket_quote: str = Field(
        "",
        description="An intent finding: the ticket's words it relies on, checked to be in "
        "that ticket's text; empty otherwise.",
    )


class DiscardedV1(FindingV1):
    reason: str = Field(
        description="Why it was discarded: the noise table's class and how it was recognised, "
        "refuted by verification (with the verifier's reason), or under min_confidence; a "
        "discarded finding is never posted and never gates."
    )


class NoiseClassV1(_Strict):
    name: str = Field(description="The class of the noise table (data/noise.toml).")
    description: str = Field(description="What kind of finding it is.")
    action: Literal["discard", "info", "verify"] = Field(
        description="discard: kept only in `discarded`; info: lowered to severity info; "
        "verify: sent to verification even below the `verify` severity floor."
    )
    count: int = Field(ge=0, description="Findings of this review in the class.")
    undecided: int = Field(
        0,
        ge=0,
        description="Of `count`, those the class's words could not decide: sent to "
        "verification instead of the class's action, their severity kept.",
    )


class VerificationV1(_Strict):
    verdict: Literal["confirmed", "refuted", "uncertain", "unverified"] = Field(
        description="What the check of the finding found; unverified: it could not run "
        "(a budget spent, the verifier's endpoint failed), and the finding is kept."
    )
    reason: str = Field(description="The verifier's reason, or why the check could not run.")
    tool_calls: int = Field(ge=0, description="Tool calls the verifier made.")
    severity_before: Severity | None = Field(
        description="The severity the review gave, when the verifier changed it; else null."
    )
    learning: str = Field(
        "",
        description="The id (`learnings[].id`) of the team's learning the verdict relied on, "
        "one the verifier was shown; empty when it named none.",
    )


class CountsV1(_Strict):
    critical: int = Field(ge=0)
    high: int = Field(ge=0)
    medium: int = Field(ge=0)
    low: int = Field(ge=0)
    info: int = Field(ge=0)


class FileV1(_Strict):
    path: str
    status: str = Field(description="added, modified, removed, renamed, ...")
    reviewed: bool
    reason: str = Field(description="Why the file was not reviewed; empty when it was.")
    earlier: bool = Field(
        False, description="Reviewed by an earlier run of the pull request; unchanged since."
    )
    partly_reviewed: bool = Field(
        False,
        description="Its diff was cut to fit a request: the model was shown only "
        "`shown_lines` and told to read the rest with the tools.",
    )
    shown_lines: list[tuple[int, int]] = Field(
        default_factory=list,
        description="For a partly reviewed file, the new-file line ranges [first, last] of "
        "its diff the model was shown; empty otherwise.",
    )


class UsageV1(_Strict):
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    total_tokens: int = Field(ge=0)
    requests: int = Field(ge=0)
    cached_prompt_tokens: int = Field(
        0, ge=0, description="The part of prompt_tokens the server read from its cache."
    )
    replies_read_from_text: int = Field(
        0,
        ge=0,
        description="Replies whose tool calls (the final answer included) were recovered "
        "from their text: the server did not return them as calls.",
    )


class PriceV1(_Strict):
    model: str = Field(description="The model name the price is for.")
    input: float = Field(ge=0, description="USD per million prompt tokens.")
    cached_input: float = Field(ge=0, description="USD per million cached prompt tokens.")
    output: float = Field(ge=0, description="USD per million completion tokens.")
    source: str = Field(description="Where the price comes from (the settings, or a page).")


class VerificationCostV1(_Strict):
    model: str = Field(description="The model that verified (verify_model, else the review's).")
    usage: UsageV1 = Field(description="The part of the review's `usage` verification spent.")
    price: PriceV1 | None = Field(
        description="The price of the model that verified (verify_model, else the review's), "
        "at which that part is counted; null when none is known (then `usd` is null)."
    )


class CostV1(_Strict):
    usd: float | None = Field(
        description="What the review cost, from the server's token counts; null when no "
        "price is known for the model (never another model's price)."
    )
    price: PriceV1 | None = Field(description="The price used; null when none is known.")
    note: str = Field(description="Empty with a price; else why there is no cost.")
    verification: VerificationCostV1 | None = Field(
        None,
        description="What the verification pass spent, priced at its own model's price; "
        "null when it sent no request.",
    )


class ClosedV1(_Strict):
    fingerprint: str
    path: str
    severity: Severity
    category: str | None
    title: str
    rule: str = Field(description="The SARIF rule id (category; security/<severity>).")


class FixedV1(ClosedV1):
    commit: str = Field(description="The commit at which its code was seen changed.")


class DismissedV1(ClosedV1):
    by: str = Field(description="Who dismissed it: a GitHub login, or the ignore file's entry.")
    how: str = Field(
        description='"resolved the thread", "reacted 👎", "replied “<phrase>”" or "ignore file".'
    )
    reason: str = Field(description="Why, as they said it; empty when they did not.")


class StateV1(_Strict):
    state: Literal["new", "open", "fixed", "dismissed"] = Field(
        description="new: first reported by this run; open: by an earlier run and still "
        "open; fixed: its code changed; dismissed: by a person or the ignore file."
    )
    rule: str
    severity: Severity
    how: str = Field(description="How it was dismissed; empty unless dismissed.")


class ReportV1(_Strict):
    """A review by reviewer: its verdict, findings, coverage and cost."""

    model_config = ConfigDict(title="reviewer report, version 1")

    format: Literal["reviewer-report"] = Field(description="Marks the document as a report.")
    version: Literal[1] = Field(description="Version of this document's shape.")
    reviewer_version: str = Field(description="Version of the program that wrote it.")
    status: Literal["complete", "incomplete"]
    incomplete_reason: str = Field(description="Why the review is incomplete; empty if it is not.")
    summary: str = Field(description="The model's overview, Markdown.")
    findings: list[FindingV1] = Field(description="Most severe first, then by path and line.")
    suppressed: list[FindingV1] = Field(
        description="Findings kept out of `findings` by min_severity or max_findings."
    )
    suppressed_unlisted: int = Field(
        default=0,
        ge=0,
        description="Findings below the threshold found by earlier runs of the pull request "
        "that its memory no longer lists one by one: counted, not in `suppressed`.",
    )
    fixed: list[FixedV1] = Field(
        default_factory=list,
        description="Findings of earlier runs of the pull request whose code changed.",
    )
    dismissed: list[DismissedV1] = Field(
        default_factory=list,
        description="Findings dismissed by a person on GitHub or by the ignore file: never "
        "posted again, never counted.",
    )
    discarded: list[DiscardedV1] = Field(
        default_factory=list,
        description="Findings discarded before posting, each with its reason: never posted, "
        "never counted, never gating.",
    )
    noise: list[NoiseClassV1] = Field(
        default_factory=list,
        description="The noise table's classes, in its order, with how many findings of "
        "this review (reported, suppressed and discarded) each took.",
    )
    states: dict[str, StateV1] = Field(
        default_factory=dict,
        description="Per fingerprint, the state of every finding of `findings`, "
        "`suppressed`, `fixed` and `dismissed`: to measure precision over time "
        "(`reviewer stats`).",
    )
    counts: CountsV1 = Field(description="Number of `findings` of each severity.")
    highest_severity: Severity | None
    model: str
    base: str
    head: str
    files: list[FileV1]
    rule_files: list[RuleFileV1] = Field(
        default_factory=list,
        description="The repository's rule files (AGENTS.md, ...) whose text the model was given.",
    )
    learnings: list[LearningV1] = Field(
        default_factory=list,
        description="The team's learnings (.reviewer/learnings.md at the base revision), each "
        "with its use in this review: the files it reached, the checks that showed it, the "
        "findings whose verdict relied on it.",
    )
    learnings_notes: list[str] = Field(
        default_factory=list,
        description="What of .reviewer/learnings.md was cut or left out, and why.",
    )
    learning_proposals: list[LearningProposalV1] = Field(
        default_factory=list,
        description="For each finding a person dismissed with a reason, the line to commit to "
        ".reviewer/learnings.md so later reviews know it; the bot never writes it.",
    )
    usage: UsageV1
    duration_seconds: float = Field(ge=0)
    tool_calls: int = Field(ge=0)
    turns: int = Field(ge=0)
    cost: CostV1 = Field(
        default_factory=lambda: CostV1(usd=None, price=None, note=""),
        description="What the review cost in USD, and the price it was computed with.",
    )
    context: ContextV1 = Field(
        default_factory=ContextV1,
        description="What the model was given besides the change: the tickets it names.",
    )


def report_schema() -> dict[str, Any]:
    """The JSON Schema of a version-1 report (what schema/report-v1.json holds)."""
    schema = ReportV1.model_json_schema()
    return {"$schema": SCHEMA_DIALECT, **schema}


def report_schema_text() -> str:
    """The exact text of schema/report-v1.json."""
    return json.dumps(report_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
