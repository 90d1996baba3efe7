"""The verification pass: each finding of a review is checked by its own short agent loop,
with the review's read-only tools, sandbox and budgets, told to try to refute it and to
confirm only what the code shows. The loop ends with `submit_verdict` (verdict.py).

What each verdict does:
- confirmed: posted, the verdict said on it;
- uncertain: posted too, marked uncertain with the verifier's reason (a reader decides; a
  finding is never dropped on a doubt alone);
- refuted: never posted, never counted; kept in the report's `discarded` list with why (and
  the team's learning it relied on, quoted, when the verifier named one it was shown);
- no verdict (a budget spent, the verifier's endpoint failed): kept and marked
  `unverified`, with the reason, so every report can say so (fail closed).

Before any of that, a finding the model itself rates under `min_confidence` is discarded
(without a check: it costs nothing). A finding without a confidence is not discarded by it.
Findings carried from an earlier run (github/carry.py) were checked by that run; the pass
only sees this run's findings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from reviewer.change import Change
from reviewer.change.diff_text import render_file
from reviewer.checks.verdict import SubmitVerdict, VerdictSubmission
from reviewer.context.tickets.model import Ticket
from reviewer.context.tickets.read import ticket_values
from reviewer.findings import INTENT, Finding, Severity, Usage, Verification, sort_findings
from reviewer.llm import ChatModel
from reviewer.loop.agent import Agent, AgentEvents
from reviewer.loop.budget import LoopBudget, ReviewBudget
from reviewer.safety.redact import Redactor
from reviewer.safety.sinks import map_strings
from reviewer.settings.config import Settings
from reviewer.settings.learning_prompts import learnings_for_finding, learnings_value
from reviewer.settings.learnings import LEARNINGS_FILE, NO_LEARNINGS, Learnings
from reviewer.settings.pricing import price_for
from reviewer.settings.prompts import VERIFY_PROMPT_NAMES, fence_for, prompt_environment
from reviewer.wording import plural
from reviewer.workspace import Workspace
from reviewer.workspace.paths import quote_path

# The finding's file diff shown to the verifier, at most this many characters (the tools
# read the rest).
MAX_DIFF_CHARS = 12_000


@dataclass(frozen=True)
class Verifier:
    """What a finding's check needs: the review's workspace, budgets and model connection."""

    settings: Settings
    workspace: Workspace
    change: Change
    redactor: Redactor
    budget: ReviewBudget
    # A ChatModel for the verifier's settings (the review's endpoint, verify_model).
    model: Callable[[Settings], ChatModel]
    # The prompt templates: the repository's overrides at the base, else the shipped ones.
    environment: SandboxedEnvironment
    repository: str = ""
    # Keep each check's messages for the review's transcript (--transcript).
    record: bool = False
    # The tickets the change names: an `intent` finding's check is given its ticket.
    tickets: tuple[Ticket, ...] = ()
    # The team's learnings (read at the base): each check is shown those for its file.
    learnings: Learnings = NO_LEARNINGS


@dataclass
class Checked:
    """The findings after the pass: kept (each with its verification, when checked) and
    discarded (with why), and what the pass spent."""

    kept: list[Finding] = field(default_factory=list)
    discarded: list[Finding] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    tool_calls: int = 0
    # The transcript entries of the checks, in the order they were made (most severe
    # first), each marked as the verification of finding N of that order.
    transcript: list[dict[str, Any]] = field(default_factory=list)
    # How many checks were shown each learning (by id).
    learnings_shown: Counter[str] = field(default_factory=Counter)


def verifier_settings(settings: Settings) -> Settings:
    """The review's settings as a verification loop uses them: its model, its tool calls."""
    return settings.model_copy(
        update={
            "model": settings.verify_model or settings.model,
            "max_tool_calls": settings.verify_tool_calls,
        }
    )


