"""The review up to its first model request: the request, the base and head, the settings,
the change and what of it the model is shown, in which parts (`Prepared`). A dry run and a
question stop here; `reviewer.review.pipeline` goes on from exactly this, so the parts a dry
run prints are the parts a real run uses.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewer.change import Change, load_change
from reviewer.change.selection import select_files
from reviewer.context.tickets.detect import cut_at_space
from reviewer.context.tickets.model import Ticket, TicketContext, TicketRequest
from reviewer.context.tickets.read import TicketSettings, gather_tickets
from reviewer.errors import ReviewerError
from reviewer.findings import FileCoverage, ModelPrice
from reviewer.llm import DEFAULT_BASE_URL, check_base_url
from reviewer.loop.agent import AgentEvents
from reviewer.loop.budget import check_cost_budget
from reviewer.review.context import ChangeInfo, ReviewPlan, build_plan
from reviewer.safety.redact import Redactor
from reviewer.settings.config import Settings, require_model_settings
from reviewer.settings.layers import (
    resolve_settings,
    setting_sources,
    settings_layers,
    settings_notes,
)
from reviewer.settings.learnings import Learnings, load_learnings
from reviewer.wording import plural
from reviewer.workspace import (
    RevisionWorkspace,
    Workspace,
    WorktreeWorkspace,
    repository_root,
    resolve_commit,
)
from reviewer.workspace.gitcmd import run_git
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
    # The tickets the change names (what it is for): besides its title, description and
    # commit messages, its branch, the keys named by hand, the forges it may read. None:
    # no ticket is looked for (an answer to a question).
    tickets: TicketRequest | None = field(default_factory=TicketRequest)
    # The team's learnings as a text, in place of .reviewer/learnings.md at the base (an
    # evaluation case's); None: the file at the base.
    learnings: str | None = None


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
    # The tickets the change names, read (shown to the model) or each with why not, and how
    # many more were named.
    ticket_context: TicketContext = field(default_factory=TicketContext)

    @property
    def tickets(self) -> tuple[Ticket, ...]:
        return self.ticket_context.tickets

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
    tickets = _tickets(request, settings, root, change.base, head, info, events)
    # What the team has taught the reviewer, at the base like the settings.
    learnings = load_learnings(root, base, settings.learnings, request.learnings)
    plan = build_plan(
        change=shown,
        info=ChangeInfo(redactor(info.title), redactor(info.description), info.repository),
        settings=settings,
        revision_label=workspace.label,
        root=root,
        config_revision=base,
        redact=redactor,
        tickets=tickets.tickets,
        tickets_not_read=tickets.not_read,
        learnings=learnings,
    )
    coverage = _whole_coverage(change, plan.coverage, settings)
    if events is not None and plan.rule_files:
        events.note(_rule_files_note(plan))
    if events is not None and learnings.entries:
        events.note(_learnings_note(learnings, plan))
    return Prepared(
        started, root, base, head, settings, change, shown, workspace, plan, coverage, redactor,
        price, setting_sources(layers), tickets,
    )  # fmt: skip


def _tickets(
    request: ReviewRequest,
    settings: Settings,
    root: Path,
    base: str,
    head: str | None,
    info: ChangeInfo,
    events: AgentEvents | None,
) -> TicketContext:
    """The tickets the change names, in its title, description, branch and commit messages
    (reviewer/context/tickets/), read as the settings say. Nothing here stops the review: a
    ticket that cannot be read is a line of the log."""
    asked = request.tickets
    if asked is None or settings.tickets == "off":
        return TicketContext()
    if not asked.branch and request.info is None:
        asked = replace(asked, branch=_branch(root, request.head))
    messages = [] if head is None else _commit_messages(root, base, head)
    return gather_tickets(
        asked,
        [info.title, info.description, *messages] if asked.detect else [],
        ticket_settings(settings),
        os.environ,
        events.note if events is not None else lambda line: None,
    )


def ticket_settings(settings: Settings) -> TicketSettings:
    """The settings that decide which tickets a review reads and how many."""
    return TicketSettings(
        settings.tickets, settings.max_tickets, settings.jira_url, settings.jira_projects
    )


def _branch(root: Path, asked: str | None) -> str:
    """The head branch's name of a local review: --head when it names a branch, else the
    branch checked out when the head is HEAD; "" for a commit."""
    if asked is not None and asked != "HEAD":
        known = run_git(root, ["rev-parse", "--verify", "--quiet", f"refs/heads/{asked}"],
                        check=False)  # fmt: skip
        return asked if known.returncode == 0 else ""
    proc = run_git(root, ["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""


def _commit_messages(root: Path, base: str, head: str) -> list[str]:
    """The messages of the reviewed commits, oldest first (at most _MAX_COMMITS)."""
    args = ["log", "-z", "--format=%B", f"--max-count={_MAX_COMMITS}", "--end-of-options"]
    out = run_git(root, [*args, f"{base}..{head}", "--"]).stdout.decode("utf-8", "replace")
    return [body.strip() for body in reversed(out.split("\0")[:-1] if out else [])]


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


def _learnings_note(learnings: Learnings, plan: ReviewPlan) -> str:
    """One line: how many learnings were read, from where, and how many reach the review."""
    left = f"; {'; '.join(learnings.notes)}" if learnings.notes else ""
    return (
        f"learnings (from {learnings.source}): {plural(len(learnings.entries), 'learning')}, "
        f"{len(plan.learnings_applied)} for the reviewed files{left}"
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
    # Cut at a space: tickets are looked for in it (a key cut in half is another ticket).
    return ChangeInfo(redactor(title), redactor(cut_at_space(body, _MAX_DESCRIPTION_CHARS)), folder)
