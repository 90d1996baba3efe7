"""One run on a change request (a pull request, a merge request), as a list: open it, read the
bot's memory, decide what no complete run has reviewed yet, review it, carry forward the
findings still open, post, and answer with outputs and an exit code.

Across runs it fails closed (memory.py): the state advances only over reviewed work, the gate
counts every open finding of the pull request, and the state is read only from a signed line
of our own summary comment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from reviewer.context.tickets.detect import forge_web
from reviewer.context.tickets.model import ForgeSite, TicketRequest
from reviewer.errors import ExitCode, ReviewerError
from reviewer.findings import Finding, ReviewResult, Severity
from reviewer.forge.carry import as_earlier, still_open
from reviewer.forge.conversation import answer, ignored, listen, settle
from reviewer.forge.interface import CISide, Comment, OpenChange, Opener, Permission
from reviewer.forge.memory import next_state, our_summary, state_line
from reviewer.forge.posting import closing_line, post
from reviewer.forge.run_files import TRUE_WORDS, check_run_files, write_run_files
from reviewer.forge.scope import ReviewScope, changed_paths, review_scope
from reviewer.forge.state import PullState
from reviewer.report import render
from reviewer.report.common import tokens_and_cost_text
from reviewer.review.anchor import merge_duplicates, split_reported
from reviewer.review.context import ChangeInfo
from reviewer.review.pipeline import Review, run_review
from reviewer.review.prepare import ReviewRequest
from reviewer.review.progress import Progress
from reviewer.settings.layers import settings_notes
from reviewer.wording import plural


def review_change(
    open_change: Opener,
    ci: CISide,
    env: Mapping[str, str],
    pr: OpenChange | None = None,
    memory: tuple[Comment | None, PullState | None] | None = None,
) -> int:
    """`pr` and `memory` (our summary comment and its state): the change request and what the
    bot remembers of it, when the trigger has read them already (a `/review` comment)."""
    check_run_files(env, ci.temp_dir)
    pr = pr or open_change()
    existing, previous = our_summary(pr.forge, pr.signer, ci.log) if memory is None else memory
    scope, previous, full = decide_scope(pr, ci, previous, env)
    ci.log(scope.note)
    review = _review(request_for(pr, ci, scope, env))
    result = _with_open_findings(review, previous, full)
    # The conversation: dismissals on the threads and in the ignore file (at the base), the
    # fixed findings' threads answered, before anything is counted or posted.
    heard = listen(pr.forge, ci, pr.signer, previous, review.settings.dismiss_by)
    heard.dismissals.update(ignored((*result.findings, *result.suppressed), review.ignore))
    result = settle(result, previous, heard.dismissals, pr.head_sha)
    answered = answer(pr.forge, ci, heard, result.closed, previous)
    state = next_state(
        previous,
        root=pr.root,
        head=pr.head_sha,
        complete=result.complete,
        full=scope.only is None,
        files=result.files,
        findings=result.findings,
        summary=review.result.summary if _asked_the_model(review.result) else "",
        closed=result.closed,
        resolved=tuple(answered.resolved),
        suppressed=result.suppressed,
        full_review=full and review.result.usage.requests > 0,
    )
    # Earlier runs' findings below the threshold that the memory no longer lists: the report
    # counts them with this run's (report/markdown.py says where they are).
    result = replace(result, suppressed_unlisted=state.suppressed_cut)
    run_files = write_run_files(result, env, ci.temp_dir)
    unlisted = {Severity(s): n for s, n in state.dropped.items() if n}
    cannot_resolve = pr.forge.cannot_resolve if answered.cannot_resolve else ""
    notes = _summary_notes(scope, state, unlisted, cannot_resolve)
    line = state_line(state, pr.signer)
    posting = post(pr.forge, ci, pr.signer, result, pr.head_sha, existing, line, notes)
    markdown = render(result, "markdown")
    if posting.degraded:
        markdown = f"> **{posting.degraded}**\n\n{markdown}"
        ci.annotate(result.findings)
    ci.append_summary(markdown)
    open_severities = {f.severity for f in result.findings} | set(unlisted)
    highest = max(open_severities, key=lambda s: s.rank, default=None)
    open_count = len(result.findings) + sum(unlisted.values())
    ci.write_outputs(
        {
            "findings": str(open_count),
            "highest-severity": highest.value if highest else "none",
            "review-url": posting.review_url,
            "summary-url": posting.summary_url,
            "status": result.status,
            **run_files,
        },
    )
    if not result.complete:
        ci.error(f"review incomplete: {result.incomplete_reason}")
        code = ExitCode.INCOMPLETE
    elif any(review.settings.fails(severity) for severity in open_severities):
        code = ExitCode.FINDINGS
    else:
        code = ExitCode.OK
    opened = plural(open_count, "open finding")
    if highest is not None:
        opened += f", highest severity {highest.value}"
    ci.log(tokens_and_cost_text(result))
    edited = existing is not None
    words, where = pr.forge.words, ci.results_where
    ci.log(closing_line(result, posting, edited, opened, int(code), words, where))
    return int(code)


def _summary_notes(
    scope: ReviewScope, state: PullState, unlisted: dict[Severity, int], cannot_resolve: str
) -> tuple[str, ...]:
    """What the summary comment says above the report: this run's scope, threads it could not
    resolve, and what the bot's memory had no room for."""
    notes = () if scope.only is None else (f"This run: {scope.note}.",)
    if cannot_resolve:
        notes += (cannot_resolve,)
    if state.closed_cut:
        notes += (
            f"{plural(state.closed_cut, 'fixed or dismissed finding')} of earlier runs no "
            "longer fit in this comment's memory and are not listed.",
        )
    if unlisted:
        notes += (
            f"{plural(sum(unlisted.values()), 'finding')} of earlier runs no longer fit in this "
            "comment's memory; they still count until a complete full review (full-review: true).",
        )
    return notes


