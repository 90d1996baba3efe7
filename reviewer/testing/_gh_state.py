"""What the fake GitHub remembers about its one pull request, and how it renders it as JSON.

Records hold only what GitHub stores; URLs and derived fields (a comment's current `line` and
`position`, the pull request's counters) are computed when rendered, from the current head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewer.testing._gh_diff import PullDiff
from reviewer.testing._gh_objects import JsonObject, Site, node_id, stable_id, timestamp


@dataclass
class Review:
    id: int
    user: str
    body: str
    state: str  # COMMENTED, APPROVED, CHANGES_REQUESTED, DISMISSED or PENDING
    commit_id: str
    submitted_at: str | None


@dataclass
class ReviewComment:
    id: int
    review_id: int
    user: str
    body: str
    path: str
    commit_id: str
    line: int | None  # None for a file-level comment
    side: str | None
    start_line: int | None
    start_side: str | None
    position: int | None  # in the diff of `commit_id` (GitHub's original_position)
    diff_hunk: str
    created_at: str
    updated_at: str
    subject_type: str = "line"
    in_reply_to_id: int | None = None


@dataclass
class IssueComment:
    id: int
    user: str
    body: str
    created_at: str
    updated_at: str


@dataclass
class PullRequestInfo:
    """The pull request's fixed facts (the head sha and the diff move with `set_head`)."""

    number: int
    title: str
    body: str | None
    author: str
    base_ref: str
    base_sha: str
    head_ref: str
    fork: bool
    draft: bool
    created_at: str = field(default_factory=timestamp)


def association(user: str, info: PullRequestInfo) -> str:
    if user == info.author:
        return "CONTRIBUTOR" if info.fork else "MEMBER"
    return "NONE" if user.endswith("[bot]") else "MEMBER"


def render_pull(
    site: Site,
    info: PullRequestInfo,
    *,
    head_sha: str,
    diff: PullDiff,
    commits: int,
    comments: int,
    review_comments: int,
) -> JsonObject:
    api = f"{site.repo_api}/pulls/{info.number}"
    html = f"{site.repo_web}/pull/{info.number}"
    issue = f"{site.repo_api}/issues/{info.number}"
    base_repo = site.repository(site.owner, site.name, fork=False, default_branch=info.base_ref)
    head_owner = info.author if info.fork else site.owner
    head_repo = site.repository(head_owner, site.name, fork=info.fork, default_branch=info.base_ref)
    if info.fork:
        head_repo["clone_url"] = f"{site.web}/{head_owner}/{site.name}.git"
    return {
        "url": api,
        "id": site.repo_id * 1000 + info.number,
        "node_id": node_id("PullRequest", site.repo_id * 1000 + info.number),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": issue,
        "number": info.number,
        "state": "open",
        "locked": False,
        "title": info.title,
        "user": site.user(info.author),
        "body": info.body,
        "labels": [],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": info.created_at,
        "updated_at": info.created_at,
        "closed_at": None,
        "merged_at": None,
        "merge_commit_sha": None,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "draft": info.draft,
        "commits_url": f"{api}/commits",
        "review_comments_url": f"{api}/comments",
        "review_comment_url": f"{site.repo_api}/pulls/comments{{/number}}",
        "comments_url": f"{issue}/comments",
        "statuses_url": f"{site.repo_api}/statuses/{head_sha}",
        "head": {
            "label": f"{head_owner}:{info.head_ref}",
            "ref": info.head_ref,
            "sha": head_sha,
            "user": site.user(head_owner),
            "repo": head_repo,
        },
        "base": {
            "label": f"{site.owner}:{info.base_ref}",
            "ref": info.base_ref,
            "sha": info.base_sha,
            "user": site.user(site.owner),
            "repo": base_repo,
        },
        "_links": {
            "self": {"href": api},
            "html": {"href": html},
            "issue": {"href": issue},
            "comments": {"href": f"{issue}/comments"},
            "review_comments": {"href": f"{api}/comments"},
            "review_comment": {"href": f"{site.repo_api}/pulls/comments{{/number}}"},
            "commits": {"href": f"{api}/commits"},
            "statuses": {"href": f"{site.repo_api}/statuses/{head_sha}"},
        },
        "author_association": association(info.author, info),
        "auto_merge": None,
        "merged": False,
        "mergeable": None,
        "rebaseable": None,
        "mergeable_state": "unknown",
        "merged_by": None,
        "comments": comments,
        "review_comments": review_comments,
        "maintainer_can_modify": info.fork,
        "commits": commits,
        "additions": diff.additions,
        "deletions": diff.deletions,
        "changed_files": len(diff.files),
    }


