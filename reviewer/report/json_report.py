"""The JSON report: a versioned document for other programs, built from the neutral result
(`render_json`) and read back into it (`parse_json`, for `reviewer stats` and the eval).

Its shape is a public contract, defined once by the models in `reviewer.report.json_schema`.
A test pins the key sets and keeps the shipped schema equal to the models, so any change to
the shape is deliberate.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from reviewer import __version__
from reviewer.checks.noise import noise_counts, noise_table, undecided_counts
from reviewer.findings import (
    ClosedFinding,
    FileCoverage,
    Finding,
    LearningUse,
    ModelPrice,
    ReviewResult,
    RuleFileUse,
    Severity,
    TicketUse,
    Usage,
    Verification,
    sort_findings,
)
from reviewer.report.json_context import (
    ContextV1,
    LearningProposalV1,
    LearningV1,
    RuleFileV1,
    TicketV1,
)
from reviewer.report.json_schema import (
    FORMAT,
    VERSION,
    CostV1,
    CountsV1,
    DiscardedV1,
    DismissedV1,
    FileV1,
    FindingV1,
    FixedV1,
    NoiseClassV1,
    PriceV1,
    ReportV1,
    StateV1,
    UsageV1,
    VerificationCostV1,
    VerificationV1,
)
from reviewer.report.sarif import rule_id
from reviewer.safety.sinks import data_name, printable
from reviewer.settings.learnings import LEARNINGS_FILE, proposed_learning
from reviewer.settings.pricing import no_price_text


def render_json(
    result: ReviewResult, *, indent: int | None = 2, redact: Callable[[str], str] = str
) -> str:
    """The review as a version-1 JSON report; keys sorted, findings in report order.
    `redact` applies to the text the report composes (a proposed learning's line)."""
    report = to_report(printable(result, data_name), redact)
    return (
        json.dumps(
            report.model_dump(mode="json"), indent=indent, sort_keys=True, ensure_ascii=False
        )
        + "\n"
    )


def to_report(result: ReviewResult, redact: Callable[[str], str] = str) -> ReportV1:
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
        suppressed_unlisted=result.suppressed_unlisted,
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
        learnings=[LearningV1(**asdict(item)) for item in result.learnings],
        learnings_notes=list(result.learnings_notes),
        learning_proposals=_proposals(result, redact),
        usage=_usage(usage),
        cost=_cost(result),
        # Milliseconds are plenty, and keep the document stable across float noise.
        duration_seconds=round(max(0.0, result.duration_seconds), 3),
        tool_calls=result.tool_calls,
        turns=result.turns,
        context=ContextV1(
            tickets=[TicketV1(**asdict(t)) for t in result.tickets],
            unlisted=result.tickets_unlisted,
            notes=list(result.tickets_notes),
        ),
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
        suppressed_unlisted=report.suppressed_unlisted,
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
        learnings=tuple(
            LearningUse(
                **{
                    **item.model_dump(),
                    "applied_to": tuple(item.applied_to),
                    "relied_on": tuple(item.relied_on),
                }
            )
            for item in report.learnings
        ),
        learnings_notes=tuple(report.learnings_notes),
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
        tickets=tuple(TicketUse(**t.model_dump()) for t in report.context.tickets),
        tickets_unlisted=report.context.unlisted,
        tickets_notes=tuple(report.context.notes),
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


def _proposals(result: ReviewResult, redact: Callable[[str], str]) -> list[LearningProposalV1]:
    """A learning to commit for each finding a person dismissed with a reason."""
    proposals = []
    for item in _sorted(result.dismissed):
        line = proposed_learning(item)
        if line is not None:
            proposals.append(
                LearningProposalV1(
                    line=redact(line),
                    file=LEARNINGS_FILE,
                    fingerprint=item.fingerprint,
                    path=item.path,
                    title=item.title,
                    by=item.by,
                    how=item.how,
                    reason=item.reason,
                )
            )
    return proposals


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
    counts, undecided = noise_counts(every), undecided_counts(every)
    return [
        NoiseClassV1(
            name=c.name,
            description=c.description,
            action=c.action,
            count=counts[c.name],
            undecided=undecided[c.name],
        )
        for c in noise_table().classes
    ]


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
        on_unchanged_lines=finding.on_unchanged_lines,
        code=finding.code,
        earlier=finding.earlier,
        noise=finding.noise,
        noise_action=finding.noise_action,
        noise_note=finding.noise_note,
        force_verify=finding.force_verify,
        suggestion_dropped=finding.suggestion_dropped,
        merged_from=finding.merged_from,
        confidence=finding.confidence,
        verification=_verification(finding.verification),
        ticket=finding.ticket,
        ticket_quote=finding.ticket_quote,
    )


def _verification(check: Verification | None) -> VerificationV1 | None:
    if check is None:
        return None
    return VerificationV1(
        verdict=check.verdict,
        reason=check.reason,
        tool_calls=check.tool_calls,
        severity_before=check.severity_before,
        learning=check.learning,
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
        on_unchanged_lines=item.on_unchanged_lines,
        code=item.code,
        earlier=item.earlier,
        noise=item.noise,
        noise_action=item.noise_action,
        noise_note=item.noise_note,
        force_verify=item.force_verify,
        suggestion_dropped=item.suggestion_dropped,
        merged_from=item.merged_from,
        confidence=item.confidence,
        verification=Verification(**item.verification.model_dump()) if item.verification else None,
        ticket=item.ticket,
        ticket_quote=item.ticket_quote,
    )
