"""The review pipeline, start to finish: settings, change, context, agent, anchor, result.

Reporting and the exit code are the caller's (the CLI's): this returns the neutral result.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewer import __version__, parts
from reviewer.agent import Agent, AgentEvents, AgentOutcome
from reviewer.anchor import merge_duplicates, place, split_reported
from reviewer.budget import ReviewBudget, check_cost_budget, verify_price
from reviewer.config import (
    Settings,
    require_model_settings,
    resolve_settings,
    setting_sources,
    settings_layers,
    settings_notes,
)
from reviewer.context import BatchContext, ChangeInfo, ReviewPlan, build_plan
from reviewer.diff import Change, load_change
from reviewer.errors import ReviewerError, ToolError
from reviewer.findings import (
    FileCoverage,
    Finding,
    ModelPrice,
    ReviewResult,
    sort_findings,
)
from reviewer.gitcmd import run_git
from reviewer.grounding import ground, side_lines
from reviewer.ignore_file import IgnoreFile, load_ignore_file
from reviewer.llm import DEFAULT_BASE_URL, ChatModel, Connection, ServerProfile, check_base_url
from reviewer.merging import merge_overlapping
from reviewer.noise import apply_noise_table
from reviewer.redact import Redactor
from reviewer.selection import select_files
from reviewer.submission import (
    SUBMIT_REVIEW,
    FindingIn,
    LineCounter,
    ReviewSubmission,
    SubmitReview,
    check_finding,
)
from reviewer.suggestion_check import suggestion_problem
from reviewer.tools import TOOLS
from reviewer.verdict import SUBMIT_VERDICT
from reviewer.verify import Verifier, verify_environment, verify_findings
from reviewer.wording import plural
from reviewer.workspace import (
    RevisionWorkspace,
    Workspace,
    WorktreeWorkspace,
    repository_root,
    resolve_commit,
)
from reviewer.workspace.paths import quote_path

_DEFAULT_BASES = ("origin/HEAD", "main", "master", "origin/main", "origin/master")
_MAX_DESCRIPTION_CHARS = 6000
_MAX_COMMITS = 200


@dataclass(frozen=True)
class ReviewRequest:
    repo: Path = Path(".")
    base: str | None = None
    head: str | None = None
    uncommitted: bool = False
    # Settings given on the command line (None = not given).
    flags: dict[str, Any] = field(default_factory=dict)
    config_path: Path | None = None
    # A settings file read at the base revision (the Action's `config` input).
    config_name: str | None = None
    # An incremental review: only the files in `only` are shown to the model, with their
    # diff since the commit `since` when given (else their whole diff); the rest of the
    # change was reviewed by an earlier run. Anchoring and coverage use the whole change.
    only: frozenset[str] | None = None
    since: str | None = None
    # The change as its author describes it (a PR's title and body); else the commits'.
    info: ChangeInfo | None = None
    # Keep every message for a transcript. Without one, a loop's messages are let go when
    # it ends, so a change of hundreds of parts never holds all its prompts at once.
    keep_transcript: bool = True
    # Say which settings apply (a "settings: ..." note). False when the caller has said it
    # already, before a decision of its own that follows from them (the Action's scope).
    announce_settings: bool = True


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


def default_base(root: Path) -> str:
    for candidate in _DEFAULT_BASES:
        proc = run_git(
            root, ["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], check=False
        )
        if proc.returncode == 0:
            return candidate
    raise ReviewerError(
        "cannot find the base branch (tried origin/HEAD, main, master); pass --base REV"
    )


@dataclass(frozen=True)
class Prepared:
    """Everything a review decides before its first model request: the settings, the change,
    what the model is shown and in which parts. A dry run stops here; a real run goes on
    from exactly this, so the parts a dry run prints are the parts a real run uses."""

    started: float
    root: Path
    base: str
    head: str | None
    settings: Settings
    change: Change
    shown: Change
    workspace: Workspace
    plan: ReviewPlan
    coverage: tuple[FileCoverage, ...]
    redactor: Redactor
    price: ModelPrice | None
    # Where each setting's value comes from ("default", "the command line", a file).
    sources: dict[str, str]

    @property
    def head_label(self) -> str:
        return self.head or "working tree"


def prepare_review(
    request: ReviewRequest, events: AgentEvents | None = None, *, dry_run: bool = False
) -> Prepared:
    """The review up to its first model request. A dry run needs no API key (it asks no
    model); every other setting is checked as a real run checks it."""
    started = time.monotonic()
    root = repository_root(request.repo)
    if request.uncommitted and request.head:
        raise ReviewerError("--uncommitted reviews the working tree; it cannot take --head")
    head = None if request.uncommitted else resolve_commit(root, request.head or "HEAD")
    base = resolve_commit(
        root,
        request.base or ("HEAD" if request.uncommitted else default_base(root)),
        uncommitted=request.uncommitted,
    )
    # The rules come from the base side: the change cannot rewrite what it is judged by.
    layers = settings_layers(
        flags=request.flags,
        root=root,
        config_revision=base,
        config_path=request.config_path,
        config_name=request.config_name,
    )
    settings = resolve_settings(layers)
    if events is not None and request.announce_settings:
        for note in settings_notes(root, base, request.config_path, request.config_name):
            events.note(note)
    if not dry_run:
        require_model_settings(settings)
    check_base_url(settings.base_url or DEFAULT_BASE_URL)
    # A cost budget without a price cannot be held: said before anything is sent.
    price = check_cost_budget(settings)
    redactor = Redactor()
    change = load_change(root, base, head)
    workspace: Workspace = (
        WorktreeWorkspace(root) if head is None else RevisionWorkspace(root, head)
    )
    workspace.base = RevisionWorkspace(root, change.base)
    shown = _shown_change(root, change, head, request)
    info = request.info or _change_info(root, change.base, head, redactor)
    plan = build_plan(
        change=shown,
        info=ChangeInfo(redactor(info.title), redactor(info.description), info.repository),
        settings=settings,
        revision_label=workspace.label,
        root=root,
        config_revision=base,
        redact=redactor,
    )
    coverage = _whole_coverage(change, plan.coverage, settings)
    if events is not None and plan.rule_files:
        events.note(_rule_files_note(plan))
    return Prepared(
        started, root, base, head, settings, change, shown, workspace, plan, coverage, redactor,
        price, setting_sources(layers),
    )  # fmt: skip


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
        placed, discarded = apply_noise_table(_place_all(raw, change, counter, redactor), change)
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
                price=prepared.price,
                closed=tuple(ignored),
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
        part_events = events.for_part(number, len(plan.batches), batch.label) if events else None
        agent = Agent(
            model=chat_model(settings, events, profile, connection, SUBMIT_REVIEW),
            workspace=workspace,
            settings=settings,
            final=ReviewSubmission(
                lambda submission: _check_submission(submission, change, workspace, counter)
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
    )
    return result(list(zip(plan.batches, outcomes, strict=True)), verifier=verifier)


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


def _rule_files_note(plan: ReviewPlan) -> str:
    """One line naming the rule files the model is given, read at the base revision."""
    shown = [
        f"{quote_path(rule.path)} ({plural(len(rule.applied_to), 'file')}"
        f"{', cut' if rule.cut else ''})"
        for rule in plan.rule_files[:20]
    ]
    more = len(plan.rule_files) - len(shown)
    return (
        "rule files (from the base revision): "
        + ", ".join(shown)
        + (f" and {more} more" if more > 0 else "")
    )


def _shown_change(root: Path, change: Change, head: str | None, request: ReviewRequest) -> Change:
    """What the model is shown: the whole change, or (incremental) the files still to review,
    each with its diff since the last review. Files outside the change (a merge from the
    base branch brings some) are never shown."""
    if request.only is None and request.since is None:
        return change
    wanted = {f.path for f in change.files}
    if request.only is not None:
        wanted &= request.only
    source = change if request.since is None else load_change(root, request.since, head)
    return Change(source.base, source.head, tuple(f for f in source.files if f.path in wanted))


def _whole_coverage(
    change: Change, shown: tuple[FileCoverage, ...], settings: Settings
) -> tuple[FileCoverage, ...]:
    """Coverage of every file of the change. A file an incremental review did not show was
    reviewed by an earlier run (it is unchanged since); one the settings skip stays skipped."""
    seen = {c.path for c in shown}
    rest = tuple(
        replace(c, earlier=True) if c.reviewed else c
        for c in select_files(change, settings)
        if c.path not in seen
    )
    return shown + rest


def _check_submission(
    submission: SubmitReview, change: Change, workspace: Workspace, counter: LineCounter
) -> dict[int, str]:
    problems: dict[int, str] = {}
    for number, finding in enumerate(submission.findings, 1):
        try:
            finding.path = workspace.normalize(finding.path, allow_root=False)
        except ToolError as exc:
            problems[number] = str(exc)
            continue
        problem = check_finding(
            finding, counter, lambda path, line: change.locate(path, line, "LEFT") is not None
        ) or ground(finding, change, lambda path, side: side_lines(path, side, change, counter))
        if problem:
            problems[number] = problem
    return problems


def _place_all(
    raw: list[FindingIn], change: Change, counter: LineCounter, redactor: Redactor
) -> list[Finding]:
    placed = []
    for finding in raw:
        finding.title = redactor(finding.title)
        finding.body = redactor(finding.body)
        if finding.suggestion is not None:
            finding.suggestion = redactor(finding.suggestion)
        dropped = _suggestion_problem(finding, counter)
        if dropped:
            finding.suggestion = None
        placed.append(replace(place(finding, change, counter), suggestion_dropped=dropped))
    return merge_overlapping(merge_duplicates(placed))


def _suggestion_problem(finding: FindingIn, counter: LineCounter) -> str:
    """Why the finding's suggestion must not be posted, or "" (suggestion_check.py). A
    suggestion on removed lines is not checked: it cannot be posted as one anyway."""
    if finding.suggestion is None or finding.side != "RIGHT":
        return ""
    try:
        lines = counter.lines(finding.path)
    except ToolError:
        return ""
    last = finding.end_line or finding.line
    return suggestion_problem(finding.path, lines, finding.line, last, finding.suggestion)


def _change_info(root: Path, base: str, head: str | None, redactor: Redactor) -> ChangeInfo:
    """Title and description for a local review: the commits' own messages, oldest first.

    git re-encodes each message from its declared encoding to UTF-8 (its default output).
    """
    # The folder's name, as the tools print a name: it may hold bytes that are not UTF-8.
    folder = quote_path(root.name)
    if head is None:
        return ChangeInfo("Uncommitted changes", "", folder)
    args = ["log", "-z", "--format=%B", f"--max-count={_MAX_COMMITS}", "--end-of-options"]
    out = run_git(root, [*args, f"{base}..{head}", "--"]).stdout.decode("utf-8", "replace")
    records = out.split("\0")  # each commit's message ends with a NUL
    bodies = [body.strip() for body in reversed(records[:-1] if out else [])]
    messages = [(body.split("\n", 1)[0], body) for body in bodies]
    if not messages:
        return ChangeInfo("(no commits)", "", folder)
    newest = messages[-1][0]
    title = newest if len(messages) == 1 else f"{plural(len(messages), 'commit')}: {newest}"
    body = "\n\n".join(message for _summary, message in messages)
    return ChangeInfo(redactor(title), redactor(body[:_MAX_DESCRIPTION_CHARS]), folder)


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
