"""The fake GitHub answers the real PyGithub over real HTTP as GitHub does.

Every test drives `github.Github` against a pull request made from a real git repository, so
what passes here is what the `github` command will meet: PyGithub's URL checks, pagination,
exceptions and retries included.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import github
import pytest
from github import Auth, Github, GithubException
from github.GithubRetry import GithubRetry

from reviewer.github.actions import load_context
from reviewer.testing import FakeGitHub
from tests.conftest import GitRepo

DOC_REVIEW = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
APP = "".join(f"line {i}\n" for i in range(1, 41))
OLD_MODULE = "".join(f"value_{i} = {i}\n" for i in range(1, 11))


def unprocessable(error: str) -> dict[str, Any]:
    return {
        "message": "Unprocessable Entity",
        "errors": [error],
        "documentation_url": DOC_REVIEW,
        "status": "422",
    }


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # requests honours proxy variables: a proxy would swallow loopback requests.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def pull_repo(repo: GitRepo) -> GitRepo:
    """main, then a `feature` branch that modifies, adds, removes, renames and touches a binary.

    app.py's diff has two hunks: @@ -2,7 +2,7 @@ (line 5 replaced) and @@ -28,6 +28,8 @@
    (two lines added after line 30, new lines 31 and 32).
    """
    repo.write("app.py", APP)
    repo.write("removed.txt", "bye\n")
    repo.write("old_name.py", OLD_MODULE)
    repo.write("logo.png", b"\x89PNG\x00\x01\x02")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    app = APP.replace("line 5\n", "line 5 changed\n").replace(
        "line 30\n", "line 30\nadded A\nadded B\n"
    )
    repo.write("app.py", app)
    (repo.root / "removed.txt").unlink()
    (repo.root / "old_name.py").unlink()
    repo.write("new_name.py", OLD_MODULE.replace("value_3 = 3", "value_3 = 33"))
    repo.write("new.py", "print('hi')\n")
    repo.write("logo.png", b"\x89PNG\x00\x09")
    repo.commit("feature work")
    return repo


@pytest.fixture
def fake(pull_repo: GitRepo) -> Iterator[FakeGitHub]:
    with FakeGitHub(
        pull_repo.root, repository="acme/shop", number=7, title="Add things", author="alice"
    ) as server:
        yield server


def client(fake: FakeGitHub, token: str = "t", **options: Any) -> Github:
    settings: dict[str, Any] = {
        "retry": None,
        "seconds_between_requests": None,
        "seconds_between_writes": None,
        "per_page": 100,
    }
    settings.update(options)
    return Github(base_url=fake.base_url, auth=Auth.Token(token), **settings)


def pull(fake: FakeGitHub, **options: Any) -> github.PullRequest.PullRequest:
    return client(fake, **options).get_repo("acme/shop").get_pull(7)


def raw(
    url: str, method: str = "GET", body: Any = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """A bare request, to see exactly what is on the wire."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=5) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                response.read(),
            )
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def post_review(pr: Any, comments: list[dict[str, Any]], event: str = "COMMENT", **kw: Any) -> Any:
    commit = pr.base.repo.get_commit(pr.head.sha)
    return pr.create_review(commit=commit, body="Review", event=event, comments=comments, **kw)


# -- reading the pull request ------------------------------------------------------------------


def test_repository_and_pull_request_attributes(fake: FakeGitHub, pull_repo: GitRepo) -> None:
    gh = client(fake)
    repository = gh.get_repo("acme/shop")
    pr = repository.get_pull(7)
    assert (repository.full_name, repository.default_branch, repository.private) == (
        "acme/shop",
        "main",
        False,
    )
    assert repository.url == f"{fake.base_url}/repos/acme/shop"
    assert (pr.number, pr.title, pr.body, pr.state, pr.draft) == (
        7,
        "Add things",
        None,
        "open",
        False,
    )
    assert pr.user.login == "alice"
    assert pr.head.sha == pull_repo.head() and pr.head.ref == "feature"
    assert pr.head.label == "acme:feature"
    assert pr.base.sha == pull_repo.git("rev-parse", "main").strip() and pr.base.ref == "main"
    assert pr.head.repo.full_name == "acme/shop" and pr.head.repo.fork is False
    numstat = pull_repo.git("diff", "--numstat", "--find-renames", "main...feature").splitlines()
    assert pr.changed_files == len(numstat) == 5
    assert (pr.additions, pr.deletions) == (5, 3)  # binary files count no lines
    assert pr.commits == 1
    assert pr.issue_url == f"{fake.base_url}/repos/acme/shop/issues/7"
    assert pr.diff_url == f"{fake.url}/acme/shop/pull/7.diff"
    assert repository.get_commit(pr.head.sha).sha == pr.head.sha
    assert [c.sha for c in pr.get_commits()] == [pull_repo.head()]
    fake.assert_no_failures()


