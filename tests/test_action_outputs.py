"""What `reviewer github` leaves besides what it posts: the outputs `tokens`, `cost` and
`sarif` (a SARIF file on every run that reviewed), the tokens and cost in the summary
comment, and the `dry-run` input (the plan only: no model asked, nothing posted).

Built on the harness of tests/test_action.py: real git, the real PyGithub and openai
clients over HTTP to the fake GitHub and the scripted model. The usage the fake model
reports is set by hand (OpenAI's `usage` object, `prompt_tokens_details.cached_tokens`:
/work/shared/research/protocols.md), so the expected cost is worked out here, not read back.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reviewer.forge.run_files import sarif_path
from reviewer.report.github import summary_comment
from reviewer.testing import reply, tool_call
from reviewer.testing.fake_github import FakeGitHub
from tests.conftest import GitRepo
from tests.test_action import (  # noqa: F401  (github is a fixture)
    API_KEY,
    BASE_APP,
    HEAD_APP,
    Run,
    finding,
    github,
    run_action,
)
from tests.test_reports import COMPLETE

DATA = Path(__file__).parent / "data"
# The price the repository's settings give fake-model (USD per million tokens).
SETTINGS = """\
[prices."fake-model"]
input = 2.5
cached_input = 1.25
output = 10.0
"""
# What the fake model says it counted for the one request of a review.
USAGE = {
    "prompt_tokens": 100_000,
    "completion_tokens": 5_000,
    "prompt_tokens_details": {"cached_tokens": 20_000},
}
# 80,000 uncached prompt tokens at $2.50, 20,000 cached at $1.25, 5,000 completion at $10.00
# per million: $0.20 + $0.025 + $0.05.
COST = "0.2750"
TOKENS = "105000"


@pytest.fixture
def pr_repo(repo: GitRepo) -> GitRepo:
    """tests/test_action.py's pull request, with a price for fake-model in the settings of
    its base revision (where the Action reads them)."""
    repo.write("app.py", BASE_APP)
    repo.write(".reviewer.toml", SETTINGS)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", HEAD_APP)
    repo.commit("Add average")
    return repo


def counted_submit(*findings: dict[str, Any]) -> dict[str, Any]:
    arguments = {"summary": "Adds `average`.", "findings": list(findings)}
    return reply(tool_calls=[tool_call("submit_review", arguments)], usage=USAGE)


def review(github: FakeGitHub, repo: GitRepo, tmp_path: Path, monkeypatch, capsys, **env) -> Run:  # noqa: F811
    folder = tmp_path / f"run{len(list(tmp_path.glob('run*'))) + 1}"
    folder.mkdir()
    return run_action(
        github, repo.root, [counted_submit(finding())], folder, monkeypatch, capsys, **env
    )


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Validator:
    # As in tests/test_reports.py: the official schema, no check_schema (see data/README.md).
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def test_the_outputs_say_the_tokens_and_the_cost_and_name_a_valid_sarif_file(
    github: FakeGitHub,  # noqa: F811
    pr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch,
    capsys,
    sarif_validator: jsonschema.Validator,
) -> None:
    run = review(github, pr_repo, tmp_path, monkeypatch, capsys)
    assert run.code == 0, run.err
    assert (run.outputs["tokens"], run.outputs["cost"]) == (TOKENS, COST)
    # The SARIF log sits beside the JSON report, valid, with the open finding.
    report, sarif = Path(run.outputs["report"]), Path(run.outputs["sarif"])
    assert sarif == report.with_suffix(".sarif") and sarif.parent == tmp_path / "run1"
    log = json.loads(sarif.read_text(encoding="utf-8"))
    assert [e.message for e in sarif_validator.iter_errors(log)] == []
    (result,) = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert (location["artifactLocation"]["uri"], location["region"]["startLine"]) == ("app.py", 6)
    # The log says what the run cost, before its last line.
    assert "105,000 tokens" in run.err and "cost $0.275 " in run.err


def test_the_summary_comment_shows_the_tokens_and_the_cost(
    github: FakeGitHub,  # noqa: F811
    pr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch,
    capsys,
) -> None:
    review(github, pr_repo, tmp_path, monkeypatch, capsys)
    (summary,) = github.issue_comments
    assert (
        "105,000 tokens (100,000 prompt, 20,000 of them cached + 5,000 completion)"
        in (summary["body"])
    )
    assert "cost $0.275 (at $2.50 input, $1.25 cached, $10.00 output" in summary["body"]


def test_without_a_price_the_cost_is_empty_and_everything_says_tokens_only(
    github: FakeGitHub,  # noqa: F811
    pr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch,
    capsys,
) -> None:
    run = review(github, pr_repo, tmp_path, monkeypatch, capsys, REVIEWER_MODEL="unpriced-model")
    assert run.code == 0, run.err
    assert (run.outputs["tokens"], run.outputs["cost"]) == (TOKENS, "")
    no_price = "tokens only: no price is known for 'unpriced-model'"
    (summary,) = github.issue_comments
    for shown in (summary["body"], run.summary, run.err):
        assert "105,000 tokens" in shown and no_price in shown
        assert "cost $" not in shown


def test_a_report_path_gets_its_sarif_file_beside_it(
    github: FakeGitHub,  # noqa: F811
    pr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch,
    capsys,
) -> None:
    chosen = tmp_path / "reports" / "review.json"
    run = review(github, pr_repo, tmp_path, monkeypatch, capsys, REVIEWER_REPORT=str(chosen))
    assert run.outputs["report"] == str(chosen)
    assert run.outputs["sarif"] == str(tmp_path / "reports" / "review.sarif")
    assert Path(run.outputs["sarif"]).is_file()
    # A report named .sarif does not lose its JSON to the SARIF log.
    assert sarif_path(Path("out/r.sarif")) == Path("out/r.sarif.sarif")


def test_a_dry_run_plans_without_a_key_asks_no_model_and_posts_nothing(
    github: FakeGitHub,  # noqa: F811
    pr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch,
    capsys,
) -> None:
    first = review(github, pr_repo, tmp_path, monkeypatch, capsys)
    assert len(first.llm_bodies) == 1
    pr_repo.write("stats.py", "def median(items):\n    return sorted(items)[len(items) // 2]\n")
    github.set_head(pr_repo.commit("Add median"))
    before = [github.reviews, github.review_comments, github.issue_comments]
    writes = [r for r in github.requests if r.method != "GET"]

    run = review(
        github,
        pr_repo,
        tmp_path,
        monkeypatch,
        capsys,
        REVIEWER_DRY_RUN="true",
        OPENAI_API_KEY="",
        # No API key: the state-key reads the memory the first run signed with it.
        REVIEWER_STATE_KEY=API_KEY,
    )
    assert run.code == 0, run.err
    assert run.llm_bodies == []  # the fake model was sent nothing
    assert [github.reviews, github.review_comments, github.issue_comments] == before
    assert [r for r in github.requests if r.method != "GET"] == writes
    assert run.outputs == {"status": "dry-run", "report": run.outputs["report"]}
    # What this run would review: the file pushed since the first review, not all of it.
    plan = json.loads(Path(run.outputs["report"]).read_text())
    assert plan["dry_run"] is True and plan["head"] == pr_repo.head()
    assert [part["files"] for part in plan["parts"]] == [["stats.py"]]
    assert "    stats.py" in run.err and "no model was asked" in run.err
    assert run.summary.startswith("## AI review: dry run") and "stats.py" in run.summary
    assert "Estimate:" in run.summary


def test_a_dry_run_value_that_is_not_true_or_false_is_a_clear_error(
    github: FakeGitHub,  # noqa: F811
    pr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch,
    capsys,
) -> None:
    run = review(github, pr_repo, tmp_path, monkeypatch, capsys, REVIEWER_DRY_RUN="ture")
    assert run.code == 2 and run.llm_bodies == [] and github.reviews == []
    assert "dry-run input) is 'ture': set it to true or false" in run.err
    assert run.outputs["status"] == "not-reviewed"


def test_the_cost_line_of_the_summary_comment_is_made_safe() -> None:
    """The model's name comes from the settings: in the cost line it must not mention
    anyone nor carry HTML, like every other value of the comment."""
    hostile = replace(COMPLETE, model="@acme/admins <img src=x onerror=alert(1)>", price=None)
    body = summary_comment(hostile, state_line="<!-- reviewer:state x -->")
    footer = next(line for line in body.splitlines() if line.startswith("<sub>"))
    assert "tokens only: no price is known for" in footer
    assert "<img" not in footer and "@acme/admins" not in footer