def verify_findings(
    findings: list[Finding],
    settings: Settings,
    verifier: Verifier | None,
    events: AgentEvents | None = None,
) -> Checked:
    """Discard what is under min_confidence, check the rest the settings say (verify), and
    discard what is refuted. `verifier` None checks nothing (no model loop ran)."""
    checked = Checked()
    candidates: list[Finding] = []
    for finding in findings:
        because = _under_confidence(finding, settings)
        if because:
            checked.discarded.append(replace(finding, discard_reason=because))
        else:
            candidates.append(finding)
    if verifier is None or settings.verify == "off":
        checked.kept = candidates
        return checked
    # Most severe first: when a budget runs out part way, what matters most was checked.
    to_check = sort_findings(
        [
            f
            for f in candidates
            if not f.earlier
            # A noise class whose action is verify (force_verify) is checked below the floor.
            and (settings.verifies(f.severity) or f.force_verify)
            and f.severity.at_least(settings.min_severity)
        ]
    )
    if events is not None and to_check:
        events.note(f"verifying {plural(len(to_check), 'finding')} (verify = {settings.verify})")
    results: dict[int, _Outcome] = {}
    if to_check:
        workers = min(settings.concurrency, len(to_check))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            done = list(pool.map(lambda f: _check(f, verifier), to_check))
        results = {id(f): outcome for f, outcome in zip(to_check, done, strict=True)}
        for number, (finding, outcome) in enumerate(zip(to_check, done, strict=True), 1):
            checked.transcript += _transcript(number, finding, outcome)
    for finding in candidates:
        if id(finding) not in results:
            checked.kept.append(finding)
            continue
        outcome = results[id(finding)]
        checked.usage = checked.usage + outcome.usage
        checked.turns += outcome.turns
        checked.tool_calls += outcome.verification.tool_calls
        checked.learnings_shown.update(outcome.learnings_shown)
        judged = _judged(finding, outcome, verifier.learnings)
        (checked.discarded if judged.discard_reason else checked.kept).append(judged)
    if events is not None and to_check:
        events.note(verification_note(checked))
    return checked


def verification_note(checked: Checked) -> str:
    verdicts = [
        f.verification.verdict for f in (*checked.kept, *checked.discarded) if f.verification
    ]
    counts = ", ".join(
        f"{verdicts.count(name)} {name}"
        for name in ("confirmed", "uncertain", "refuted", "unverified")
        if name in verdicts
    )
    return f"verification: {counts}"


def _under_confidence(finding: Finding, settings: Settings) -> str:
    if finding.confidence is None or finding.confidence >= settings.min_confidence:
        return ""
    return (
        f"its confidence {finding.confidence:g} is under min_confidence "
        f"{settings.min_confidence:g}"
    )


@dataclass(frozen=True)
class _Outcome:
    """What one check came to, and what it spent."""

    verification: Verification
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    # The severity the verifier gave, when the evidence says it differs (None: unchanged).
    severity: Severity | None = None
    # The loop's messages (when the verifier records them) and how it ended.
    transcript: tuple[dict[str, Any], ...] = ()
    stop_reason: str = ""
    # The ids of the learnings the check was shown.
    learnings_shown: tuple[str, ...] = ()


def _transcript(number: int, finding: Finding, outcome: _Outcome) -> list[dict[str, Any]]:
    """A check's part of the review's transcript: which finding, its messages, its end."""
    check = outcome.verification
    return [
        {
            "type": "verification",
            "finding": number,
            "path": finding.path,
            "line": finding.line,
            "side": finding.side,
            "title": finding.title,
        },
        *outcome.transcript,
        {
            "type": "end",
            "verification": number,
            "verdict": check.verdict,
            "reason": outcome.stop_reason if check.verdict == "unverified" else check.reason,
        },
    ]


def _judged(finding: Finding, outcome: _Outcome, learnings: Learnings) -> Finding:
    """The finding as its verdict leaves it."""
    verification = outcome.verification
    if verification.verdict == "refuted":
        # Our own copy of the learning, quoted: what the team wrote, not what the model says
        # it wrote (the id was checked against those the check was shown).
        learning = learnings.get(verification.learning) if verification.learning else None
        relied = (
            f" (relying on the team's learning {learning.id} in {LEARNINGS_FILE}: "
            f"“{learning.text}”)"
            if learning
            else ""
        )
        return replace(
            finding,
            verification=verification,
            discard_reason=f"refuted by verification: {verification.reason}{relied}",
        )
    return replace(
        finding, verification=verification, severity=outcome.severity or finding.severity
    )