def decide_scope(
    pr: OpenChange, ci: CISide, previous: PullState | None, env: Mapping[str, str]
) -> tuple[ReviewScope, PullState | None, bool]:
    """What this run shows the model (all of the PR, or what no complete run has reviewed
    yet), the memory it builds on, and whether a full review was asked for. Which settings
    apply is said first: the decision is read in their light."""
    full = (env.get("REVIEWER_FULL_REVIEW") or "").strip().lower() in TRUE_WORDS
    paths = changed_paths(pr.root, pr.merge_base, pr.head_sha)
    scope, previous = review_scope(
        pr.root, previous, paths, pr.merge_base, pr.head_sha, full=full, noun=pr.forge.noun
    )
    for note in settings_notes(pr.root, pr.base_sha, None, env.get("REVIEWER_CONFIG") or None):
        ci.log(note)
    return scope, previous, full


def request_for(
    pr: OpenChange, ci: CISide, scope: ReviewScope, env: Mapping[str, str]
) -> ReviewRequest:
    """The review pipeline's request for this run: its scope, the change's title and body."""
    return ReviewRequest(
        repo=pr.root,
        base=pr.base_sha,
        head=pr.head_sha,
        config_name=env.get("REVIEWER_CONFIG") or None,
        only=scope.only,
        since=scope.since,
        info=ChangeInfo(pr.info.title, pr.info.body, ci.repository),
        keep_transcript=False,
        announce_settings=False,
        tickets=TicketRequest(
            branch=pr.info.head_ref,
            sites=(forge_site(pr, ci),),
            author_refusal=lambda: author_refusal(pr),
        ),
    )


def author_refusal(pr: OpenChange) -> str:
    """Why the tickets the change's text names are not read ("" when they are): only a
    change whose author may write to the repository (GitHub write, maintain or admin;
    GitLab Developer or more) has them read with the run's tokens, since a review may quote
    them where anyone reads it. When the forge cannot say, they are not read."""
    author = pr.info.author
    if not author:
        return "its author is unknown (no token reads it), so whether they may write is too"
    try:
        may_write = pr.forge.permission(author) >= Permission.WRITE
    except ReviewerError as exc:
        return f"whether its author ({author}) may write to the repository is unknown ({exc})"
    return "" if may_write else f"its author ({author}) cannot write to the repository"


def forge_site(pr: OpenChange, ci: CISide) -> ForgeSite:
    """The forge the run is on, as the tickets see it: its web root (from the change
    request's URL), the repository, and its issues read through the adapter."""
    return ForgeSite(
        kind=pr.forge.issue_kind,
        web=forge_web(pr.info.url, ci.repository),
        repository=ci.repository,
        read=pr.forge.issue,
    )


def _review(request: ReviewRequest) -> Review:
    progress = Progress()
    try:
        return run_review(request, events=progress)
    finally:
        progress.done()  # its clock stops with the review, before anything is posted


def _with_open_findings(review: Review, previous: PullState | None, full: bool) -> ReviewResult:
    """This run's findings and the earlier ones whose code still stands: the gate and the
    summary answer for the whole pull request, not only for the newest commits."""
    result = review.result
    if previous is None:
        return result
    if previous.summary and previous.summary_at and not _asked_the_model(result):
        result = replace(result, summary=_earlier_summary(result.summary, previous))
    known = {f.fingerprint for f in (*previous.findings, *previous.suppressed)}
    filed = as_earlier(
        (*result.findings, *result.suppressed),
        (*previous.findings, *previous.suppressed, *previous.closed),
    )
    this_run = [replace(f, earlier=f.fingerprint in known) for f in filed]
    seen = {f.fingerprint for f in this_run}
    carried = [
        f
        for f in still_open((*previous.findings, *previous.suppressed), review.change, review.lines)
        if f.fingerprint not in seen
    ]
    merged: list[Finding] = merge_duplicates([*this_run, *carried])
    reported, suppressed = split_reported(
        merged, review.settings.min_severity, review.settings.max_findings
    )
    return replace(result, findings=tuple(reported), suppressed=tuple(suppressed), incremental=True)


def _asked_the_model(result: ReviewResult) -> bool:
    """Whether this run's summary is the model's: a complete run that sent it a request."""
    return result.complete and result.usage.requests > 0


def _earlier_summary(note: str, previous: PullState) -> str:
    """A run that asked the model nothing still shows what the last review that did said."""
    at = (previous.summary_at or "")[:12]
    return f"{note}\n\n**Summary of the review at commit {at}:**\n\n{previous.summary}"
