"""`reviewer github`: the Action's entry. Review what of the pull request no complete run has
reviewed yet, carry forward the findings that are still open, then post one review and one
summary comment, or fall back to the job summary and annotations when the token cannot write.

Across runs it fails closed (pr_state.py): the state advances only over reviewed work, the
gate counts every open finding of the pull request, and the state is read only from a
signed line of our own summary comment. A run that cannot review says so in an annotation,
the job summary and the `status` output, and exits 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reviewer.anchor import merge_duplicates, split_reported
from reviewer.ci import (
    ActionsContext,
    add_mask,
    append_summary,
    emit_command,
    load_context,
    log,
    write_outputs,
)
from reviewer.config import settings_notes
from reviewer.context import ChangeInfo
from reviewer.errors import ExitCode, ReviewerError
from reviewer.findings import Finding, ReviewResult, Severity
from reviewer.gitcmd import run_git
from reviewer.github import ACTIONS_BOT, GitHubClient, InvalidAnchors, ReadOnlyToken
from reviewer.pr_fetch import ensure_commits
from reviewer.pr_state import (
    PullState,
    changed_paths,
    next_state,
    read_state,
    review_scope,
    state_line,
    still_open,
)
from reviewer.progress import Progress
from reviewer.redact import Redactor
from reviewer.report import render, write_report
from reviewer.report.github import annotations, review_body, review_comment, summary_comment
from reviewer.report.mdtext import neutralize
from reviewer.review import Review, ReviewRequest, run_review
from reviewer.signing import Signer
from reviewer.wording import plural
from reviewer.workspace import repository_root

NOT_REVIEWED = "not-reviewed"


@dataclass
class Posting:
    review_url: str = ""
    summary_url: str = ""
    degraded: str = ""
    inline_comments: int = 0  # in the review posted
    in_review_body: int = 0  # findings GitHub refused as comments, written into its body


def run_github(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    if env.get("GITHUB_ACTIONS") == "true":
        # Only the runner reads these; anywhere else they would print the secrets.
        for name in ("GITHUB_TOKEN", "OPENAI_API_KEY", "REVIEWER_STATE_KEY"):
            add_mask(env.get(name))
    try:
        context = load_context(env)
        _require_model_key(context, env)
        return _review_pull(context, env)
    except ReviewerError as exc:
        _say_not_reviewed(env, str(exc))
        raise


def _require_model_key(context: ActionsContext, env: Mapping[str, str]) -> None:
    """Before anything is read or posted. A fork's `pull_request` run gets no secrets
    (GitHub's rule), which is worth its own explanation."""
    if (env.get("OPENAI_API_KEY") or "").strip():
        return
    if context.pull_request.is_fork:
        raise ReviewerError(
            "this pull request comes from a fork, and GitHub gives workflows that a fork "
            "triggers no secrets, so OPENAI_API_KEY is empty and nothing was reviewed; a "
            "maintainer can review it with workflow_dispatch, or the workflow can use "
            "pull_request_target (see docs/examples/review.yml in reviewer)"
        )
    raise ReviewerError(
        "missing the API key (OPENAI_API_KEY): pass `api-key: ${{ secrets.OPENAI_API_KEY }}` "
        "to the action (any value works for a local server)"
    )


def _say_not_reviewed(env: Mapping[str, str], message: str) -> None:
    """An error annotation, a job summary and the `status` output: a run that could not
    review is visible where people look, not only in the log."""
    if env.get("GITHUB_ACTIONS") != "true":
        return
    emit_command("error", f"reviewer: {message}", title="Not reviewed")
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        append_summary(
            Path(summary),
            "## ⚠️ AI review: not reviewed\n\n"
            f"{neutralize(message)}\n\n"
            "This run did not review the pull request, so its check fails: an unreviewed "
            "change never looks reviewed.\n",
        )
    output = env.get("GITHUB_OUTPUT")
    if output:
        write_outputs(Path(output), {"status": NOT_REVIEWED})


def _review_pull(context: ActionsContext, env: Mapping[str, str]) -> int:
    if not context.token:
        raise ReviewerError(
            "GITHUB_TOKEN is not set: pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the "
            "action (or set GITHUB_TOKEN for the step)"
        )
    secret = env.get("REVIEWER_STATE_KEY") or env.get("OPENAI_API_KEY") or ""
    pull_id = f"{context.repository.lower()}#{context.pull_request.number}"
    signer = Signer.from_secret(secret, pull_id)
    client = GitHubClient(
        context.api_url,
        context.token,
        context.repository,
        log=log,
        bot_login=env.get("REVIEWER_BOT_LOGIN") or ACTIONS_BOT,
        signer=signer,
    )
    pull = client.pull(context.pull_request.number)
    info = client.pull_info(pull)
    base_sha = context.pull_request.base_sha or info.base_sha
    head_sha = context.pull_request.head_sha or info.head_sha
    root = repository_root(context.workspace)
    ensure_commits(root, base_sha, head_sha, info.number, log)
    existing, previous = _our_summary(client, pull)
    merge_base = run_git(root, ["merge-base", base_sha, head_sha]).stdout.decode().strip()
    full = (env.get("REVIEWER_FULL_REVIEW") or "").strip().lower() in ("1", "true", "yes")
    scope, previous = review_scope(
        root,
        previous,
        changed_paths(root, merge_base, head_sha),
        merge_base,
        head_sha,
        full=full,
    )
    config_name = env.get("REVIEWER_CONFIG") or None
    # Which settings apply is said first: the scope decision below is read in their light.
    for note in settings_notes(root, base_sha, None, config_name):
        log(note)
    log(scope.note)
    progress = Progress()
    try:
        review = run_review(
            ReviewRequest(
                repo=root,
                base=base_sha,
                head=head_sha,
                config_name=config_name,
                only=scope.only,
                since=scope.since,
                info=ChangeInfo(info.title, info.body, context.repository),
                keep_transcript=False,
                announce_settings=False,
            ),
            events=progress,
        )
    finally:
        progress.done()  # its clock stops with the review, before anything is posted
    result = _with_open_findings(review, previous, full)
    report_path = Path(
        env.get("REVIEWER_REPORT") or Path(env.get("RUNNER_TEMP") or ".") / "reviewer-report.json"
    )
    write_report(result, "json", report_path)
    state = next_state(
        previous,
        root=root,
        head=head_sha,
        complete=result.complete,
        full=scope.only is None,
        files=result.files,
        findings=result.findings,
        summary=review.result.summary if _asked_the_model(review.result) else "",
    )
    unlisted = {Severity(s): n for s, n in state.dropped.items() if n}
    notes = () if scope.only is None else (f"This run: {scope.note}.",)
    if unlisted:
        notes += (
            f"{plural(sum(unlisted.values()), 'finding')} of earlier runs no longer fit in this "
            "comment's memory; they still count until a complete full review (full-review: true).",
        )
    posting = _post(
        client, pull, context, result, head_sha, existing, state_line(state, client.signer), notes
    )
    markdown = render(result, "markdown")
    if posting.degraded:
        markdown = f"> **{posting.degraded}**\n\n{markdown}"
        for line in annotations(result.findings, redact=Redactor()):
            print(line, flush=True)
    append_summary(context.summary_file, markdown)
    open_severities = {f.severity for f in result.findings} | set(unlisted)
    highest = max(open_severities, key=lambda s: s.rank, default=None)
    open_count = len(result.findings) + sum(unlisted.values())
    write_outputs(
        context.output_file,
        {
            "findings": str(open_count),
            "highest-severity": highest.value if highest else "none",
            "report": str(report_path),
            "review-url": posting.review_url,
            "summary-url": posting.summary_url,
            "status": result.status,
        },
    )
    if not result.complete:
        emit_command("error", f"review incomplete: {result.incomplete_reason}")
        code = ExitCode.INCOMPLETE
    elif any(review.settings.fails(severity) for severity in open_severities):
        code = ExitCode.FINDINGS
    else:
        code = ExitCode.OK
    opened = plural(open_count, "open finding")
    if highest is not None:
        opened += f", highest severity {highest.value}"
    log(_closing_line(result, posting, existing is not None, opened, int(code)))
    return int(code)


def _closing_line(
    result: ReviewResult, posting: Posting, edits_summary: bool, opened: str, code: int
) -> str:
    """The run's last log line: its status, what it posted, what is open and where."""
    if posting.degraded:
        posted = "posted nothing (read-only token): see the job summary and annotations"
    else:
        if posting.review_url:
            posted = f"posted a review with {plural(posting.inline_comments, 'inline comment')}"
            if posting.in_review_body:
                posted += f" ({plural(posting.in_review_body, 'finding')} in its body)"
        elif result.complete:
            posted = "posted no review (no new finding to comment on a line)"
        else:
            posted = "posted no review (an incomplete review posts none)"
        if posting.summary_url:
            posted += ", " + ("edited" if edits_summary else "created") + " the summary comment"
    urls = [
        f"{name} {url}"
        for name, url in (("review", posting.review_url), ("summary", posting.summary_url))
        if url
    ]
    where = f"; {', '.join(urls)}" if urls else ""
    return f"done ({result.status}, exit {code}): {posted}; {opened}{where}"


def _our_summary(client: GitHubClient, pull: Any) -> tuple[Any | None, PullState | None]:
    """Our summary comment and the state it carries: only a comment of ours whose state line
    verifies counts; of several, the oldest (the one every run edits), said in the log."""
    verified = []
    for comment in client.summary_comments(pull):
        state, problem = read_state(comment.body, client.signer)
        if state is None:
            log(f"not using comment {comment.id} as the summary: {problem}")
        else:
            verified.append((comment, state))
    if len(verified) > 1:
        ids = ", ".join(str(comment.id) for comment, _ in verified)
        log(f"{len(verified)} summary comments of ours ({ids}); using the oldest")
    return verified[0] if verified else (None, None)


def _with_open_findings(review: Review, previous: PullState | None, full: bool) -> ReviewResult:
    """This run's findings and the earlier ones whose code still stands: the gate and the
    summary answer for the whole pull request, not only for the newest commits."""
    result = review.result
    if previous is None:
        return result
    if previous.summary and previous.summary_at and not _asked_the_model(result):
        result = replace(result, summary=_earlier_summary(result.summary, previous))
    known = {f.fingerprint for f in previous.findings}
    this_run = [
        replace(f, earlier=f.fingerprint in known) for f in (*result.findings, *result.suppressed)
    ]
    seen = {f.fingerprint for f in this_run}
    carried = [
        f
        for f in still_open(previous.findings, review.change, review.lines)
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


def _post(
    client: GitHubClient,
    pull: Any,
    context: ActionsContext,
    result: ReviewResult,
    head_sha: str,
    existing: Any | None,
    state: str,
    notes: tuple[str, ...],
) -> Posting:
    posting = Posting()
    redact = Redactor()
    try:
        commentable = client.commentable(pull)
        already = client.posted_fingerprints(pull)
        inline: list[Finding] = []
        for finding in result.findings:
            if finding.fingerprint in already or not finding.inline:
                continue
            start = finding.line if finding.end_line else None
            if commentable.accepts(finding.path, finding.side, finding.last_line, start):
                inline.append(finding)
        summary = summary_comment(result, state_line=state, notes=notes, redact=redact)
        posting.summary_url = client.upsert_summary(pull, existing, summary)
        # An incomplete review's findings stay in the summary: inline comments would look
        # like a finished review.
        if inline and result.complete:
            posting.review_url = _post_review(
                client, pull, context, inline, head_sha, posting, redact
            )
    except ReadOnlyToken as exc:
        posting.degraded = (
            "reviewer could not post on this pull request: the token is read-only (a fork's "
            "pull request?). The findings are in this job summary and in annotations."
        )
        emit_command("warning", f"{posting.degraded} ({exc})")
    return posting


def _post_review(
    client: GitHubClient,
    pull: Any,
    context: ActionsContext,
    inline: list[Finding],
    head_sha: str,
    posting: Posting,
    redact: Redactor,
) -> str:
    """One review; on a 422, single-line comments only, then none: what GitHub refuses is
    written into the review body, so no finding is lost."""
    attempts = (
        (inline, []),
        ([f for f in inline if not f.end_line], [f for f in inline if f.end_line]),
        ([], inline),
    )
    for number, (comments, folded) in enumerate(attempts):
        if number > 0 and not folded:
            continue
        body = review_body(
            len(comments),
            folded,
            context.run_id,
            posting.summary_url,
            "GitHub refused their line anchors",
            client.signer,
            redact=redact,
        )
        try:
            url = client.post_review(
                pull,
                head_sha,
                body,
                [review_comment(f, client.signer, redact=redact) for f in comments],
                context.run_id,
            )
        except InvalidAnchors as exc:
            log(f"GitHub refused the review's comments ({exc}); trying again with fewer")
        else:
            posting.inline_comments, posting.in_review_body = len(comments), len(folded)
            return url
    raise ReviewerError("GitHub refused the review even without inline comments")
