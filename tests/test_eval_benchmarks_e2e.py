"""`reviewer eval` on a public benchmark's own file, end to end: Martian's golden comments name
a GitHub pull request; the repository is cloned (here from a local stand-in for github.com,
through REVIEWER_EVAL_GIT_BASE), reviewed by the scripted reviewer and judged by the scripted
judge, all through the real CLI, the real clients and real HTTP."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from reviewer.testing.fake_eval import JudgeRule
from tests.conftest import GitRepo
from tests.test_eval import Models, env, finding, run_eval  # noqa: F401  (env: a fixture)
from tests.test_eval_datasets import FakeGitHubHost


def test_the_martian_benchmark_is_cloned_reviewed_and_scored(
    env: dict[str, str],  # noqa: F811
    tmp_path: Path,
    make_repo: Callable[[str], GitRepo],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = FakeGitHubHost(tmp_path / "github", make_repo)
    host.repository("acme/shop", [3, 4])
    monkeypatch.setenv("REVIEWER_EVAL_GIT_BASE", host.git_base)
    golden = tmp_path / "golden_comments"
    golden.mkdir()
    (golden / "shop.json").write_text(
        json.dumps(
            [
                {
                    "pr_title": "Scale the result",
                    "url": "https://github.com/acme/shop/pull/3",
                    "comments": [
                        {"comment": "run() now returns 30, breaking callers", "severity": "High"}
                    ],
                },
                {
                    "pr_title": "Scale it again",
                    "url": "https://github.com/acme/shop/pull/4",
                    "comments": [{"comment": "VALUE is never read", "severity": "Low"}],
                },
            ]
        )
    )
    reviews = {
        "return 30": [finding("app.py", 2, "high", "Callers of run break: it returns 30")],
        "return 40": [finding("app.py", 2, "low", "Magic number 40")],
    }
    rules = [JudgeRule("breaking callers", "Callers of run break")]
    with Models(reviews, rules) as models:
        code, results = run_eval(tmp_path, str(golden), "--jobs", "2")
        reviewer_requests = len(models.reviewer.bodies)
    assert code == 0, results
    assert (results["cases_total"], results["cases_scored"], results["cases_errored"]) == (2, 2, 0)
    assert results["datasets"][0]["format"] == "martian"
    llm = results["metrics"]["llm"]
    # One hit (#3), one miss and one noise (#4): precision 1/2, recall 1/2.
    assert (llm["tp"], llm["fp"], llm["fn"]) == (1, 1, 1)
    assert llm["by_repository"]["acme/shop"]["cases"] == 2
    assert reviewer_requests == 2
    assert (tmp_path / "c").exists() and os.listdir(tmp_path / "c")