def _check(finding: Finding, verifier: Verifier) -> _Outcome:
    """One verification loop; an `unverified` Verification when it ends without a verdict."""
    settings = verifier_settings(verifier.settings)
    price = price_for(settings.model, settings.prices)
    shown = learnings_for_finding(verifier.learnings, finding.path)
    ids = tuple(entry.id for entry in shown)
    agent: Agent[SubmitVerdict] = Agent(
        model=verifier.model(settings),
        workspace=verifier.workspace,
        settings=settings,
        final=VerdictSubmission(learnings=frozenset(ids)),
        redactor=verifier.redactor,
        budget=LoopBudget(verifier.budget, settings.verify_tool_calls, price),
        record=verifier.record,
    )
    system, task = _messages(finding, verifier, settings, learnings_value(shown, verifying=True))
    outcome = agent.run(verifier.redactor(system), task)
    if outcome.submission is None:
        reason = outcome.stop_reason or "the verifier gave no verdict"
        return _Outcome(
            Verification("unverified", reason, outcome.tool_calls),
            outcome.usage,
            outcome.turns,
            transcript=tuple(outcome.transcript),
            stop_reason=reason,
            learnings_shown=ids,
        )
    verdict = outcome.submission
    changed = verdict.severity is not None and verdict.severity != finding.severity
    verification = Verification(
        verdict.verdict,
        " ".join(verifier.redactor(verdict.reason).split()),
        outcome.tool_calls,
        finding.severity if changed else None,
        learning=verdict.learning or "",
    )
    severity = verdict.severity if changed else None
    return _Outcome(
        verification,
        outcome.usage,
        outcome.turns,
        severity,
        tuple(outcome.transcript),
        learnings_shown=ids,
    )


def _messages(
    finding: Finding, verifier: Verifier, settings: Settings, learnings: dict[str, Any]
) -> tuple[str, str]:
    """The system and task messages (prompts/verify_*.md.j2, overridable like the review's);
    `learnings` the template value of the learnings the check is shown."""
    entry = verifier.change.file(finding.path, finding.side)
    diff = render_file(entry) if entry is not None else "(The file is not part of the change.)"
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n[Cut for room; read the file with the tools.]"
    lines = str(finding.line) if not finding.end_line else f"{finding.line}-{finding.end_line}"
    values: dict[str, Any] = {
        "repository": verifier.repository,
        "revision": verifier.workspace.label,
        "language": settings.language,
        "path": quote_path(finding.path),
        "lines": lines,
        "side": finding.side,
        "severity": finding.severity.value,
        "category": finding.category or "",
        "title": finding.title,
        "body": finding.body,
        "code": finding.code,
        "diff": verifier.redactor(diff),
        "tool_calls": settings.verify_tool_calls,
        "ticket": finding.ticket,
        "ticket_quote": finding.ticket_quote,
        "tickets": ticket_values(_tickets_of(finding, verifier.tickets)),
        "verifying": True,
        "learnings": learnings,
    }
    values = map_strings(values, verifier.redactor)
    values["fence"] = fence_for(
        values["title"] + values["body"] + values["code"] + values["diff"] + values["ticket_quote"]
    )
    environment = verifier.environment
    system = environment.get_template(VERIFY_PROMPT_NAMES[0]).render(values)
    task = environment.get_template(VERIFY_PROMPT_NAMES[1]).render(values)
    return system, task


def _tickets_of(finding: Finding, tickets: tuple[Ticket, ...]) -> list[Ticket]:
    """What a finding's check is shown of the tickets: for an `intent` finding, the ticket
    its quote is in (an intent finding whose quote checked out in none is kept without the
    claim, intent.py: it is shown none), or every ticket read when that one is not known."""
    if finding.category != INTENT:
        return []
    read = [ticket for ticket in tickets if ticket.read]
    return [t for t in read if t.key == finding.ticket] or read


def verify_environment(root: Path, base: str) -> SandboxedEnvironment:
    return prompt_environment(root, base, VERIFY_PROMPT_NAMES)
