"""`reviewer review --dry-run`: the review up to its first model request, and its plan.

The plan comes from `prepare_review`, the very step a real run starts with, so the parts it
lists are the parts a real run then sends. Nothing here opens a connection: the plan says
what would be sent and what it may cost, as a range.

The estimate: at the low end every part answers at once (one request each: its first
message, the tool schemas, a short reply); at the high end the review spends its budgets
in full (max_turns requests of at most a context window each, within max_tokens and
max_cost). A real review lands in between; the budgets make the high end a promise. When
even the low end overruns a budget the note says which: a real run would stop incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.findings import FileCoverage, ModelPrice, RuleFileUse
from reviewer.llm.reply_size import reply_room
from reviewer.loop.agent import AgentEvents
from reviewer.loop.tokens import estimate_request_tokens
from reviewer.review.prepare import Prepared, ReviewRequest, prepare_review
from reviewer.review.submission import review_tools
from reviewer.settings.config import Settings
from reviewer.settings.pricing import no_price_text, usd
from reviewer.wording import plural

# The shortest reply that ends a part: a submit_review call with a summary, few findings.
MIN_REPLY_TOKENS = 200


@dataclass(frozen=True)
class PlannedPart:
    number: int
    label: str
    paths: tuple[str, ...]
    # The estimated prompt of the part's first request (system, task, tool schemas).
    first_request_tokens: int


@dataclass(frozen=True)
class Span:
    low: float
    high: float


@dataclass(frozen=True)
class Estimate:
    requests: Span
    tokens: Span
    # USD; None without a price for the model (the note says so).
    cost: Span | None
    note: str


@dataclass(frozen=True)
class DryRun:
    base: str
    head: str
    model: str
    parts: tuple[PlannedPart, ...]
    files: tuple[FileCoverage, ...]
    settings: dict[str, tuple[Any, str]]
    estimate: Estimate
    # The repository's rule files and the changed files each applies to, from the same plan a
    # real run sends.
    rule_files: tuple[RuleFileUse, ...] = ()


def plan_review(request: ReviewRequest, events: AgentEvents | None = None) -> DryRun:
    """The plan of a review, without asking any model."""
    return plan_of(prepare_review(request, events, dry_run=True))


def plan_of(prepared: Prepared) -> DryRun:
    settings = prepared.settings
    tools = review_tools()
    parts = []
    for number, batch in enumerate(prepared.plan.batches, 1):
        messages = [
            {"role": "system", "content": prepared.redactor(batch.system)},
            {"role": "user", "content": batch.task},
        ]
        tokens = estimate_request_tokens(messages, tools)
        parts.append(PlannedPart(number, batch.label, batch.paths, tokens))
    return DryRun(
        base=prepared.change.base,
        head=prepared.head_label,
        model=settings.model or "",
        parts=tuple(parts),
        files=prepared.coverage,
        settings=_settings(settings, prepared.sources),
        estimate=estimate(parts, settings, prepared.price),
        rule_files=prepared.plan.rule_files,
    )


def estimate(parts: list[PlannedPart], settings: Settings, price: ModelPrice | None) -> Estimate:
    if not parts:
        zero = Span(0, 0)
        return Estimate(zero, zero, zero if price else None, "nothing to send to the model")
    room = reply_room(settings)
    low_prompt = sum(part.first_request_tokens for part in parts)
    low_reply = MIN_REPLY_TOKENS * len(parts)
    # A real run never spends past its budgets: both ends are capped by them.
    cap = min(settings.max_tokens, settings.max_turns * settings.context_window)
    tokens = Span(min(low_prompt + low_reply, cap), cap)
    requests = Span(min(len(parts), settings.max_turns), settings.max_turns)
    short = _too_small(len(parts), low_prompt + low_reply, settings)
    if price is None:
        note = "; ".join(filter(None, [_short_note(short), no_price_text(settings.model)]))
        return Estimate(requests, tokens, None, note)
    low_cost = price.most(low_prompt, low_reply)
    high_reply = min(settings.max_turns * room, cap)
    high_cost = price.most(cap - high_reply, high_reply)
    if settings.max_cost is not None:
        if low_cost > settings.max_cost:
            short.append(f"at least {usd(low_cost)} and max_cost = {usd(settings.max_cost)}")
        low_cost, high_cost = (min(c, settings.max_cost) for c in (low_cost, high_cost))
    note = _short_note(short)
    return Estimate(requests, tokens, Span(min(low_cost, high_cost), high_cost), note)


def _too_small(parts: int, tokens: int, settings: Settings) -> list[str]:
    """Which budgets even the cheapest run of this change would overrun."""
    short = []
    if parts > settings.max_turns:
        short.append(
            f"{plural(parts, 'part')} need {plural(parts, 'request')} and "
            f"max_turns = {settings.max_turns}"
        )
    if tokens > settings.max_tokens:
        short.append(f"at least {tokens:,} tokens and max_tokens = {settings.max_tokens:,}")
    return short


def _short_note(short: list[str]) -> str:
    if not short:
        return ""
    return (
        "the budgets are too small for this change (" + "; ".join(short) + "): a real run "
        "would stop incomplete; raise them or review a smaller change"
    )


def _settings(settings: Settings, sources: dict[str, str]) -> dict[str, tuple[Any, str]]:
    """Each setting's value and where it comes from; the API key only as set or not."""
    values = settings.model_dump(mode="json")
    values["api_key"] = "(set)" if settings.api_key is not None else None
    return {name: (values[name], sources.get(name, "default")) for name in values}
