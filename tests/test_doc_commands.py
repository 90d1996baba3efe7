"""The command blocks of README.md and docs/*.md that no other test runs, run as written in
a real repository with the package's own executables, against the shipped fake model on
127.0.0.1 (ports, the endpoint and anything on the internet are stood in for locally, and
each test says how)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reviewer.testing.fake_llm import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.docs import PROJECT, doc_block

BIN = Path(sys.executable).parent
FINDING = {
    "path": "app.py", "line": 2, "severity": "high", "category": "bug",
    "title": "The total is in cents now", "body": "Callers expect units.",
}  # fmt: skip


def submit(*findings: dict) -> dict:
    arguments = {"summary": "ok", "findings": list(findings)}
    return reply(tool_calls=[tool_call("submit_review", arguments)])


@pytest.fixture
def clone(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> Path:
    """A clone on a branch `feature` one commit past `main` (and `origin/main`), with an
    uncommitted edit."""
    origin = make_repo("origin")
    origin.write("app.py", "def total(prices):\n    return sum(prices)\n")
    origin.commit("first")
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin.root), str(work)], check=True)
    repo = GitRepo(work)
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", "def total(prices):\n    return sum(prices) * 100\n")
    repo.commit("count in cents")
    repo.write("cents.py", "CENTS = 100\n")
    repo.git("add", "cents.py")
    return work


def run(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The block in bash, `reviewer` from this test's virtualenv first on PATH."""
    ours = ("REVIEWER_", "OPENAI_", "GITHUB_")  # nothing may reach a real service
    base = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    first = env.pop("PATH_FIRST", None)
    path = f"{first}{os.pathsep}" if first else ""
    full = {**base, "PATH": f"{path}{BIN}{os.pathsep}{base['PATH']}", "REVIEWER_VERIFY": "off",
            "NO_PROXY": "127.0.0.1,localhost", **env}  # fmt: skip
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=cwd, env=full, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip


def model_env(llm: FakeLLM) -> dict[str, str]:
    return {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "x", "REVIEWER_MODEL": "m"}


def test_the_local_block_reviews_the_branch_then_the_uncommitted_edit(clone: Path) -> None:
    with FakeLLM([submit()], on_exhausted="repeat_last") as llm:
        proc = run(doc_block("local"), clone, **model_env(llm))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("Status: ") == 2 and len(llm.bodies) == 2
    prompts = [json.dumps(body) for body in llm.bodies]
    assert "sum(prices) * 100" in prompts[0] and "CENTS = 100" in prompts[1]


@pytest.mark.parametrize("name", ["ci-report", "ci-gate"])
def test_the_ci_blocks_write_their_reports_and_gate_on_a_high_finding(
    clone: Path, name: str
) -> None:
    with FakeLLM([submit(FINDING)], on_exhausted="repeat_last") as llm:
        proc = run(doc_block(name), clone, **model_env(llm))
    assert proc.returncode == 1, proc.stderr  # a high finding at --fail-on high
    sarif = json.loads((clone / "reviewer.sarif").read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["bug"]
    if name == "ci-gate":
        assert json.loads((clone / "reviewer.json").read_text())["findings"]


def test_the_dry_run_block_writes_the_plan_and_asks_no_model(clone: Path) -> None:
    with FakeLLM([]) as llm:
        proc = run(doc_block("dry-run"), clone, OPENAI_BASE_URL=llm.base_url)
        assert llm.bodies == []
    assert proc.returncode == 0, proc.stderr
    assert "reviewer dry run:" in proc.stdout and "with gpt-4.1 (no model was asked)" in proc.stdout
    plan = json.loads((clone / "plan.json").read_text())
    assert plan["dry_run"] is True and plan["files"]


def test_the_reviewdog_block_pipes_rdjson_and_fails_with_an_incomplete_review(
    clone: Path, tmp_path: Path
) -> None:
    """reviewdog is stood in for by a script that keeps what it is given."""
    shim = tmp_path / "shim"
    shim.mkdir()
    keep = f'#!/bin/sh\necho "$@" > {tmp_path}/args\ncat > {tmp_path}/in\n'
    (shim / "reviewdog").write_text(keep)
    (shim / "reviewdog").chmod(0o755)
    env = {"PATH_FIRST": str(shim), "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}
    with FakeLLM([submit(FINDING)], on_exhausted="repeat_last") as llm:
        proc = run(doc_block("reviewdog"), clone, **model_env(llm), **env)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "args").read_text().split() == [
        "-f=rdjson", "-name=reviewer", "-reporter=gitlab-mr-discussion"
    ]  # fmt: skip
    diagnostics = json.loads((tmp_path / "in").read_text())["diagnostics"]
    assert [d["location"]["path"] for d in diagnostics] == ["app.py"]
    # No model listening: the review is incomplete, and pipefail makes the job fail with it.
    dead = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"}
    dead["REVIEWER_MODEL"] = "m"
    proc = run(doc_block("reviewdog"), clone, **dead, **env)
    assert proc.returncode == 2, proc.stderr
    codes = [d["code"]["value"] for d in json.loads((tmp_path / "in").read_text())["diagnostics"]]
    assert codes[0] == "review-incomplete"


def test_the_tool_examples_run_in_a_clone_of_this_repository(tmp_path: Path) -> None:
    """In a clone of the project at its last commits (history enough for HEAD~3)."""
    work = tmp_path / "project"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--depth", "5", PROJECT.as_uri(), str(work)],
        check=True, capture_output=True,
    )  # fmt: skip
    for line in doc_block("tool-examples").strip().splitlines():
        proc = run(line, work)
        assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
        assert proc.stdout.strip(), line


