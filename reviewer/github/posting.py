"""What a run posts on the pull request: one review of inline comments and the summary comment,
or, when the token cannot write, nothing (the job summary and annotations carry it). GitHub's
refusals never lose a finding: what it refuses as a comment is written into the review body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.errors import ReviewerError
from reviewer.findings import Finding, ReviewResult
from reviewer.github.actions import ActionsContext, emit_command, log
from reviewer.github.client import GitHubClient, InvalidAnchors, ReadOnlyToken
from reviewer.report.github import review_body, review_comment, summary_comment
from reviewer.safety.redact import Redactor
from reviewer.wording import plural


@dataclass
class Posting:
    review_url: str = ""
    summary_url: str = ""
    degraded: str = ""
    inline_comments: int = 0  # in the review posted
    in_review_body: int = 0  # findings GitHub refused as comments, written into its body


def post(
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


def closing_line(
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
