"""The JSON report: a versioned document for other programs.

Its shape is a public contract. The pydantic models below are the one definition: they build
the document, read it back (`parse_json`), and give its JSON Schema, shipped as
reviewer/report/schema/report-v1.json. A test pins the key sets and keeps the shipped schema
equal to the models, so any change to the shape is deliberate: adding a key is compatible
within version 1; renaming, removing or retyping one needs version 2.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reviewer import __version__
from reviewer.findings import (
    ClosedFinding,
    FileCoverage,
    Finding,
    ModelPrice,
    ReviewResult,
    RuleFileUse,
    Severity,
    Usage,
    Verification,
    sort_findings,
)
from reviewer.noise import noise_counts, noise_table
from reviewer.pricing import no_price_text
from reviewer.report.sarif import rule_id
from reviewer.sinks import data_name, printable

FORMAT = "reviewer-report"
VERSION = 1
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _Strict(BaseModel):
    # Unknown keys are refused when a report is read back: a typo is not silence.
    model_config = ConfigDict(extra="forbid", frozen=True)


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
        description="bug, security, performance, maintainability, style, docs, tests, or null."
    )
    title: str
    body: str = Field(description="Markdown, as the model wrote it.")
    suggestion: str | None = Field(
        description="Exact replacement text for lines line..end_line; null when none."
    )
    fingerprint: str = Field(description="Stable id that does not depend on the line number.")
    inline: bool = Field(description="True when the finding sits on a commentable diff line.")
    placement_note: str = Field(description="Why it is not inline, or how it was placed.")
    code: str = Field(description="The code the finding points at (its lines, its side).")
    earlier: bool = Field(
        False,
        description="Reported by an earlier run of the same pull request and still open.",
    )
    noise: str = Field(
        "", description="The noise table's class it is in (data/noise.toml); empty if none."
    )
    noise_note: str = Field(
        "", description="What the noise table did with it, and how it was recognised."
    )
    force_verify: bool = Field(
        False,
        description="To be verified even below the `verify` severity floor (a noise class "
        "whose action is verify).",
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


class RuleFileV1(_Strict):
    path: str = Field(description="The rule file, as the base revision has it.")
    applied_to: list[str] = Field(description="The changed files whose review it reached.")
    cut: str = Field(description="What of it was cut or left out, and why; empty if nothing.")


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
    usage: UsageV1
    duration_seconds: float = Field(ge=0)
    tool_calls: int = Field(ge=0)
    turns: int = Field(ge=0)
    cost: CostV1 = Field(
        default_factory=lambda: CostV1(usd=None, price=None, note=""),
        description="What the review cost in USD, and the price it was computed with.",
    )


def render_json(result: ReviewResult, *, indent: int | None = 2) -> str:
    """The review as a version-1 JSON report; keys sorted, findings in report order."""
    report = to_report(printable(result, data_name))
    return (
        json.dumps(
            report.model_dump(mode="json"), indent=indent, sort_keys=True, ensure_ascii=False
        )
        + "\n"
    )


def to_report(result: ReviewResult) -> ReportV1:
    counts = result.counts()
    highest = result.highest_severity()
    usage = result.usage
    return ReportV1(
        format=FORMAT,
        version=VERSION,
        reviewer_version=__version__,
        status=result.status,
        incomplete_reason=result.incomplete_reason,
        summary=result.summary,
        findings=[_finding(f) for f in sort_findings(result.findings)],
        suppressed=[_finding(f) for f in sort_findings(result.suppressed)],
        fixed=[FixedV1(**_closed(c), commit=c.commit) for c in _sorted(result.fixed)],
        dismissed=[
            DismissedV1(**_closed(c), by=c.by, how=c.how, reason=c.reason)
            for c in _sorted(result.dismissed)
        ],
        discarded=[
            DiscardedV1(**_finding(f).model_dump(), reason=f.discard_reason)
            for f in sort_findings(result.discarded)
        ],
        noise=_noise(result),
        states=_states(result),
        counts=CountsV1(**{s.value: counts[s] for s in Severity}),
        highest_severity=highest,
        model=result.model,
        base=result.base,
        head=result.head,
        # The same fields on both sides: a new one cannot be forgotten in one direction.
        files=[FileV1(**asdict(f)) for f in result.files],
        rule_files=[RuleFileV1(**asdict(r)) for r in result.rule_files],
        usage=_usage(usage),
        cost=_cost(result),
        # Milliseconds are plenty, and keep the document stable across float noise.
        duration_seconds=round(max(0.0, result.duration_seconds), 3),
        tool_calls=result.tool_calls,
        turns=result.turns,
    )


def parse_json(text: str | bytes) -> ReviewResult:
    """A ReviewResult back from a version-1 report (to render it in another format later).

    Raises pydantic.ValidationError for anything that is not a valid version-1 report.
    """
    report = ReportV1.model_validate_json(text)
    checks = report.cost.verification
    return ReviewResult(
        status=report.status,
        summary=report.summary,
        findings=tuple(_from_finding(f) for f in report.findings),
        suppressed=tuple(_from_finding(f) for f in report.suppressed),
        discarded=tuple(
            replace(_from_finding(f), discard_reason=f.reason) for f in report.discarded
        ),
        closed=tuple(
            ClosedFinding(
                c.fingerprint, c.severity, c.category, c.path, c.title, "fixed", commit=c.commit
            )
            for c in report.fixed
        )
        + tuple(
            ClosedFinding(
                c.fingerprint,
                c.severity,
                c.category,
                c.path,
                c.title,
                "dismissed",
                by=c.by,
                how=c.how,
                reason=c.reason,
            )
            for c in report.dismissed
        ),
        model=report.model,
        base=report.base,
        head=report.head,
        files=tuple(
            FileCoverage(**{**f.model_dump(), "shown_lines": tuple(f.shown_lines)})
            for f in report.files
        ),
        rule_files=tuple(
            RuleFileUse(r.path, tuple(r.applied_to), r.cut) for r in report.rule_files
        ),
        usage=_from_usage(report.usage),
        price=ModelPrice(**report.cost.price.model_dump()) if report.cost.price else None,
        verification_usage=_from_usage(checks.usage) if checks else Usage(),
        verification_price=(
            ModelPrice(**checks.price.model_dump()) if checks and checks.price else None
        ),
        verification_model=checks.model if checks else "",
        duration_seconds=report.duration_seconds,
        tool_calls=report.tool_calls,
        turns=report.turns,
        incomplete_reason=report.incomplete_reason,
    )


def _sorted(closed: tuple[ClosedFinding, ...]) -> list[ClosedFinding]:
    return sorted(closed, key=lambda c: (-c.severity.rank, c.path, c.title, c.fingerprint))


def _closed(item: ClosedFinding) -> dict[str, Any]:
    return {
        "fingerprint": item.fingerprint,
        "path": item.path,
        "severity": item.severity,
        "category": item.category,
        "title": item.title,
        "rule": rule_id(item),
    }


def _states(result: ReviewResult) -> dict[str, StateV1]:
    states = {
        f.fingerprint: StateV1(
            state="open" if f.earlier else "new", rule=rule_id(f), severity=f.severity, how=""
        )
        for f in (*result.suppressed, *result.findings)
    }
    for item in result.closed:
        states[item.fingerprint] = StateV1(
            state=item.state, rule=rule_id(item), severity=item.severity, how=item.how
        )
    return dict(sorted(states.items()))


def _noise(result: ReviewResult) -> list[NoiseClassV1]:
    every = (*result.findings, *result.suppressed, *result.discarded)
    counts = noise_counts(every)
    return [
        NoiseClassV1(name=c.name, description=c.description, action=c.action, count=counts[c.name])
        for c in noise_table().classes
    ]


def report_schema() -> dict[str, Any]:
    """The JSON Schema of a version-1 report (what schema/report-v1.json holds)."""
    schema = ReportV1.model_json_schema()
    return {"$schema": SCHEMA_DIALECT, **schema}


def report_schema_text() -> str:
    """The exact text of schema/report-v1.json."""
    return json.dumps(report_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _cost(result: ReviewResult) -> CostV1:
    price, cost = result.price, result.cost_usd
    checks = result.verification_usage
    verification = None
    if checks.requests:
        verification = VerificationCostV1(
            model=result.verification_model,
            usage=_usage(checks),
            price=_price(result.verification_price),
        )
    if price is None or cost is None:
        model = result.model if price is None else result.verification_model
        return CostV1(usd=None, price=_price(price), note=no_price_text(model),
                      verification=verification)  # fmt: skip
    # Micro-dollars are plenty, and keep the document stable across float noise.
    return CostV1(usd=round(cost, 6), price=_price(price), note="", verification=verification)


def _price(price: ModelPrice | None) -> PriceV1 | None:
    if price is None:
        return None
    return PriceV1(
        model=price.model,
        input=price.input,
        cached_input=price.cached_input,
        output=price.output,
        source=price.source,
    )


def _usage(usage: Usage) -> UsageV1:
    return UsageV1(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
        requests=usage.requests,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        replies_read_from_text=usage.replies_read_from_text,
    )


def _from_usage(usage: UsageV1) -> Usage:
    return Usage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        requests=usage.requests,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        replies_read_from_text=usage.replies_read_from_text,
    )


def _finding(finding: Finding) -> FindingV1:
    return FindingV1(
        path=finding.path,
        line=finding.line,
        end_line=finding.end_line,
        side=finding.side,
        severity=finding.severity,
        category=finding.category,
        title=finding.title,
        body=finding.body,
        suggestion=finding.suggestion,
        fingerprint=finding.fingerprint,
        inline=finding.inline,
        placement_note=finding.placement_note,
        code=finding.code,
        earlier=finding.earlier,
        noise=finding.noise,
        noise_note=finding.noise_note,
        force_verify=finding.force_verify,
        suggestion_dropped=finding.suggestion_dropped,
        merged_from=finding.merged_from,
        confidence=finding.confidence,
        verification=_verification(finding.verification),
    )


def _verification(check: Verification | None) -> VerificationV1 | None:
    if check is None:
        return None
    return VerificationV1(
        verdict=check.verdict,
        reason=check.reason,
        tool_calls=check.tool_calls,
        severity_before=check.severity_before,
    )


def _from_finding(item: FindingV1) -> Finding:
    return Finding(
        path=item.path,
        line=item.line,
        end_line=item.end_line,
        side=item.side,
        severity=item.severity,
        category=item.category,
        title=item.title,
        body=item.body,
        suggestion=item.suggestion,
        fingerprint=item.fingerprint,
        placement="inline" if item.inline else "summary",
        placement_note=item.placement_note,
        code=item.code,
        earlier=item.earlier,
        noise=item.noise,
        noise_note=item.noise_note,
        force_verify=item.force_verify,
        suggestion_dropped=item.suggestion_dropped,
        merged_from=item.merged_from,
        confidence=item.confidence,
        verification=Verification(**item.verification.model_dump()) if item.verification else None,
    )