def test_the_diff_media_type_serves_git_diff_three_dots(
    fake: FakeGitHub, pull_repo: GitRepo
) -> None:
    gh = client(fake)
    pr = gh.get_repo("acme/shop").get_pull(7)
    # Spelled out so that the developer's git configuration cannot change the expectation.
    plain = ("--no-color", "--no-ext-diff", "-U3", "--src-prefix=a/", "--dst-prefix=b/")
    expected = pull_repo.git("diff", *plain, "--find-renames", "main...feature")
    for accept in ("application/vnd.github.v3.diff", "application/vnd.github.diff"):
        headers, data = gh.requester.requestJsonAndCheck("GET", pr.url, headers={"Accept": accept})
        assert data["data"] == expected
        assert headers["content-type"] == "application/vnd.github.v3.diff; charset=utf-8"
    assert "Binary files a/logo.png and b/logo.png differ" in expected
    assert raw(pr.diff_url)[2].decode() == expected  # the web diff_url, no token needed
    fake.assert_no_failures()


def test_a_diff_over_the_limit_is_a_406_too_large(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, max_diff_files=4) as fake:
        gh = client(fake)
        pr = gh.get_repo("acme/shop").get_pull(7)
        with pytest.raises(GithubException) as caught:
            gh.requester.requestJsonAndCheck(
                "GET", pr.url, headers={"Accept": "application/vnd.github.v3.diff"}
            )
    assert caught.value.status == 406
    assert caught.value.data == {
        "message": "Sorry, the diff exceeded the maximum number of files (4). Consider using "
        "'List pull requests files' API or locally cloning the repository instead.",
        "errors": [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
        "documentation_url": "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files",
        "status": "406",
    }


def test_files_have_github_statuses_and_no_patch_for_binaries(fake: FakeGitHub) -> None:
    files = {f.filename: f for f in pull(fake).get_files()}
    assert {name: f.status for name, f in files.items()} == {
        "app.py": "modified",
        "logo.png": "modified",
        "new.py": "added",
        "new_name.py": "renamed",
        "removed.txt": "removed",
    }
    assert files["logo.png"].patch is None
    assert files["new_name.py"].previous_filename == "old_name.py"
    assert files["app.py"].patch.startswith("@@ -2,7 +2,7 @@ line 1\n line 2\n")
    assert files["app.py"].patch.endswith(" line 33")  # no trailing newline, as GitHub sends
    assert (files["app.py"].additions, files["app.py"].deletions, files["app.py"].changes) == (
        3,
        1,
        4,
    )
    assert files["removed.txt"].patch == "@@ -1 +0,0 @@\n-bye"
    assert files["app.py"].blob_url == f"{fake.url}/acme/shop/blob/{fake.head_sha}/app.py"
    assert files["app.py"].contents_url == (
        f"{fake.base_url}/repos/acme/shop/contents/app.py?ref={fake.head_sha}"
    )


def test_files_paginate_with_githubs_link_header(repo: GitRepo) -> None:
    repo.write("README", "base\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for i in range(130):
        repo.write(f"pkg/m{i:03}.py", f"x = {i}\n")
    repo.commit("many files")
    with FakeGitHub(repo.root, number=3) as fake:
        pr = client(fake).get_repo("acme/shop").get_pull(3)
        names = [f.filename for f in pr.get_files()]
        small = [
            f.filename
            for f in client(fake, per_page=50).get_repo("acme/shop").get_pull(3).get_files()
        ]
        pages = fake.requests_to("GET", "*/pulls/3/files")
        status, headers, body = raw(
            f"{fake.base_url}/repos/acme/shop/pulls/3/files?per_page=50&page=2"
        )
    assert names == small == [f"pkg/m{i:03}.py" for i in range(130)]
    assert len(pages) == 2 + 3  # 130 files: 2 pages of 100, then 3 pages of 50
    # PyGithub follows the `next` link verbatim: GitHub's links use /repositories/{id}/...
    assert pages[1].path.startswith("/repositories/") and pages[1].query == {
        "per_page": "100",
        "page": "2",
    }
    rid = fake.pull["base"]["repo"]["id"]
    files = f"{fake.base_url}/repositories/{rid}/pulls/3/files"
    assert headers["link"] == (
        f'<{files}?per_page=50&page=1>; rel="prev", <{files}?per_page=50&page=3>; rel="next", '
        f'<{files}?per_page=50&page=3>; rel="last", <{files}?per_page=50&page=1>; rel="first"'
    )
    assert status == 200 and len(json.loads(body)) == 50
    fake.assert_no_failures()


# -- posting a review ------------------------------------------------------------------------


def test_a_valid_review_is_stored_with_its_comments(fake: FakeGitHub) -> None:
    pr = pull(fake)
    comments = [
        {"path": "app.py", "line": 31, "body": "added line"},
        {"path": "app.py", "start_line": 31, "line": 32, "body": "range", "side": "RIGHT"},
        {"path": "app.py", "line": 5, "side": "LEFT", "body": "deleted line"},
        {"path": "app.py", "line": 33, "body": "context line"},
        {"path": "new_name.py", "position": 3, "body": "deprecated position"},
    ]
    review = post_review(pr, comments)
    assert (review.state, review.commit_id, review.body) == ("COMMENTED", fake.head_sha, "Review")
    assert review.user.login == "github-actions[bot]" and review.user.type == "Bot"
    assert review.html_url == f"{fake.url}/acme/shop/pull/7#pullrequestreview-{review.id}"
    listed = list(pr.get_review_comments())
    assert [(c.path, c.line, c.side, c.start_line, c.body) for c in listed] == [
        ("app.py", 31, "RIGHT", None, "added line"),
        ("app.py", 32, "RIGHT", 31, "range"),
        ("app.py", 5, "LEFT", None, "deleted line"),
        ("app.py", 33, "RIGHT", None, "context line"),
        ("new_name.py", 3, "LEFT", None, "deprecated position"),
    ]
    assert all(c.pull_request_review_id == review.id for c in listed)
    assert listed[0].diff_hunk.endswith("line 30\n+added A")
    stored = fake.review_comments[1]
    assert (stored["start_side"], stored["original_line"], stored["commit_id"]) == (
        "RIGHT",
        32,
        fake.head_sha,
    )
    assert [r.id for r in pr.get_reviews()] == [review.id] == [r["id"] for r in fake.reviews]
    assert fake.requests_to("POST", "*/reviews")[0].body["commit_id"] == fake.head_sha
    assert fake.rejections == [] and fake.failures == []


@pytest.mark.parametrize(
    ("comment", "error"),
    [
        ({"path": "app.py", "line": 15, "body": "between hunks"}, "Line could not be resolved"),
        (
            {"path": "removed.txt", "line": 1, "body": "a removed file has no RIGHT"},
            "Line could not be resolved",
        ),
        ({"path": "new.py", "line": 2, "body": "past the end"}, "Line could not be resolved"),
        ({"path": "logo.png", "line": 1, "body": "binary"}, "Line could not be resolved"),
        ({"path": "README.md", "line": 1, "body": "not in the PR"}, "Path could not be resolved"),
        ({"path": "old_name.py", "line": 3, "body": "old name"}, "Path could not be resolved"),
        (
            {"path": "app.py", "start_line": 5, "line": 31, "body": "two hunks"},
            "Pull request review thread start line must be part of the same hunk as the line.",
        ),
        (
            {"path": "app.py", "start_line": 32, "line": 31, "body": "backwards"},
            "Pull request review thread start line must precede the end line.",
        ),
        (
            {"path": "app.py", "start_line": 31, "line": 31, "body": "same line"},
            "Pull request review thread start line must precede the end line.",
        ),
    ],
)
def test_one_bad_anchor_fails_the_whole_review_with_githubs_422(
    fake: FakeGitHub, comment: dict[str, Any], error: str
) -> None:
    pr = pull(fake)
    good = {"path": "app.py", "line": 31, "body": "fine"}
    with pytest.raises(GithubException) as caught:
        post_review(pr, [good, comment])
    assert caught.value.status == 422
    assert caught.value.data == unprocessable(error)
    assert fake.reviews == [] and fake.review_comments == []  # all or nothing
    assert len(fake.rejections) == 1 and fake.failures == []


def test_approving_is_refused_to_actions_and_to_the_author(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, author="alice") as fake:
        with pytest.raises(GithubException) as caught:
            post_review(pull(fake), [], event="APPROVE")
        assert caught.value.data == unprocessable(
            "GitHub Actions is not permitted to approve pull requests."
        )
    with FakeGitHub(pull_repo.root, number=7, author="alice", bot="alice") as fake:
        with pytest.raises(GithubException) as caught:
            post_review(pull(fake), [], event="APPROVE")
        assert caught.value.data == unprocessable("Can not approve your own pull request")
        assert fake.reviews == []
    with FakeGitHub(pull_repo.root, number=7, actions_may_approve=True) as fake:
        assert post_review(pull(fake), [], event="APPROVE").state == "APPROVED"


def test_commit_id_must_belong_to_the_pull_request(fake: FakeGitHub) -> None:
    gh = client(fake)
    pr = gh.get_repo("acme/shop").get_pull(7)
    base = gh.get_repo("acme/shop").get_commit(pr.base.sha)
    with pytest.raises(GithubException) as caught:
        pr.create_review(commit=base, body="x", event="COMMENT")
    assert caught.value.data == unprocessable("The commitOID is not part of the pull request")
    with pytest.raises(GithubException) as caught:
        pr.create_review(body="", event="COMMENT")  # nothing to say
    assert caught.value.status == 422
    review = pr.create_review(body="no commit given", event="COMMENT")
    assert review.commit_id == fake.head_sha  # GitHub defaults to the head


def test_a_review_without_event_stays_pending_and_blocks_another(fake: FakeGitHub) -> None:
    pr = pull(fake)
    pending = pr.create_review(body="draft", comments=[{"path": "new.py", "line": 1, "body": "x"}])
    assert pending.state == "PENDING" and pending.submitted_at is None
    assert list(pr.get_review_comments()) == []  # drafts are not listed
    with pytest.raises(GithubException) as caught:
        post_review(pr, [])
    assert caught.value.data == unprocessable(
        "User can only have one pending review per pull request"
    )
    pending.delete()
    assert post_review(pr, []).state == "COMMENTED"


def test_schema_errors_use_githubs_invalid_request_text(fake: FakeGitHub) -> None:
    pr = pull(fake)
    with pytest.raises(GithubException) as caught:
        pr.create_review(body="x", event="comment")
    assert caught.value.status == 422
    assert caught.value.data["message"] == (
        "Invalid request.\n\nFor 'properties/event', \"comment\" is not one of "
        '["APPROVE", "REQUEST_CHANGES", "COMMENT"].'
    )
    with pytest.raises(GithubException) as caught:
        post_review(pr, [{"path": "app.py", "line": "31", "body": "x"}])
    assert "For 'properties/line', \"31\" is not an integer." in caught.value.data["message"]


def test_a_single_review_comment_uses_the_validation_failed_form(fake: FakeGitHub) -> None:
    pr = pull(fake)
    comment = pr.create_review_comment("one", fake.head_sha, "app.py", line=32, start_line=31)
    assert (comment.line, comment.start_line, comment.side) == (32, 31, "RIGHT")
    reply = pr.create_review_comment_reply(comment.id, "reply")
    assert reply.in_reply_to_id == comment.id
    with pytest.raises(GithubException) as caught:
        pr.create_review_comment("two", fake.head_sha, "app.py", line=15)
    assert caught.value.data["message"] == "Validation Failed"
    assert caught.value.data["errors"] == [
        {
            "resource": "PullRequestReviewComment",
            "code": "custom",
            "field": "pull_request_review_thread.line",
            "message": "could not be resolved",
        }
    ]


# -- the summary comment -----------------------------------------------------------------------


def test_issue_comments_create_list_edit_and_the_65536_limit(fake: FakeGitHub) -> None:
    pr = pull(fake)
    created = pr.create_issue_comment("<!-- marker -->\nsummary")
    assert created.user.login == "github-actions[bot]"
    assert created.url == f"{fake.base_url}/repos/acme/shop/issues/comments/{created.id}"
    created.edit("<!-- marker -->\nsummary v2")
    assert [c.body for c in pr.get_issue_comments()] == ["<!-- marker -->\nsummary v2"]
    assert fake.requests_to("POST", "*/issues/7/comments")[0].status == 201
    assert fake.requests_to("PATCH", f"*/issues/comments/{created.id}")[0].status == 200
    too_long = {
        "message": "Validation Failed",
        "errors": [
            {
                "resource": "IssueComment",
                "code": "custom",
                "field": "body",
                "message": "body is too long (maximum is 65536 characters)",
            }
        ],
        "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
        "status": "422",
    }
    with pytest.raises(GithubException) as caught:
        pr.create_issue_comment("x" * 65537)
    assert (caught.value.status, caught.value.data) == (422, too_long)
    with pytest.raises(GithubException) as caught:
        created.edit("x" * 65537)
    assert caught.value.data["errors"] == too_long["errors"]
    assert pr.create_issue_comment("x" * 65536).body == "x" * 65536
    assert pr.get_issue_comment(created.id).body == "<!-- marker -->\nsummary v2"


def test_seeded_comments_are_listed_and_others_cannot_be_edited(fake: FakeGitHub) -> None:
    mine = fake.add_issue_comment("<!-- marker -->\nold summary")
    theirs = fake.add_issue_comment("<!-- marker -->\nquoted by a person", user="bob")
    fake.add_review_comment("app.py", 32, "old finding", start_line=31)
    fake.add_review(
        "by a person", user="bob", comments=[{"path": "new.py", "line": 1, "body": "hm"}]
    )
    pr = pull(fake)
    listed = list(pr.get_issue_comments())
    assert [(c.id, c.user.login, c.user.type) for c in listed] == [
        (mine["id"], "github-actions[bot]", "Bot"),
        (theirs["id"], "bob", "User"),
    ]
    assert [(c.user.login, c.start_line, c.line) for c in pr.get_review_comments()] == [
        ("github-actions[bot]", 31, 32),
        ("bob", None, 1),
    ]
    assert pr.comments == 2 and pr.review_comments == 2
    with pytest.raises(GithubException) as caught:
        listed[1].edit("hijack")
    assert caught.value.status == 403
    assert caught.value.data["message"] == "Resource not accessible by integration"
    listed[0].edit("<!-- marker -->\nnew summary")
    assert fake.issue_comments[0]["body"] == "<!-- marker -->\nnew summary"


# -- failures --------------------------------------------------------------------------------


def test_a_fork_pull_request_gets_403_on_every_write(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, author="alice", fork=True) as fake:
        pr = pull(fake)
        assert pr.head.repo.full_name == "alice/shop" and pr.head.repo.fork is True
        assert pr.base.repo.full_name == "acme/shop" and pr.head.label == "alice:feature"
        event = fake.event_payload()  # what GITHUB_EVENT_PATH holds
        assert event["repository"]["full_name"] == "acme/shop"
        assert event["pull_request"]["head"]["repo"]["fork"] is True
        assert len(list(pr.get_files())) == 5  # reading works
        for write in (
            lambda: post_review(pr, [{"path": "app.py", "line": 31, "body": "x"}]),
            lambda: pr.create_issue_comment("summary"),
        ):
            with pytest.raises(GithubException) as caught:
                write()
            assert caught.value.status == 403
            assert caught.value.data["message"] == "Resource not accessible by integration"
            assert "pull_requests=write" in caught.value.headers["x-accepted-github-permissions"]
        assert fake.reviews == [] and fake.issue_comments == []
        fake.read_only = False  # e.g. pull_request_target
        assert pr.create_issue_comment("summary").body == "summary"


def test_an_injected_500_on_posting_a_review(fake: FakeGitHub) -> None:
    pr = pull(fake)
    comments = [{"path": "app.py", "line": 31, "body": "x"}]
    fake.inject("POST", "*/pulls/*/reviews", 500)
    with pytest.raises(GithubException) as caught:
        post_review(pr, comments)
    assert (caught.value.status, caught.value.data["message"]) == (500, "Server Error")
    assert fake.reviews == []
    fake.inject("POST", "*/pulls/*/reviews", 502, persist=True)
    with pytest.raises(GithubException) as caught:
        post_review(pr, comments)
    assert caught.value.status == 502 and "Unicorn" in caught.value.data["data"]  # HTML body
    assert len(fake.reviews) == 1 and len(list(pr.get_reviews())) == 1  # stored anyway
    assert post_review(pr, comments).state == "COMMENTED"  # injections are used up
    fake.assert_no_failures()


def test_pygithubs_default_retry_reposts_a_review_after_a_5xx(fake: FakeGitHub) -> None:
    # GithubRetry retries POST on 5xx: after a late failure GitHub already stored the review,
    # so the retry makes a duplicate. The client must list reviews before posting again.
    pr = pull(fake, retry=GithubRetry(total=2, backoff_factor=0))
    fake.inject("POST", "*/pulls/*/reviews", 502, persist=True)
    post_review(pr, [{"path": "app.py", "line": 31, "body": "x"}])
    assert len(fake.requests_to("POST", "*/pulls/*/reviews")) == 2
    assert len(fake.reviews) == 2


def test_rate_limits_primary_and_secondary(fake: FakeGitHub) -> None:
    gh = client(fake)
    fake.rate_limit("GET", "/repos/acme/shop")
    with pytest.raises(github.RateLimitExceededException) as primary:
        gh.get_repo("acme/shop")
    assert primary.value.status == 403
    assert primary.value.data["message"] == "API rate limit exceeded for installation ID 1."
    assert primary.value.headers["x-ratelimit-remaining"] == "0"
    assert int(primary.value.headers["x-ratelimit-reset"]) > 0
    fake.rate_limit("POST", "*/issues/*/comments", status=429, secondary=True, retry_after=7)
    pr = gh.get_repo("acme/shop").get_pull(7)
    with pytest.raises(GithubException) as secondary:
        pr.create_issue_comment("summary")
    assert type(secondary.value) is GithubException and secondary.value.status == 429
    assert secondary.value.headers["retry-after"] == "7"
    assert secondary.value.data["message"].startswith("You have exceeded a secondary rate limit.")
    assert gh.rate_limiting[0] < gh.rate_limiting[1] == 1000


def test_tokens_are_checked_when_configured(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, token="right") as fake:
        with pytest.raises(github.BadCredentialsException) as caught:
            client(fake, token="wrong").get_repo("acme/shop")
        assert caught.value.data == {
            "message": "Bad credentials",
            "documentation_url": "https://docs.github.com/rest",
            "status": "401",
        }
        assert client(fake, token="right").get_repo("acme/shop").name == "shop"
        status, _, _ = raw(f"{fake.base_url}/repos/acme/shop", Authorization="Bearer right")
        assert status == 200
        assert raw(f"{fake.base_url}/repos/acme/shop")[0] == 401


def test_an_installation_token_cannot_read_the_authenticated_user(fake: FakeGitHub) -> None:
    # `gh.get_user().login` is no way to learn the bot's login under GITHUB_TOKEN.
    with pytest.raises(GithubException) as caught:
        _ = client(fake).get_user().login
    assert caught.value.status == 403


def test_unknown_routes_are_404_and_failures(fake: FakeGitHub) -> None:
    status, headers, body = raw(
        f"{fake.base_url}/repos/acme/shop/check-runs", Authorization="token t"
    )
    assert status == 404 and json.loads(body)["message"] == "Not Found"
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert len(fake.failures) == 1 and "check-runs" in fake.failures[0]
    with pytest.raises(github.UnknownObjectException):
        client(fake).get_repo("acme/other")
    with pytest.raises(github.UnknownObjectException):
        client(fake).get_repo("acme/shop").get_pull(8)
    assert len(fake.failures) == 1  # GitHub's own 404s are not failures of the fake


def test_every_response_carries_githubs_headers(fake: FakeGitHub) -> None:
    _, first, _ = raw(f"{fake.base_url}/repos/acme/shop", Authorization="token t")
    _, second, _ = raw(f"{fake.base_url}/repos/acme/shop", Authorization="token t")
    assert first["content-type"] == "application/json; charset=utf-8"
    assert first["x-ratelimit-limit"] == "1000" and first["x-ratelimit-resource"] == "core"
    assert int(first["x-ratelimit-remaining"]) == int(second["x-ratelimit-remaining"]) + 1
    assert first["x-github-request-id"] != second["x-github-request-id"]
    assert fake.requests[0].headers["authorization"] == "token t"


# -- GHES, new pushes, the command line -----------------------------------------------------


def test_a_ghes_prefix_works_end_to_end(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, prefix="/api/v3") as fake:
        assert fake.base_url.endswith("/api/v3")
        pr = pull(fake)
        assert pr.url == f"{fake.base_url}/repos/acme/shop/pulls/7"
        assert len(list(pr.get_files())) == 5
        post_review(pr, [{"path": "new.py", "line": 1, "body": "x"}])
        pr.create_issue_comment("summary")
        assert all(r.path.startswith("/api/v3/") for r in fake.requests)
        assert raw(f"{fake.url}/repos/acme/shop", Authorization="token t")[0] == 404  # no prefix
        assert len(fake.failures) == 1


def test_set_head_serves_the_new_diff_and_keeps_old_comments(
    fake: FakeGitHub, pull_repo: GitRepo
) -> None:
    pr = pull(fake)
    first_head = fake.head_sha
    post_review(
        pr,
        [
            {"path": "app.py", "line": 31, "body": "on A"},
            {"path": "app.py", "line": 33, "start_line": 32, "body": "below B"},
            {"path": "app.py", "line": 34, "body": "shifted"},
            {"path": "new.py", "line": 1, "body": "hi"},
        ],
    )
    pull_repo.write(
        "app.py",
        APP.replace("line 5\n", "line 5 changed\n").replace("line 30\n", "line 30\nadded C\n"),
    )
    second_head = pull_repo.commit("second push")
    fake.set_head(second_head)
    pr = pull(fake)
    assert pr.head.sha == second_head and pr.commits == 2
    _, data = client(fake).requester.requestJsonAndCheck(
        "GET", pr.url, headers={"Accept": "application/vnd.github.v3.diff"}
    )
    assert "+added C" in data["data"] and "+added A" not in data["data"]
    comments = {c.body: c for c in pr.get_review_comments()}
    assert comments["on A"].line is None and comments["on A"].original_line == 31  # outdated
    assert comments["on A"].original_commit_id == first_head
    assert comments["hi"].line == 1 and comments["hi"].commit_id == second_head  # still current
    assert comments["below B"].line is None  # its first line ("added B") is gone
    # Two added lines became one: "line 32" moved up, and the comment follows it.
    assert (comments["shifted"].line, comments["shifted"].original_line) == (33, 34)
    # An old head is still part of the pull request: anchors are checked in its diff.
    old = pull(fake).base.repo.get_commit(first_head)
    assert pr.create_review(
        commit=old,
        body="late",
        event="COMMENT",
        comments=[{"path": "app.py", "line": 35, "body": "B"}],
    )
    with pytest.raises(GithubException):
        post_review(pr, [{"path": "app.py", "line": 35, "body": "now outside"}])
    assert len(fake.reviews) == 2


def test_expect_commit_id_records_a_review_posted_without_one(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, expect_commit_id=True) as fake:
        pull(fake).create_review(body="no commit", event="COMMENT")
    assert len(fake.failures) == 1 and "commit_id" in fake.failures[0]


def test_the_module_runs_as_a_program(pull_repo: GitRepo, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    command = [sys.executable, "-m", "reviewer.testing.fake_github", str(pull_repo.root)]
    process = subprocess.Popen(
        [*command, "--number", "7", "--state", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        body = {"body": "summary"}
        status, _, _ = raw(
            f"{base_url}/repos/acme/shop/issues/7/comments", "POST", body, Authorization="token t"
        )
        assert status == 201
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0
    assert json.loads(state.read_text())["issue_comments"][0]["body"] == "summary"


def test_an_empty_diff_reaches_pygithub_as_none(pull_repo: GitRepo) -> None:
    # PyGithub parses an empty body as None, not as {"data": ""}: the client must cope.
    main = pull_repo.git("rev-parse", "main").strip()
    with FakeGitHub(pull_repo.root, number=7, head_sha=main) as fake:
        gh = client(fake)
        pr = gh.get_repo("acme/shop").get_pull(7)
        _, data = gh.requester.requestJsonAndCheck(
            "GET", pr.url, headers={"Accept": "application/vnd.github.v3.diff"}
        )
        assert data is None
        assert (pr.changed_files, list(pr.get_files())) == (0, [])


def test_a_delayed_answer_times_the_client_out(fake: FakeGitHub) -> None:
    fake.inject("GET", "/repos/acme/shop", 200, {"late": True}, delay=5)
    with pytest.raises(TimeoutError):
        request = urllib.request.Request(
            f"{fake.base_url}/repos/acme/shop", headers={"Authorization": "token t"}
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        opener.open(request, timeout=0.2)
    assert fake.requests[0].status == 200  # recorded; close() drops the late answer


def test_the_program_writes_the_event_and_the_env_and_takes_a_push(
    pull_repo: GitRepo, tmp_path: Path
) -> None:
    """What a person needs to try `reviewer github` locally: the `pull_request` payload as
    GitHub sends it (protocols.md §1.2: action, number, pull_request with head/base sha, ref
    and repo, repository, sender; a push is a `synchronize` with `before` and `after`), the
    run's environment (§1.1) and a push between runs."""
    event, env_file, state = tmp_path / "event.json", tmp_path / "gh.env", tmp_path / "state.json"
    command = [sys.executable, "-m", "reviewer.testing.fake_github", str(pull_repo.root)]
    options = ["--number", "7", "--token", "ghs_local", "--event", str(event)]
    options += ["--env", str(env_file), "--state", str(state)]
    process = subprocess.Popen(
        [*command, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        printed = "".join(process.stdout.readline() for _ in range(10))
        assert printed == env_file.read_text()
        env = dict(shlex.split(line)[1].split("=", 1) for line in printed.splitlines())
        first_head = pull_repo.head()
        main_sha = pull_repo.git("rev-parse", "main").strip()
        assert env == {
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_REPOSITORY": "acme/shop",
            "GITHUB_API_URL": base_url,
            "GITHUB_SERVER_URL": base_url,
            "GITHUB_TOKEN": "ghs_local",
            "GITHUB_WORKSPACE": str(pull_repo.root.resolve()),
            "GITHUB_BASE_REF": "main",
            "GITHUB_HEAD_REF": "feature",
            "RUNNER_TEMP": str(pull_repo.root.resolve() / ".git" / "fake-runner-temp"),
            "GITHUB_EVENT_PATH": str(event.resolve()),
        }
        payload = json.loads(event.read_text())
        assert set(payload) == {"action", "number", "pull_request", "repository", "sender"}
        assert (payload["action"], payload["number"]) == ("opened", 7)
        head, base = payload["pull_request"]["head"], payload["pull_request"]["base"]
        assert (head["sha"], head["ref"], head["repo"]["full_name"]) == (
            first_head,
            "feature",
            "acme/shop",
        )
        assert (base["sha"], base["ref"]) == (main_sha, "main")
        assert payload["repository"]["full_name"] == "acme/shop"
        assert payload["sender"]["login"] == "octocat"
        # `reviewer github` reads this run as GitHub's own.
        context = load_context(env)
        assert (context.pull_request.number, context.pull_request.head_sha) == (7, first_head)

        # The state file follows every write, not only the exit.
        body = {"body": "a person's comment"}
        status, _, _ = raw(
            f"{base_url}/repos/acme/shop/issues/7/comments",
            "POST",
            body,
            Authorization="token ghs_local",
        )
        assert status == 201
        assert json.loads(state.read_text())["issue_comments"][0]["body"] == "a person's comment"

        pusher = [sys.executable, "-m", "reviewer.testing.fake_github", "push"]
        shell_env = {**os.environ, "GITHUB_API_URL": base_url}
        pull_repo.write("new.py", "print('hi again')\n")
        second_head = pull_repo.commit("Say hi again")
        pushed = subprocess.run(pusher, env=shell_env, capture_output=True, text=True)
        assert pushed.returncode == 0, pushed.stderr
        assert second_head[:12] in pushed.stdout
        payload = json.loads(event.read_text())
        assert (payload["action"], payload["before"], payload["after"]) == (
            "synchronize",
            first_head,
            second_head,
        )
        assert payload["pull_request"]["head"]["sha"] == second_head
        status, _, data = raw(
            f"{base_url}/repos/acme/shop/pulls/7", Authorization="token ghs_local"
        )
        assert json.loads(data)["head"]["sha"] == second_head
        assert json.loads(state.read_text())["head_sha"] == second_head

        # Nothing new to push, and no fake to push to: one line each that says what to do.
        again = subprocess.run(pusher, env=shell_env, capture_output=True, text=True)
        assert again.returncode == 2 and "nothing to push" in again.stderr
        no_url = {k: v for k, v in shell_env.items() if k != "GITHUB_API_URL"}
        lost = subprocess.run(pusher, env=no_url, capture_output=True, text=True)
        assert lost.returncode == 2 and "--url" in lost.stderr
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0


def test_the_program_lets_people_act_between_runs(pull_repo: GitRepo, tmp_path: Path) -> None:
    """`fake_github act`: people reply, resolve and react between runs, and a question can
    become the next run's event (the env file's GITHUB_EVENT_NAME follows, until a push)."""
    event, env_file, state = tmp_path / "event.json", tmp_path / "gh.env", tmp_path / "state.json"
    command = [sys.executable, "-m", "reviewer.testing.fake_github", str(pull_repo.root)]
    options = ["--number", "7", "--event", str(event), "--env", str(env_file)]
    process = subprocess.Popen(
        [*command, *options, "--state", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        status, _, data = raw(
            f"{base_url}/repos/acme/shop/pulls/7/comments",
            "POST",
            {"body": "Off by one.", "commit_id": pull_repo.head(), "path": "app.py",
             "line": 5, "side": "RIGHT"},
            Authorization="token t",
        )  # fmt: skip
        assert status == 201, data
        root = json.loads(data)["id"]
        shell = {**os.environ, "GITHUB_API_URL": base_url}

        def act(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "reviewer.testing.fake_github", "act", *args],
                env=shell, capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip

        asked = act("alice", "--trigger", "reply", str(root), "@reviewer why?")
        assert asked.returncode == 0, asked.stderr
        payload = json.loads(event.read_text())
        assert set(payload) >= {"action", "comment", "pull_request", "repository", "sender"}
        assert payload["comment"]["in_reply_to_id"] == root
        assert payload["comment"]["body"] == "@reviewer why?"
        assert "export GITHUB_EVENT_NAME=pull_request_review_comment\n" in env_file.read_text()
        # A reader may not resolve: GitHub's refusal, in one line.
        refused = act("reader", "--role", "read", "resolve", str(root))
        assert refused.returncode == 2 and "may not resolve" in refused.stderr
        assert act("maintainer", "--role", "write", "react", str(root)).returncode == 0
        assert act("maintainer", "resolve", str(root)).returncode == 0
        saved = json.loads(state.read_text())
        assert [c["user"]["login"] for c in saved["review_comments"]][1:] == ["alice"]
        # A push makes the run a pull_request run again.
        pull_repo.write("new.py", "x = 1\n")
        pull_repo.commit("more")
        pusher = [sys.executable, "-m", "reviewer.testing.fake_github", "push"]
        assert subprocess.run(pusher, env=shell, capture_output=True).returncode == 0
        assert "export GITHUB_EVENT_NAME=pull_request\n" in env_file.read_text()
        assert json.loads(event.read_text())["action"] == "synchronize"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_program_started_again_on_its_state_file_keeps_the_conversation(
    pull_repo: GitRepo, tmp_path: Path
) -> None:
    """Stopping `fake_github` between runs and starting it with the same `--state` lost the
    recorded conversation (the file was rewritten empty): now reviews, comments, a thread's
    resolution, reactions, people's roles, the ids and the pushed head come back."""
    event, state = tmp_path / "event.json", tmp_path / "state.json"
    command = [sys.executable, "-m", "reviewer.testing.fake_github", str(pull_repo.root),
               "--number", "7", "--event", str(event), "--state", str(state)]  # fmt: skip

    def start() -> tuple[subprocess.Popen[str], str, list[str]]:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        said = []
        while not (line := process.stdout.readline().strip()).startswith("http"):
            said.append(line)
        return process, line, said

    def act(base_url: str, *args: str) -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "reviewer.testing.fake_github", "act", *args],
            env={**os.environ, "GITHUB_API_URL": base_url},
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr

    process, base_url, said = start()
    try:
        assert said == []  # nothing to restore the first time
        status, _, data = raw(
            f"{base_url}/repos/acme/shop/pulls/7/comments",
            "POST",
            {"body": "Off by one.", "commit_id": pull_repo.head(), "path": "app.py",
             "line": 5, "side": "RIGHT"},
            Authorization="token t",
        )  # fmt: skip
        assert status == 201, data
        root = json.loads(data)["id"]
        act(base_url, "bob", "--role", "write", "react", str(root), "-1")
        act(base_url, "bob", "resolve", str(root))
        act(base_url, "alice", "comment", "Thanks!")
        pull_repo.write("new.py", "x = 1\n")
        pushed = pull_repo.commit("more")
        pusher = [sys.executable, "-m", "reviewer.testing.fake_github", "push"]
        shell = {**os.environ, "GITHUB_API_URL": base_url}
        assert subprocess.run(pusher, env=shell, capture_output=True).returncode == 0
    finally:
        process.terminate()
        process.wait(timeout=10)
    before = json.loads(state.read_text())

    process, base_url, said = start()
    try:
        assert said == [f"restored 1 review, 1 review comment and 1 comment from {state}"]
        after = json.loads(state.read_text())
        assert after["head_sha"] == pushed and json.loads(event.read_text())["action"] == (
            "synchronize"
        )
        for key in ("review_comments", "issue_comments"):
            assert [c["id"] for c in after[key]] == [c["id"] for c in before[key]]
        memory = after["_memory"]
        assert memory["threads"][str(root)]["is_resolved"] is True
        assert [(r["user"], r["content"]) for r in memory["reactions"]] == [("bob", "-1")]
        assert memory["collaborators"] == {"bob": "write"}
        # New comments take new ids, after the restored ones.
        act(base_url, "alice", "comment", "One more.")
        ids = [c["id"] for c in json.loads(state.read_text())["issue_comments"]]
        assert len(ids) == 2 and ids[1] > ids[0]
    finally:
        process.terminate()
        process.wait(timeout=10)
