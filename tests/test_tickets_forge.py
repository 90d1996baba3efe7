# ruff: noqa: F811  (the fixtures imported from test_action and test_gitlab_flow)
"""The ticket a change names, read through the forge's own API with the run's token (issue
34, section 1): GitHub issues by the Action over PyGithub to the fake GitHub (a `#N` that is
a pull request is no ticket; another repository's issue only when it is public), GitLab
issues by `reviewer gitlab` over python-gitlab to the fake GitLab (a confidential issue is
named, not read), and a local run's `--ticket URL` with the user's GITHUB_TOKEN. Every
failure is a line and an entry of `context.tickets`; the review goes on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.testing import FakeLLM
from reviewer.testing.fake_github import FakeGitHub
from reviewer.testing.fake_gitlab import FakeGitLab
from reviewer.testing.fake_jira import FakeJira
from tests.conftest import GitRepo
from tests.gitlab_fixtures import make_merge_request
from tests.test_action import TOKEN, pr_repo, run_action, submit  # noqa: F401 (fixture)
from tests.test_gitlab_flow import MergeRequest

AUTHOR = "octocat"  # who opens the fake's pull request
JIRA_TOKEN = "jira-" + "T0ken" * 5
JIRA_EMAIL = "dev@acme.test"
ISSUE_3 = "Averages must be computed over prices in cents, never floats."


BODY = (
    "Fixes #3; follows #7 (this pull request), other/public#5 and other/private#6; "
    "not #8. Also https://github.com/acme/shop/issues/3 (github.com, not this forge)."
)


@contextmanager
def pull_naming(pr_repo: GitRepo, body: str) -> Iterator[FakeGitHub]:
    """Pull request #7 of acme/shop, opened by a writer, whose description is `body`; issue
    #3 of its own, other/public#5 and other/private#6 (a private repository)."""
    with FakeGitHub(
        pr_repo.root,
        repository="acme/shop",
        number=7,
        base_sha=pr_repo.git("rev-parse", "main").strip(),
        head_sha=pr_repo.head(),
        title="Add average",
        body=body,
        token=TOKEN,
    ) as fake:
        fake.add_issue(3, "Averages in cents", ISSUE_3)
        fake.add_repository("other/public")
        fake.add_issue(5, "Shared helpers", "Keep helpers pure.", repository="other/public")
        fake.add_repository("other/private", private=True)
        fake.add_issue(6, "Secret plan", "Private roadmap text.", repository="other/private")
        fake.add_collaborator(AUTHOR, "write")  # tickets named by a writer's change are read
        yield fake


@pytest.fixture
def ticketed(pr_repo: GitRepo) -> Iterator[FakeGitHub]:
    with pull_naming(pr_repo, BODY) as fake:
        yield fake


