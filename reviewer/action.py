"""`reviewer github`: the Action's entry. Review the pull request's head against its merge
base, then post one review and one summary comment, or fall back to the job summary and
annotations when the token cannot write.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.ci import (
    ActionsContext,
    add_mask,
    append_summary,
    load_context,
    workflow_command,
    write_outputs,
)
from reviewer.context import ChangeInfo
from reviewer.errors import ExitCode, ReviewerError
from reviewer.findings import Finding, ReviewResult
from reviewer.gitcmd import run_git
from reviewer.github import GitHubClient, InvalidAnchors, ReadOnlyToken
from reviewer.progress import Progress
from reviewer.redact import Redactor
from reviewer.report import render, write_report
from reviewer.report.github import (
    annotations,
    review_body,
    review_comment,
    summary_comment,
    summary_state,
)
from reviewer.review import ReviewRequest, run_review
from reviewer.workspace import repository_root

_DEEPEN_STEPS = (50, 500)


@dataclass
class Posting:
    review_url: str = ""
    summary_url: str = ""
    degraded: str = ""


def run_github(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    for secret in (env.get("GITHUB_TOKEN"), env.get("OPENAI_API_KEY")):
        add_mask(secret)
    context = load_context(env)
    if not context.token:
        raise ReviewerError(
            "GITHUB_TOKEN is not set: pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the "
            "action (or set GITHUB_TOKEN for the step)"
        )
    client = GitHubClient(context.api_url, context.token, context.repository, log=_log)
    pull = client.pull(context.pull_request.number)
    info = client.pull_info(pull)
    base_sha = context.pull_request.base_sha or info.base_sha
    head_sha = context.pull_request.head_sha or info.head_sha
    root = repository_root(context.workspace)
    ensure_commits(root, base_sha, head_sha, info.number)
    existing = client.summary_comment(pull)
    since = _incremental_base(root, existing, head_sha, env)
    review = run_review(
        ReviewRequest(
            repo=root,
            base=base_sha,
            head=head_sha,
            config_name=env.get("REVIEWER_CONFIG") or None,
            since=since,
            info=ChangeInfo(info.title, info.body, context.repository),
        ),
        events=Progress(),
    )
    result = review.result
    report_path = Path(
        env.get("REVIEWER_REPORT") or Path(env.get("RUNNER_TEMP") or ".") / "reviewer-report.json"
    )
    write_report(result, "json", report_path)
    posting = _post(client, pull, context, result, head_sha, base_sha, since, existing)
    markdown = render(result, "markdown")
    if posting.degraded:
        markdown = f"> **{posting.degraded}**\n\n{markdown}"
        for line in annotations(result.findings):
            print(line, flush=True)
    append_summary(context.summary_file, markdown)
    highest = result.highest_severity()
    write_outputs(
        context.output_file,
        {
            "findings": str(len(result.findings)),
            "highest-severity": highest.value if highest else "none",
            "report": str(report_path),
            "review-url": posting.review_url,
            "summary-url": posting.summary_url,
            "status": result.status,
        },
    )
    if not result.complete:
        print(
            workflow_command("error", f"review incomplete: {result.incomplete_reason}"), flush=True
        )
        return int(ExitCode.INCOMPLETE)
    if any(review.settings.fails(f.severity) for f in result.findings):
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)


def _post(
    client: GitHubClient,
    pull: Any,
    context: ActionsContext,
    result: ReviewResult,
    head_sha: str,
    base_sha: str,
    since: str | None,
    existing: Any | None,
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
        summary = redact(
            summary_comment(result, head=head_sha, base=base_sha, reviewed_since=since)
        )
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
        print(workflow_command("warning", f"{posting.degraded} ({exc})"), flush=True)
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
        body = redact(
            review_body(
                len(comments),
                folded,
                context.run_id,
                posting.summary_url,
                "GitHub refused their line anchors",
            )
        )
        try:
            return client.post_review(
                pull,
                head_sha,
                body,
                [
                    {**review_comment(f), "body": redact(review_comment(f)["body"])}
                    for f in comments
                ],
                context.run_id,
            )
        except InvalidAnchors as exc:
            _log(f"GitHub refused the review's comments ({exc}); trying again with fewer")
    raise ReviewerError("GitHub refused the review even without inline comments")


def _incremental_base(
    root: Path, existing: Any | None, head_sha: str, env: Mapping[str, str]
) -> str | None:
    """The head the last run reviewed, when only what came after it needs a review."""
    if (env.get("REVIEWER_FULL_REVIEW") or "").lower() in ("1", "true", "yes"):
        return None
    last = summary_state(getattr(existing, "body", None)).get("head")
    if not last or last == head_sha:
        return None
    is_ancestor = run_git(root, ["merge-base", "--is-ancestor", last, head_sha], check=False)
    return last if is_ancestor.returncode == 0 else None  # a force-push: review it all


def ensure_commits(root: Path, base_sha: str, head_sha: str, number: int) -> None:
    """Fetch what a shallow checkout lacks: both commits, and history down to their merge
    base. Fetching adds objects only; no code of the pull request is run."""
    missing = [sha for sha in (base_sha, head_sha) if not _has_commit(root, sha)]
    if missing:
        _log("fetching the pull request's commits (the checkout lacks them)")
        if not _fetch(root, missing):
            _fetch(root, [f"+refs/pull/{number}/head:refs/remotes/origin/pr-{number}", *missing])
    for depth in _DEEPEN_STEPS:
        if _merge_base_found(root, base_sha, head_sha):
            return
        _log(f"fetching {depth} more commits of history (the checkout is shallow)")
        _fetch(root, [f"--deepen={depth}", base_sha, head_sha])
    if not _merge_base_found(root, base_sha, head_sha) and _is_shallow(root):
        _fetch(root, ["--unshallow"])
    if not _merge_base_found(root, base_sha, head_sha):
        lacking = [sha[:12] for sha in (base_sha, head_sha) if not _has_commit(root, sha)]
        problem = (
            f"the checkout lacks commit {', '.join(lacking)}"
            if lacking
            else f"no merge base between {base_sha[:12]} and {head_sha[:12]}"
        )
        raise ReviewerError(
            f"{problem} and fetching did not help; set `fetch-depth: 0` on actions/checkout"
        )


def _has_commit(root: Path, sha: str) -> bool:
    proc = run_git(root, ["cat-file", "-e", f"{sha}^{{commit}}"], check=False)
    return proc.returncode == 0


def _merge_base_found(root: Path, base: str, head: str) -> bool:
    if not (_has_commit(root, base) and _has_commit(root, head)):
        return False
    return run_git(root, ["merge-base", base, head], check=False).returncode == 0


def _is_shallow(root: Path) -> bool:
    proc = run_git(root, ["rev-parse", "--is-shallow-repository"], check=False)
    return proc.stdout.strip() == b"true"


def _fetch(root: Path, args: list[str]) -> bool:
    proc = run_git(
        root, ["fetch", "--no-tags", "--quiet", "origin", *args], timeout=300, check=False
    )
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        _log(f"git fetch {' '.join(args)} failed: {lines[-1] if lines else proc.returncode}")
    return proc.returncode == 0


def _log(message: str) -> None:
    print(f"reviewer: {message}", file=sys.stderr, flush=True)
