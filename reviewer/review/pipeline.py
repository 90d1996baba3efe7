"""The review pipeline, start to finish: the review prepared (settings, change, context:
`reviewer.review.prepare`), then the agent over each part, checks, anchors, the result.

Reporting and the exit code are the caller's (the CLI's): this returns the neutral result.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from reviewer import __version__
from reviewer.change import Change
from reviewer.change.lines import LineCounter
from reviewer.checks.grounding import ground, side_lines
from reviewer.checks.intent import intent_problem
from reviewer.checks.merging import merge_overlapping
from reviewer.checks.noise import apply_noise_table
from reviewer.checks.suggestion_check import checked_suggestion
from reviewer.checks.verdict import SUBMIT_VERDICT
from reviewer.checks.verify import Verifier, verify_environment, verify_findings
from reviewer.context.tickets.model import Ticket
from reviewer.errors import ToolError
from reviewer.findings import (
    FileCoverage,
    Finding,
    ReviewResult,
    TicketUse,
    sort_findings,
)
from reviewer.llm import DEFAULT_BASE_URL, ChatModel, Connection, ServerProfile
from reviewer.loop.agent import Agent, AgentEvents, AgentOutcome
from reviewer.loop.budget import ReviewBudget, verify_price
from reviewer.review import parts
from reviewer.review.anchor import merge_duplicates, place, split_reported
from reviewer.review.context import BatchContext
from reviewer.review.prepare import ReviewRequest, prepare_review
from reviewer.review.refusals import Refusals
from reviewer.review.submission import (
    SUBMIT_REVIEW,
    FindingIn,
    ReviewSubmission,
    SubmitReview,
    check_finding,
)
from reviewer.safety.redact import Redactor
from reviewer.settings.config import Settings
from reviewer.settings.ignore_file import IgnoreFile, load_ignore_file
from reviewer.settings.learning_prompts import learning_uses
from reviewer.tools import TOOLS
from reviewer.workspace import (
    Workspace,
)
from reviewer.workspace.paths import quote_path


@dataclass(frozen=True)
class Review:
    result: ReviewResult
    settings: Settings
    transcript: list[dict[str, Any]]
    # The whole change and the head's lines, as the findings were checked against them.
    change: Change
    lines: LineCounter
    # The ignore file the review honoured (read at the base), for findings carried into it.
    ignore: IgnoreFile


def run_review(request: ReviewRequest, events: AgentEvents | None = None) -> Review:
    prepared = prepare_review(request, events)
    started, base, head = prepared.started, prepared.base, prepared.head
    settings, change, shown = prepared.settings, prepared.change, prepared.shown
    workspace, plan, coverage = prepared.workspace, prepared.plan, prepared.coverage
    redactor, base_point, head_label = prepared.redactor, change.base, prepared.head_label
    # Files read to check findings are read once, for validation and for anchoring.
    counter = LineCounter(workspace, change)
    ignore = load_ignore_file(prepared.root, base)

    def result(
        runs: list[tuple[BatchContext, AgentOutcome]],
        summary: str = "",
        verifier: Verifier | None = None,
    ) -> Review:
        complete = all(outcome.submission is not None for _, outcome in runs)
        raw = [
            finding
            for _, outcome in runs
            for finding in (
                outcome.submission.findings if outcome.submission else outcome.unverified_findings
            )
        ]
        # The ignore file is read at the base, like the settings: a change cannot silence
        # what it is judged by. What it names is reported as dismissed, never counted.
        # The noise table (data/noise.toml) before the ignore file: what it discards is
        # kept for the report, never posted.
        placed, refused = _split_refused(_place_all(raw, change, counter, redactor))
        placed, discarded = apply_noise_table(placed, change)
        discarded = [*refused, *discarded]
        findings, ignored = ignore.split(placed)
        # Checked before the cut by min_severity and max_findings: a refuted finding must
        # not take a place a real one needs.
        checked = verify_findings(findings, settings, verifier, events)
        reported, suppressed = split_reported(
            checked.kept, settings.min_severity, settings.max_findings
        )
        outcomes = [outcome for _, outcome in runs]
        return Review(
            ReviewResult(
                status="complete" if complete else "incomplete",
                summary=redactor(summary or parts.summary(runs)),
                findings=tuple(reported),
                suppressed=tuple(suppressed),
                model=settings.model or "",
                base=base_point,
                head=head_label,
                files=parts.mark_unfinished(coverage, runs),
                usage=sum((o.usage for o in outcomes), checked.usage),
                duration_seconds=round(time.monotonic() - started, 3),
                tool_calls=sum(o.tool_calls for o in outcomes) + checked.tool_calls,
                turns=sum(o.turns for o in outcomes) + checked.turns,
                incomplete_reason=parts.reasons(runs),
                rule_files=plan.rule_files,
                learnings=learning_uses(
                    plan.learnings,
                    plan.learnings_applied,
                    checked.learnings_shown,
                    (*checked.kept, *checked.discarded),
                ),
                learnings_notes=(*plan.learnings.notes, *plan.learnings_cuts),
                price=prepared.price,
                closed=tuple(ignored),
                tickets=tuple(ticket_use(t) for t in prepared.tickets),
                tickets_unlisted=prepared.ticket_context.unlisted,
                tickets_notes=prepared.ticket_context.notes,
                discarded=tuple(sort_findings((*discarded, *checked.discarded))),
                verification_usage=checked.usage,
                verification_price=verify_price(settings),
                verification_model=settings.verify_model or settings.model or "",
            ),
            settings,
            parts.transcript(
                runs,
                {
                    "base": base_point,
                    "head": head_label,
                    "model": settings.model or "",
                    "base_url": settings.base_url or DEFAULT_BASE_URL,
                    "settings": settings.model_dump(mode="json", exclude={"api_key"}),
                    "reviewer": __version__,
                },
            )
            + checked.transcript,
            change,
            counter,
            ignore,
        )

    if not plan.batches:
        swapped = head is not None and head == change.base and base != head
        # A fresh clone's default base (origin/HEAD) is the branch it checked out: the head.
        default_is_head = request.base is None and head is not None and base == head
        summary = _nothing_to_review(
            change,
            coverage,
            incremental=shown is not change,
            swapped=swapped,
            default_is_head=default_is_head,
        )
        return result([], summary)

    # One purse for every loop: a budget caps the whole review, however it is split.
    budget = ReviewBudget(settings, deadline=started + settings.max_seconds)
    # What one loop learns about the server (a parameter it refuses), every loop uses.
    profile = ServerProfile()
    connection = Connection(settings)

    def review_batch(batch: BatchContext) -> AgentOutcome:
        number = plan.batches.index(batch) + 1
        refused = Refusals()  # what this loop's submissions were refused for
        part_events = events.for_part(number, len(plan.batches), batch.label) if events else None
        agent = Agent(
            model=chat_model(settings, events, profile, connection, SUBMIT_REVIEW),
            workspace=workspace,
            settings=settings,
            final=ReviewSubmission(
                lambda submission: _check_submission(
                    submission, change, workspace, counter, refused, prepared.tickets
                )
            ),
            redactor=redactor,
            events=part_events,
            budget=budget,
            record=request.keep_transcript,
        )
        # The diff can hold committed secrets; they must not reach the model either. The task
        # is redacted value by value as it is rendered (build_plan), never as one text.
        return agent.run(redactor(batch.system), batch.task)

    if len(plan.batches) == 1:
        outcomes = [review_batch(plan.batches[0])]
    else:
        with ThreadPoolExecutor(max_workers=min(settings.concurrency, len(plan.batches))) as pool:
            outcomes = list(pool.map(review_batch, plan.batches))
    verifier = Verifier(
        settings=settings,
        workspace=workspace,
        change=change,
        redactor=redactor,
        budget=budget,
        model=lambda own: chat_model(own, events, profile, connection, SUBMIT_VERDICT),
        environment=verify_environment(prepared.root, base),
        repository=request.info.repository if request.info else quote_path(prepared.root.name),
        record=request.keep_transcript,
        tickets=prepared.tickets,
        learnings=plan.learnings,
    )
    return result(list(zip(plan.batches, outcomes, strict=True)), verifier=verifier)


def ticket_use(ticket: Ticket) -> TicketUse:
    """A ticket as the reports name it: without its text (the model had it; the reports say
    what it was and whether it was read)."""
    return TicketUse(
        ticket.key, ticket.url, ticket.title, ticket.status, ticket.read, ticket.why, ticket.cut
    )


def chat_model(
    settings: Settings,
    events: AgentEvents | None,
    profile: ServerProfile,
    connection: Connection,
    final_tool: str,
) -> ChatModel:
    """The model one loop talks to; `profile` and `connection` are shared by a review's loops.
    A tool call written as text may name the tools or the loop's final tool (anything else in
    the text is prose)."""
    return ChatModel(
        settings,
        profile=profile,
        on_retry=events.retrying if events else None,
        on_note=(lambda text: events.note(f"model endpoint: {text}")) if events else None,
        tool_names=frozenset({*TOOLS, final_tool}),
        final_tool=final_tool,
        connection=connection,
    )


def _check_submission(
    submission: SubmitReview,
    change: Change,
    workspace: Workspace,
    counter: LineCounter,
    refused: Refusals,
    tickets: tuple[Ticket, ...],
) -> dict[int, str]:
    problems: dict[int, str] = {}
    for number, finding in enumerate(submission.findings, 1):
        problem = _finding_problem(finding, change, workspace, counter, refused, tickets)
        if problem and not refused.again(finding, problem):
            problems[number] = problem
    return problems


def _finding_problem(
    finding: FindingIn,
    change: Change,
    workspace: Workspace,
    counter: LineCounter,
    refused: Refusals,
    tickets: tuple[Ticket, ...],
) -> str | None:
    try:
        finding.path = workspace.normalize(finding.path, allow_root=False)
    except ToolError as exc:
        return str(exc)
    return (
        check_finding(
            finding, counter, lambda path, line: change.locate(path, line, "LEFT") is not None
        )
        or ground(
            finding,
            change,
            lambda path, side: side_lines(path, side, change, counter),
            refused.quotes,
        )
        or intent_problem(finding, tickets, refused.ticket_quotes)
    )


def _split_refused(placed: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """The findings kept, and those refused twice unchanged (Refusals.again): discarded."""
    return [f for f in placed if not f.discard_reason], [f for f in placed if f.discard_reason]


def _place_all(
    raw: list[FindingIn], change: Change, counter: LineCounter, redactor: Redactor
) -> list[Finding]:
    placed = []
    for finding in raw:
        finding.title = redactor(finding.title)
        finding.body = redactor(finding.body)
        if finding.suggestion is not None:
            finding.suggestion = redactor(finding.suggestion)
        dropped = _check_suggestion(finding, counter)
        if dropped:
            finding.suggestion = None
        placed.append(replace(place(finding, change, counter), suggestion_dropped=dropped))
    return merge_overlapping(merge_duplicates(placed))


def _check_suggestion(finding: FindingIn, counter: LineCounter) -> str:
    """Why the finding's suggestion must not be posted, or "" (suggestion_check.py); a fence
    that only wraps it is taken off. A suggestion on removed lines is not checked: it
    cannot be posted as one anyway."""
    if finding.suggestion is None or finding.side != "RIGHT":
        return ""
    try:
        lines = counter.lines(finding.path)
    except ToolError:
        return ""
    last = finding.end_line or finding.line
    finding.suggestion, problem = checked_suggestion(
        finding.path, lines, finding.line, last, finding.suggestion
    )
    return problem


def _nothing_to_review(
    change: Change,
    coverage: tuple[FileCoverage, ...],
    *,
    incremental: bool,
    swapped: bool,
    default_is_head: bool = False,
) -> str:
    if not change.files:
        if default_is_head:
            return (
                "No changes between the base and the head: nothing to review. The default "
                "base (origin/HEAD, else main, else master) is the head itself, as on a fresh "
                "clone: give the base, such as --base HEAD~1 for the last commit."
            )
        if change.head is not None and change.head == change.base and swapped:
            return (
                "No changes between the base and the head: nothing to review. The head is "
                "already part of the base while the base has commits the head lacks: are "
                "--base and --head the wrong way round?"
            )
        return "No changes between the base and the head: nothing to review."
    if incremental and all(c.earlier or not c.reviewed for c in coverage):
        return (
            "Nothing changed since the last complete review: every file was reviewed by an "
            "earlier run; the model was not asked."
        )
    reasons = ", ".join(sorted({c.reason for c in coverage}))
    return f"No file of this change needs review ({reasons}); the model was not asked."