def test_the_action_reads_the_pull_requests_issues_with_its_token(
    ticketed: FakeGitHub, pr_repo: GitRepo, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    ticketed.reads_private = True  # a personal token that reaches the private repository
    run = run_action(ticketed, pr_repo.root, [submit()], tmp_path, monkeypatch, capsys,
                     REVIEWER_MAX_TICKETS="6")  # fmt: skip
    assert run.code == 0
    ticketed.assert_no_failures()
    report = json.loads(Path(run.outputs["report"]).read_text())
    tickets = {t["key"]: t for t in report["context"]["tickets"]}
    assert list(tickets) == ["#3", "#7", "other/public#5", "other/private#6", "#8",
                             "https://github.com/acme/shop/issues/3"]  # fmt: skip
    assert tickets["#3"]["read"] and tickets["#3"]["title"] == "Averages in cents"
    assert tickets["#3"]["url"] == f"{ticketed.pull['base']['repo']['html_url']}/issues/3"
    assert tickets["#7"]["why"] == "a pull request, not an issue: its text is no ticket"
    assert tickets["other/public#5"]["read"] is True
    assert "other/private, which is not public" in tickets["other/private#6"]["why"]
    assert "(404" in tickets["#8"]["why"]
    assert "not a forge this run reads" in tickets["https://github.com/acme/shop/issues/3"]["why"]
    task = run.llm_bodies[0]["messages"][1]["content"]
    assert ISSUE_3 in task and "Keep helpers pure." in task
    assert "Private roadmap text." not in json.dumps(run.llm_bodies)
    # Read with the run's token, through the REST issues endpoint; nothing written for it.
    asked = [r.path for r in ticketed.requests if "/issues/" in r.path and r.method == "GET"]
    assert "/repos/acme/shop/issues/3" in asked and "/repos/other/private/issues/6" in asked
    assert TOKEN not in json.dumps(run.llm_bodies) + json.dumps(report) + run.err


def test_a_private_repository_the_token_cannot_see_is_a_404_and_the_review_goes_on(
    ticketed: FakeGitHub, pr_repo: GitRepo, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    run = run_action(ticketed, pr_repo.root, [submit()], tmp_path, monkeypatch, capsys,
                     REVIEWER_MAX_TICKETS="4")  # fmt: skip
    assert run.code == 0
    report = json.loads(Path(run.outputs["report"]).read_text())
    tickets = {t["key"]: t for t in report["context"]["tickets"]}
    assert "(404" in tickets["other/private#6"]["why"]
    # #8 and the github.com URL are past max_tickets: counted, not listed.
    assert list(tickets) == ["#3", "#7", "other/public#5", "other/private#6"]
    assert report["context"]["unlisted"] == 2
    assert "ticket other/private#6 not read: GitHub could not find" in run.err
    assert "2 more tickets named by the change were not read: max_tickets is 4" in run.err


def test_a_pull_request_of_a_private_repository_is_named_without_its_title(
    pr_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A `#N` of another repository that is both a pull request and not public: what is
    restricted is checked first, so not even its title reaches the report or the log."""
    secret_pull = {
        "number": 9, "title": "Acquire Globex quietly", "body": "Private roadmap text.",
        "state": "open", "html_url": "https://github.example/other/private/pull/9",
        "pull_request": {"url": "https://api.github.example/repos/other/private/pulls/9"},
    }  # fmt: skip
    with pull_naming(pr_repo, "Follows other/private#9.") as github:
        github.reads_private = True
        github.inject("GET", "/repos/other/private/issues/9", 200, secret_pull, times=5)
        run = run_action(github, pr_repo.root, [submit()], tmp_path, monkeypatch, capsys)
    assert run.code == 0
    report = json.loads(Path(run.outputs["report"]).read_text())
    (ticket,) = report["context"]["tickets"]
    assert (ticket["key"], ticket["read"], ticket["title"], ticket["status"]) == (
        "other/private#9", False, "", "")
    assert "other/private, which is not public" in ticket["why"]
    assert "Acquire Globex" not in json.dumps(report) + run.err + json.dumps(run.llm_bodies)


def test_issue_reads_wait_out_github_rate_limits_like_every_other_call(
    ticketed: FakeGitHub, pr_repo: GitRepo, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A secondary rate limit on the issue (a 403 with retry-after) and a primary one on the
    other repository's visibility (a 429 at x-ratelimit-remaining 0): each waited out as
    the client's other reads are, logged, and the tickets read."""
    waits: list[float] = []
    monkeypatch.setattr("reviewer.github.client._sleep", waits.append)
    ticketed.rate_limit("GET", "/repos/acme/shop/issues/3", secondary=True, retry_after=7)
    ticketed.rate_limit("GET", "/repos/other/public", status=429, reset_in=30)
    run = run_action(ticketed, pr_repo.root, [submit()], tmp_path, monkeypatch, capsys,
                     REVIEWER_MAX_TICKETS="3")  # fmt: skip
    assert run.code == 0
    report = json.loads(Path(run.outputs["report"]).read_text())
    tickets = {t["key"]: t for t in report["context"]["tickets"]}
    assert tickets["#3"]["read"] is True and tickets["other/public#5"]["read"] is True
    assert len(waits) == 2 and waits[0] == 7 and 0 < waits[1] <= 31
    assert run.err.count("rate limit") >= 2 and "retrying in 7 s" in run.err
    asked = [(r.path, r.status) for r in ticketed.requests if r.method == "GET"]
    assert asked.count(("/repos/acme/shop/issues/3", 403)) == 1
    assert asked.count(("/repos/acme/shop/issues/3", 200)) == 1


@pytest.mark.parametrize(("role", "reads"), [("read", False), ("triage", False),
                                             ("write", True), ("maintain", True)])
def test_tickets_named_by_a_change_are_read_only_when_its_author_may_write(
    role: str, reads: bool, pr_repo: GitRepo, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """On a public repository anyone may open a pull request naming PAY-42: the team's Jira
    token would read it into a review posted in public. The tickets a change's own text
    names are read only when its author may write to the repository (GitHub's permission:
    admin, maintain or write); otherwise none is asked, and one line says so."""
    with FakeJira(kind="cloud", email=JIRA_EMAIL, token=JIRA_TOKEN) as jira, \
            pull_naming(pr_repo, "Fixes #3, per PAY-42.") as github:  # fmt: skip
        jira.add_issue("PAY-42", "Refunds", "Refund emails carry the partner's margin.")
        github.add_collaborator(AUTHOR, role)
        run = run_action(github, pr_repo.root, [submit()], tmp_path, monkeypatch, capsys,
                         REVIEWER_JIRA_URL=jira.url, REVIEWER_JIRA_TOKEN=JIRA_TOKEN,
                         REVIEWER_JIRA_EMAIL=JIRA_EMAIL, REVIEWER_JIRA_PROJECTS="PAY")  # fmt: skip
        jira_asked = [r.path for r in jira.requests]
        asked = [r.path for r in github.requests if r.method == "GET"]
    assert run.code == 0
    context = json.loads(Path(run.outputs["report"]).read_text())["context"]
    task = run.llm_bodies[0]["messages"][1]["content"]
    assert f"/repos/acme/shop/collaborators/{AUTHOR}/permission" in asked
    if reads:
        assert [(t["key"], t["read"]) for t in context["tickets"]] == [("#3", True),
                                                                        ("PAY-42", True)]
        assert ISSUE_3 in task and "partner's margin" in task
        return
    said = (f"2 tickets named by the change were not read: its author ({AUTHOR}) cannot write "
            "to the repository")  # fmt: skip
    assert context == {"tickets": [], "unlisted": 2, "notes": [said]}
    assert jira_asked == [] and "/repos/acme/shop/issues/3" not in asked
    assert ISSUE_3 not in task and "partner's margin" not in task
    assert "The change names 2 tickets, none of which could be read here" in task
    assert run.err.count(said) == 1


@pytest.fixture
def gitlab_mr(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[MergeRequest]:  # fmt: skip
    make_merge_request(repo)
    description = "Closes #4. Related: #5, #99 and acme/other#2."
    with FakeGitLab(repo.root, project_id=7, iid=1, description=description) as fake:
        fake.add_issue(4, "Number the lines", "Each changed line keeps its number.")
        fake.add_issue(5, "Embargoed", "A security fix nobody may see yet.", confidential=True)
        yield MergeRequest(fake, repo, tmp_path, monkeypatch, capsys)


def test_a_gitlab_merge_request_reads_its_issues_but_never_a_confidential_one(
    gitlab_mr: MergeRequest,
) -> None:
    run = gitlab_mr.run([submit()], REVIEWER_MAX_TICKETS="4")
    assert run.code == 0
    tickets = {t["key"]: t for t in run.report()["context"]["tickets"]}
    assert list(tickets) == ["#4", "#5", "#99", "acme/other#2"]
    assert tickets["#4"]["read"] and tickets["#4"]["url"].endswith("/acme/shop/-/issues/4")
    assert tickets["#5"]["why"].startswith("a confidential issue")
    assert "(404" in tickets["#99"]["why"] and "(404" in tickets["acme/other#2"]["why"]
    task = run.llm_bodies[0]["messages"][1]["content"]
    assert "Each changed line keeps its number." in task
    assert "A security fix nobody may see yet." not in json.dumps(run.llm_bodies)
    assert gitlab_mr.gitlab.token not in json.dumps(run.llm_bodies) + run.err


def test_a_merge_request_by_a_reporter_has_none_of_its_issues_read(
    gitlab_mr: MergeRequest,
) -> None:
    """GitLab: the author's role on the project (members/all) must be Developer (30) or more;
    a Reporter's merge request names tickets that are not read."""
    gitlab_mr.gitlab.add_member("alice", "reporter")
    run = gitlab_mr.run([submit()], REVIEWER_MAX_TICKETS="4")
    assert run.code == 0
    context = run.report()["context"]
    assert context["tickets"] == [] and context["unlisted"] == 4
    assert context["notes"] == ["4 tickets named by the change were not read: its author "
                                "(alice) cannot write to the repository"]  # fmt: skip
    asked = [r.path for r in gitlab_mr.gitlab.requests if "/issues/" in r.path]
    assert asked == []
    assert "Each changed line keeps its number." not in json.dumps(run.llm_bodies)


def test_without_a_token_a_gitlab_run_reads_none_of_the_tickets_its_text_names(
    gitlab_mr: MergeRequest,
) -> None:
    run = gitlab_mr.run([submit()], unset=("REVIEWER_GITLAB_TOKEN",),
                        CI_MERGE_REQUEST_DESCRIPTION="Closes #4.")  # fmt: skip
    assert run.code == 0
    # Without a token nobody's role can be asked: the change's own tickets are not read
    # (a Jira key would not be either), and the report says why.
    context = run.report()["context"]
    assert context["tickets"] == [] and context["unlisted"] == 1
    assert context["notes"] == ["1 ticket named by the change was not read: its author is "
                                "unknown (no token reads it), so whether they may write is too"]


def test_a_local_run_reads_an_issue_url_named_with_ticket_using_github_token(
    ticketed: FakeGitHub, pr_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    web = ticketed.pull["base"]["repo"]["html_url"].removesuffix("/acme/shop")
    for name, value in {
        "NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": "k", "REVIEWER_MODEL": "m",
        "REVIEWER_VERIFY": "off", "GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": ticketed.base_url,
        "GITHUB_SERVER_URL": web,
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    pr_repo.write("notes.md", f"see {web}/other/public/issues/5\n")
    pr_repo.commit(f"Per {web}/other/public/issues/5")
    report = tmp_path / "report.json"
    with FakeLLM([submit()]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(["review", "--repo", str(pr_repo.root), "--base", "main", "--quiet",
                     "--ticket", f"{web}/acme/shop/issues/3", "--format", f"json={report}"])
        bodies: list[dict[str, Any]] = llm.bodies
    assert code == 0
    tickets = {t["key"]: t for t in json.loads(report.read_text())["context"]["tickets"]}
    # Named by hand: read with the user's token. Named by a commit message: not read.
    assert tickets["acme/shop#3"]["read"] is True
    assert ISSUE_3 in bodies[0]["messages"][1]["content"]
    assert list(tickets) == ["acme/shop#3", f"{web}/other/public/issues/5"]
    assert tickets[f"{web}/other/public/issues/5"]["read"] is False