def render_issue(site: Site, info: PullRequestInfo, comments: int) -> JsonObject:
    api = f"{site.repo_api}/issues/{info.number}"
    pull = f"{site.repo_api}/pulls/{info.number}"
    html = f"{site.repo_web}/pull/{info.number}"
    return {
        "url": api,
        "repository_url": site.repo_api,
        "comments_url": f"{api}/comments",
        "html_url": html,
        "id": site.repo_id * 1000 + info.number,
        "number": info.number,
        "title": info.title,
        "user": site.user(info.author),
        "labels": [],
        "state": "open",
        "locked": False,
        "assignee": None,
        "assignees": [],
        "comments": comments,
        "created_at": info.created_at,
        "updated_at": info.created_at,
        "closed_at": None,
        "author_association": association(info.author, info),
        "draft": info.draft,
        "pull_request": {
            "url": pull,
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "merged_at": None,
        },
        "body": info.body,
    }


def render_review(site: Site, info: PullRequestInfo, review: Review) -> JsonObject:
    pull = f"{site.repo_api}/pulls/{info.number}"
    html = f"{site.repo_web}/pull/{info.number}#pullrequestreview-{review.id}"
    data: JsonObject = {
        "id": review.id,
        "node_id": node_id("PullRequestReview", review.id),
        "user": site.user(review.user),
        "body": review.body,
        "state": review.state,
        "html_url": html,
        "pull_request_url": pull,
        "author_association": association(review.user, info),
        "_links": {"html": {"href": html}, "pull_request": {"href": pull}},
        "commit_id": review.commit_id,
    }
    if review.submitted_at is not None:  # a pending review has no submitted_at at all
        data["submitted_at"] = review.submitted_at
    return data


def render_review_comment(
    site: Site,
    info: PullRequestInfo,
    comment: ReviewComment,
    now: tuple[int | None, int | None, int | None],
    head_sha: str,
) -> JsonObject:
    """`now`: the comment's line, start line and position at the head, all None if outdated."""
    api = f"{site.repo_api}/pulls/comments/{comment.id}"
    html = f"{site.repo_web}/pull/{info.number}#discussion_r{comment.id}"
    pull = f"{site.repo_api}/pulls/{info.number}"
    line, start_line, position = now
    data: JsonObject = {
        "url": api,
        "pull_request_review_id": comment.review_id,
        "id": comment.id,
        "node_id": node_id("PullRequestReviewComment", comment.id),
        "diff_hunk": comment.diff_hunk,
        "path": comment.path,
        "position": position,
        "original_position": comment.position,
        "commit_id": head_sha if line is not None else comment.commit_id,
        "original_commit_id": comment.commit_id,
        "user": site.user(comment.user),
        "body": comment.body,
        "created_at": comment.created_at,
        "updated_at": comment.updated_at,
        "html_url": html,
        "pull_request_url": pull,
        "author_association": association(comment.user, info),
        "_links": {"self": {"href": api}, "html": {"href": html}, "pull_request": {"href": pull}},
        "start_line": start_line,
        "original_start_line": comment.start_line,
        "start_side": comment.start_side,
        "line": line,
        "original_line": comment.line,
        "side": comment.side,
        "subject_type": comment.subject_type,
    }
    if comment.in_reply_to_id is not None:
        data["in_reply_to_id"] = comment.in_reply_to_id
    return data


def render_issue_comment(site: Site, info: PullRequestInfo, comment: IssueComment) -> JsonObject:
    api = f"{site.repo_api}/issues/comments/{comment.id}"
    data: JsonObject = {
        "url": api,
        "html_url": f"{site.repo_web}/pull/{info.number}#issuecomment-{comment.id}",
        "issue_url": f"{site.repo_api}/issues/{info.number}",
        "id": comment.id,
        "node_id": node_id("IssueComment", comment.id),
        "user": site.user(comment.user),
        "created_at": comment.created_at,
        "updated_at": comment.updated_at,
        "author_association": association(comment.user, info),
        "body": comment.body,
        "performed_via_github_app": None,
    }
    if comment.user == "github-actions[bot]":
        data["performed_via_github_app"] = {
            "id": 15368,
            "slug": "github-actions",
            "node_id": "MDM6QXBwMTUzNjg=",
            "name": "GitHub Actions",
            "html_url": f"{site.web}/apps/github-actions",
        }
    return data


def render_plain_issue(
    site: Site, repository: str, number: int, title: str, body: str, state: str, author: str
) -> JsonObject:
    """An issue that is not a pull request: no `pull_request` key (docs.github.com/rest/
    issues/issues#get-an-issue: "You can identify pull requests by the pull_request key")."""
    api = f"{site.api}/repos/{repository}/issues/{number}"
    return {
        "url": api,
        "repository_url": f"{site.api}/repos/{repository}",
        "comments_url": f"{api}/comments",
        "html_url": f"{site.web}/{repository}/issues/{number}",
        "id": stable_id(f"{repository}#{number}"),
        "number": number,
        "title": title,
        "user": site.user(author),
        "labels": [],
        "state": state,
        "locked": False,
        "assignee": None,
        "assignees": [],
        "comments": 0,
        "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "closed_at": None,
        "author_association": "MEMBER",
        "body": body,
    }
