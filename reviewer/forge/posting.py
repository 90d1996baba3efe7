"""What a run posts on the change request: one review of inline comments and the summary
comment, or, when the token cannot write, nothing (the job summary and annotations carry it).
The forge's refusals never lose a finding: what it refuses as a comment is written into the
review's body (the adapter says which, interface.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.findings import Finding, ReviewResult
from reviewer.forge.interface import (
    ChangeRequestForge,
    CISide,
    Comment,
    InlineComment,
    PostingWords,
    ReadOnlyToken,
)
from reviewer.forge.signing import Signer
from reviewer.report.github import comment_body, review_body, summary_comment
from reviewer.safety.redact import Redactor
from reviewer.wording import plural


@dataclass
class Posting:
    review_url: str = ""
    summary_url: str = ""
    degraded: str = ""
    inline_comments: int = 0  # in the review posted
    in_review_body: int = 0  # findings the forge refused as comments, written into its body


def post(
    forge: ChangeRequestForge,
    ci: CISide,
    signer: Signer,
    result: ReviewResult,
    head_sha: str,
    existing: Comment | None,
    state: str,
    notes: tuple[str, ...],
) -> Posting:
    posting = Posting()
    redact = Redactor()
    try:
        commentable = forge.commentable()
        already = forge.posted_fingerprints()
        inline: list[Finding] = []
        for finding in result.findings:
            if finding.fingerprint in already or not finding.inline:
                continue
            start = finding.line if finding.end_line else None
            if commentable.accepts(finding.path, finding.side, finding.last_line, start):
                inline.append(finding)
        summary = summary_comment(result, state_line=state, notes=notes, redact=redact)
        posting.summary_url = forge.upsert_summary(existing, summary)
        # An incomplete review's findings stay in the summary: inline comments would look
        # like a finished review.
        if inline and result.complete:

            def body_for(posted: int, refused: Sequence[Finding]) -> str:
                return review_body(
                    posted,
                    list(refused),
                    ci.run_id,
                    posting.summary_url,
                    f"{forge.name} refused their line anchors",
                    signer,
                    redact=redact,
                )

            comments = [
                InlineComment(
                    f, comment_body(f, signer, redact=redact, suggestion_info=forge.suggestion_info)
                )
                for f in inline
            ]
            review = forge.post_review(head_sha, comments, body_for, ci.run_id)
            posting.review_url = review.url
            posting.inline_comments, posting.in_review_body = review.posted, len(review.refused)
    except ReadOnlyToken as exc:
        posting.degraded = (
            f"reviewer could not post on this {forge.noun}: {forge.words.no_write_long}. The "
            f"findings are in {ci.results_where}."
        )
        ci.warning(f"{posting.degraded} ({exc})")
    return posting


def closing_line(
    result: ReviewResult,
    posting: Posting,
    edits_summary: bool,
    opened: str,
    code: int,
    words: PostingWords,
    results_where: str,
) -> str:
    """The run's last log line: its status, what it posted (in the forge's words), what is
    open and where."""
    if posting.degraded:
        posted = f"posted nothing ({words.no_write}): see {results_where}"
    else:
        if posting.review_url:
            lines = plural(posting.inline_comments, words.line_noun)
            posted = "posted " + words.on_lines.format(lines=lines)
            if posting.in_review_body:
                findings = plural(posting.in_review_body, "finding")
                posted += f" ({words.elsewhere.format(findings=findings)})"
        elif result.complete:
            posted = f"posted {words.none_on_lines} (no new finding to comment on a line)"
        else:
            posted = f"posted {words.none_on_lines} (an incomplete review posts none)"
        if posting.summary_url:
            done = "edited" if edits_summary else "created"
            posted += f", {done} the {words.summary}"
    named = ((words.first_url, posting.review_url), ("summary", posting.summary_url))
    urls = [f"{name} {url}" for name, url in named if url]
    where = f"; {', '.join(urls)}" if urls else ""
    return f"done ({result.status}, exit {code}): {posted}; {opened}{where}"