def test_the_eval_sample_block_scores_the_sample_and_compares_two_runs(tmp_path: Path) -> None:
    """In a copy of the sample dataset at the path the block names; `runs/yesterday` is an
    earlier run of the same block's first line. The model finds nothing, so no judge is asked."""
    dataset = tmp_path / "reviewer" / "eval" / "datasets"
    dataset.mkdir(parents=True)
    shutil.copy(PROJECT / "reviewer" / "eval" / "datasets" / "sample.json", dataset)
    first, compare = doc_block("eval-sample").strip().splitlines()
    cache = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    with FakeLLM([submit()], on_exhausted="repeat_last") as llm:
        yesterday = first.replace("runs/today", "runs/yesterday")
        earlier = run(yesterday, tmp_path, **model_env(llm), **cache)
        assert earlier.returncode == 0, earlier.stderr
        proc = run(doc_block("eval-sample"), tmp_path, **model_env(llm), **cache)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "runs" / "today" / "results.json").read_text())
    assert results["cases_scored"] == results["cases_total"] > 0
    assert "runs/yesterday/results.json" in compare and proc.stdout.strip()


def test_the_eval_tickets_block_compares_tickets_off_and_auto(tmp_path: Path) -> None:
    """The sample dataset with tickets off, then auto, and the comparison of the two runs.
    The model finds nothing, so no judge is asked; the ticket is what differs."""
    dataset = tmp_path / "reviewer" / "eval" / "datasets"
    dataset.mkdir(parents=True)
    shutil.copy(PROJECT / "reviewer" / "eval" / "datasets" / "sample.json", dataset)
    with FakeLLM([submit()], on_exhausted="repeat_last") as llm:
        proc = run(doc_block("eval-tickets"), tmp_path, **model_env(llm),
                   XDG_CACHE_HOME=str(tmp_path / "xdg"))  # fmt: skip
        shown = ["What the change is for" in json.dumps(body) for body in llm.bodies]
    assert proc.returncode == 0, proc.stderr
    assert shown.count(True) == 1 and len(shown) == 14  # seven cases, twice; one ticket
    lines = proc.stdout.splitlines()
    assert ", tickets off, " in lines[0] and ", tickets auto, " in lines[1]
    assert re.search(r"^tickets shown +0 +1 +\+1$", proc.stdout, re.M), proc.stdout


def test_the_martian_block_clones_reviews_and_scores(
    tmp_path: Path, make_repo: Callable[[str], GitRepo]
) -> None:
    """github.com is stood in for by local repositories: the benchmark's clone through git's
    `insteadOf`, the pull requests' through REVIEWER_EVAL_GIT_BASE; the endpoint in the
    block's `export` is the fake's. The model finds nothing, so no judge is asked."""
    from tests.test_eval_datasets import FakeGitHubHost

    host = FakeGitHubHost(tmp_path / "github", make_repo)
    host.repository("acme/shop", [3])
    bench = make_repo("code-review-benchmark")
    golden = [{"pr_title": "Scale", "url": "https://github.com/acme/shop/pull/3",
               "comments": [{"comment": "run() now returns 30", "severity": "High"}]}]  # fmt: skip
    bench.write("offline/golden_comments/shop.json", json.dumps(golden))
    bench.commit("golden comments")
    work = tmp_path / "work"
    work.mkdir()
    with FakeLLM([submit()], on_exhausted="repeat_last") as llm:
        script = doc_block("eval-martian").replace("http://localhost:11434/v1", llm.base_url)
        proc = run(
            script, work, XDG_CACHE_HOME=str(tmp_path / "xdg"),
            REVIEWER_EVAL_GIT_BASE=host.git_base,
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0=f"url.{bench.root.as_uri()}.insteadOf",
            GIT_CONFIG_VALUE_0="https://github.com/withmartian/code-review-benchmark",
            GIT_ALLOW_PROTOCOL="file",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((work / "martian" / "results.json").read_text())
    assert (results["cases_total"], results["cases_scored"]) == (1, 1)
    assert (work / "martian" / "report.md").exists()
