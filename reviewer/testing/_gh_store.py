"""The fake GitHub's memory of its one pull request: head, diffs, reviews and comments.

Handlers (`_gh_api`, `_gh_comments`) read and change it under `lock`; the test reads it through
`FakeGitHub`. Seeding goes through here too, without GitHub's validation: a previous run may
have anchored its comments on an older head.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.testing._gh_diff import PullDiff, commits_between, compute_diff, moved_line
from reviewer.testing._gh_objects import (
    DOC,
    GitHubError,
    JsonObject,
    Site,
    json_answer,
    not_found,
    paginate,
    timestamp,
)
from reviewer.testing._gh_permissions import Access
from reviewer.testing._gh_reactions import ReactionBook
from reviewer.testing._gh_reviews import Anchor, check_comment_schema, resolve_comment
from reviewer.testing._gh_state import (
    IssueComment,
    PullRequestInfo,
    Review,
    ReviewComment,
    render_issue_comment,
    render_pull,
    render_review,
    render_review_comment,
)
from reviewer.testing._gh_threads import Thread, ThreadBook
from reviewer.testing._llm_wire import Answer


@dataclass(frozen=True)
class ApiRequest:
    """A request routed to a handler, with what the handler may need to answer it."""

    method: str
    rest: str  # the path after /repos/{o}/{r} (or /repositories/{id}), "" for the repo itself
    query: dict[str, str]
    body: Any
    headers: dict[str, str]
    user: str  # who GitHub thinks is calling: the bot
    page_url: str  # absolute URL of this resource without query, for `link`


@dataclass(frozen=True)
class Limits:
    actions_may_approve: bool = False
    max_diff_files: int = 300
    max_diff_lines: int = 20000
    max_listed_files: int = 3000


class PullRequestStore:
    def __init__(
        self, repo: Path, site: Site, info: PullRequestInfo, head_sha: str, limits: Limits
    ) -> None:
        self.repo = repo
        self.site = site
        self.info = info
        self.limits = limits
        self.lock = threading.RLock()
        self.reviews: list[Review] = []
        self.review_comments: list[ReviewComment] = []
        self.issue_comments: list[IssueComment] = []
        # Issues that are no pull request, by (repository in lower case, number), and the
        # other repositories of the site ({lower name: (name, private)}): tickets to read.
        self.issues: dict[tuple[str, int], JsonObject] = {}
        self.other_repos: dict[str, tuple[str, bool]] = {}
        # The conversation around them: threads' resolution, reactions, who may act.
        self.threads = ThreadBook()
        self.reactions = ReactionBook()
        self.access = Access()
        # Distinct ranges, so that a review id used as a comment id finds nothing.
        self._review_ids = itertools.count(1_800_000_001)
        self._comment_ids = itertools.count(1_500_000_001)
        self._issue_comment_ids = itertools.count(2_100_000_001)
        self._diffs: dict[str, PullDiff] = {}
        self.pr_commits: set[str] = set()  # every commit the pull request has ever had
        self.commits: list[str] = []
        self.head_sha = ""
        self.set_head(head_sha)

    def set_head(self, sha: str) -> None:
        self.diff_for(sha)  # computed now: a bad sha fails here, not in a request
        commits = commits_between(self.repo, self.info.base_sha, sha)
        with self.lock:
            self.head_sha = sha
            self.commits = commits
            self.pr_commits.update(commits)

    def diff_for(self, sha: str) -> PullDiff:
        with self.lock:
            cached = self._diffs.get(sha)
        if cached is None:
            cached = compute_diff(self.repo, self.info.base_sha, sha)
            with self.lock:
                self._diffs[sha] = cached
        return cached

    @property
    def diff(self) -> PullDiff:
        return self.diff_for(self.head_sha)

    # -- rendering -------------------------------------------------------------------------

    def pull_json(self) -> JsonObject:
        with self.lock:
            return render_pull(
                self.site,
                self.info,
                head_sha=self.head_sha,
                diff=self.diff,
                commits=len(self.commits),
                comments=len(self.issue_comments),
                review_comments=len(self.visible_comments()),
            )

    def review_json(self, review: Review) -> JsonObject:
        return render_review(self.site, self.info, review)

    def comment_json(self, comment: ReviewComment) -> JsonObject:
        now = self.anchor_now(comment)
        return render_review_comment(self.site, self.info, comment, now, self.head_sha)

    def anchor_now(self, comment: ReviewComment) -> tuple[int | None, int | None, int | None]:
        """The comment's line, start line and position at the head; all None once outdated
        (its line changed, or is no longer in the pull request's diff)."""
        outdated = (None, None, None)
        if comment.line is None or comment.side is None:
            return outdated
        if comment.commit_id == self.head_sha:
            return comment.line, comment.start_line, comment.position
        line = self._follow(comment, comment.side, comment.line)
        start = comment.start_line
        if start is not None:
            start = self._follow(comment, comment.start_side or comment.side, start)
            if start is None:
                return outdated
        entry = self.diff.file(comment.path)
        found = entry.locate(comment.side, line) if entry and line is not None else None
        if found is None:
            return outdated
        return line, start, found.position

    def _follow(self, comment: ReviewComment, side: str, line: int) -> int | None:
        if side == "LEFT":  # the base does not move with a push
            return line
        return moved_line(self.repo, comment.commit_id, self.head_sha, comment.path, line)

    def issue_comment_json(self, comment: IssueComment) -> JsonObject:
        return render_issue_comment(self.site, self.info, comment)

    def visible_comments(self) -> list[ReviewComment]:
        # Comments of a pending review are a draft: GitHub lists them only inside that review.
        pending = {r.id for r in self.reviews if r.state == "PENDING"}
        return [c for c in self.review_comments if c.review_id not in pending]

    def review_threads(self) -> list[Thread]:
        return self.threads.threads(self.visible_comments())

    def thread_outdated(self, thread: Thread) -> bool:
        """GitHub's `isOutdated`: the root comment's line changed or left the diff at the head
        (a file-level thread: its file left the diff), unless a test decided."""
        if thread.state.outdated is not None:
            return thread.state.outdated
        root = thread.root
        if root.subject_type == "file":
            return self.diff.file(root.path) is None
        return self.anchor_now(root)[0] is None

    # -- changes ---------------------------------------------------------------------------

    def new_review(self, user: str, body: str, state: str, commit: str) -> Review:
        submitted = None if state == "PENDING" else timestamp()
        review = Review(next(self._review_ids), user, body, state, commit, submitted)
        self.reviews.append(review)
        return review

    def add_review(
        self,
        body: str,
        *,
        user: str,
        state: str,
        commit_id: str | None,
        comments: Iterable[JsonObject],
    ) -> Review:
        with self.lock:
            commit = commit_id or self.head_sha
            review = self.new_review(user, body, state, commit)
            for item in comments:
                self.store_comment(review, commit, self._seed_anchor(commit, item))
            return review

    def _seed_anchor(self, commit: str, item: JsonObject) -> Anchor:
        check_comment_schema(item, DOC["create_review"])
        try:
            return resolve_comment(self.diff_for(commit), item)
        except GitHubError:
            side = item.get("side") or "RIGHT"
            start = item.get("start_line")
            start_side = (item.get("start_side") or side) if start is not None else None
            return Anchor(item["path"], item["body"], item["line"], side, start, start_side, 0, "")

    def add_issue_comment(self, body: str, *, user: str) -> IssueComment:
        with self.lock:
            now = timestamp()
            comment = IssueComment(next(self._issue_comment_ids), user, body, now, now)
            self.issue_comments.append(comment)
            return comment

    def store_comment(
        self, review: Review, commit: str, anchor: Anchor, subject: str = "line"
    ) -> ReviewComment:
        now = timestamp()
        comment = ReviewComment(
            id=next(self._comment_ids),
            review_id=review.id,
            user=review.user,
            body=anchor.body,
            path=anchor.path,
            commit_id=commit,
            line=anchor.line if subject == "line" else None,
            side=anchor.side if subject == "line" else None,
            start_line=anchor.start_line,
            start_side=anchor.start_side,
            position=anchor.position or None,
            diff_hunk=anchor.diff_hunk,
            created_at=now,
            updated_at=now,
            subject_type=subject,
        )
        self.review_comments.append(comment)
        return comment

    def add_reply(self, parent: ReviewComment, body: str, user: str) -> ReviewComment:
        """A reply in `parent`'s thread: anchored like the thread, `in_reply_to_id` its root."""
        review = self.new_review(user, "", "COMMENTED", parent.commit_id)
        anchor = Anchor(
            parent.path,
            body,
            parent.line or 0,
            parent.side or "RIGHT",
            parent.start_line,
            parent.start_side,
            parent.position or 0,
            parent.diff_hunk,
        )
        comment = self.store_comment(review, parent.commit_id, anchor, parent.subject_type)
        comment.in_reply_to_id = parent.in_reply_to_id or parent.id
        return comment

    # -- lookups by the id in a URL (404 with the endpoint's documentation otherwise) ------

    def review(self, match: re.Match[str], doc: str) -> Review:
        return _find(self.reviews, int(match["id"]), doc)

    def comment(self, match: re.Match[str], doc: str) -> ReviewComment:
        return _find(self.review_comments, int(match["id"]), doc)

    def issue_comment(self, match: re.Match[str], doc: str) -> IssueComment:
        return _find(self.issue_comments, int(match["id"]), doc)


def _find(items: list[Any], wanted: int, doc: str) -> Any:
    found = next((item for item in items if item.id == wanted), None)
    if found is None:
        raise not_found(doc)
    return found


def page(items: list[JsonObject], request: ApiRequest) -> Answer:
    chunk, headers = paginate(items, request.query, request.page_url)
    return json_answer(200, chunk, headers)


def created(data: JsonObject) -> Answer:
    return json_answer(201, data, {"location": data["url"]})
