# ruff: noqa: F811  (the fixture imported from test_eval)
"""Issue 25's "done means" on the shipped dataset: `reviewer eval` with verification on, a
scripted reviewer and a scripted verifier (the same fake endpoint, over real HTTP), and the
exact counts of findings posted, merged, discarded (by reason) and unverified, per case and
in total, in results.json, report.md and `--compare` against `verify = "off"`; and the same
counts in the JSON report of one `reviewer review` of a sample case's repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.testing import FakeLLM, reply, server_error, tool_call
from reviewer.testing.fake_eval import scripted_reviewer
from tests.conftest import GitRepo
from tests.test_eval import (  # noqa: F401  (env is a fixture)
    DOCSTRING,
    INJECTION,
    LEAK,
    OFF_BY_ONE,
    OVER_REFUND,
    PORT_NIT,
    RULES,
    SAMPLE,
    Models,
    env,
    finding,
    run_eval,
)

VERIFY = "submit_verdict"

# A linter's complaint: the noise table discards it before anything else.
LINT = finding("stats.py", 16, "low", "Line too long in moving_sum", category="style")
# Rated under min_confidence (0.5 here): discarded without a check.
UNSURE = finding("stats.py", 14, "medium", "Width may be negative", confidence=0.2)
# The injection found twice by the one loop: merged into one finding that counts both.
INJECTION_AGAIN = finding("db.py", 10, "high", "SQL injection in find_user query")
# A would-be false positive the case's learning answers (tests/test_eval_learnings.py).
ROUNDING = finding("payments/refund.py", 7, "medium", "Floor division loses cents of the refund")
# The learning, as the verifier of a finding on payments/refund.py is shown it.
CENTS_LEARNING = "L1 (for files matching payments/**): amounts are integer cents."

REVIEWS: dict[str, Any] = {
    "moving_sum": [OFF_BY_ONE, LINT, UNSURE],
    "find_user": [INJECTION, INJECTION_AGAIN, LEAK],
    "A refund never makes the total refunded exceed": [OVER_REFUND],
    "greeting": [DOCSTRING],
    "clamp": [],
    "parse_port": [PORT_NIT],
    "split_refund": [ROUNDING],
}


def verdict(value: str, **extra: Any) -> dict[str, Any]:
    arguments = {"verdict": value, "reason": f"Scripted: {value}.", **extra}
    return reply(tool_calls=[tool_call(VERIFY, arguments)])


def learned_verdict(task: str) -> dict[str, Any]:
    """The rounding finding's check: refuted with the learning when it was shown the
    learning, confirmed when not (`learnings = "off"`)."""
    if CENTS_LEARNING in task:
        return verdict("refuted", learning="L1")
    return verdict("confirmed")


# The verifier's answer by the finding's title: each kind once. The leak's check fails at the
# endpoint (a 500, no retries), so the leak stays posted, marked unverified.
VERDICTS: dict[str, dict[str, Any]] = {
    OFF_BY_ONE["title"]: verdict("confirmed"),
    OVER_REFUND["title"]: verdict("confirmed"),
    INJECTION["title"]: verdict("uncertain"),
    LEAK["title"]: server_error(500),
    DOCSTRING["title"]: verdict("refuted"),
    PORT_NIT["title"]: verdict("refuted"),
}


def reviewer_and_verifier() -> Callable[[dict[str, Any]], dict[str, Any]]:
    review = scripted_reviewer(REVIEWS)

    def step(request: dict[str, Any]) -> dict[str, Any]:
        tools = {tool["function"]["name"] for tool in request.get("tools") or []}
        if VERIFY not in tools:
            return review(request)
        task = request["messages"][1]["content"]
        if ROUNDING["title"] in task:
            return learned_verdict(task)
        (title,) = [title for title in VERDICTS if title in task]
        return VERDICTS[title]

    return step


def outcome(
    posted: int, merged: int, noise: int, refuted: int, unsure: int, unverified: int
) -> dict[str, Any]:
    return {
        "posted": posted,
        "merged": merged,
        "discarded": noise + refuted + unsure,
        "discarded_by": {
            "noise": noise, "refuted": refuted, "min_confidence": unsure, "invalid": 0
        },
        "unverified": unverified,
    }


def test_the_sample_dataset_with_verification_counts_every_finding_exactly(
    env: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One check at a time, most severe first: the injection's check is answered before the
    # leak's fails (a failure before the endpoint ever answered would be the endpoint's, and
    # leave every check of the case unverified).
    for name, value in (("VERIFY", "all"), ("MIN_CONFIDENCE", "0.5"), ("MAX_RETRIES", "0"),
                        ("CONCURRENCY", "1")):  # fmt: skip
        monkeypatch.setenv(f"REVIEWER_{name}", value)
    with Models(REVIEWS, RULES, reviewer_and_verifier()) as models:
        code, results = run_eval(tmp_path, str(SAMPLE), out="all")
        asked = [r.body for r in models.reviewer.requests]
    assert code == 0, results.get("errors")
    # 7 reviews, then 7 checks: every finding the noise table and min_confidence left.
    checks = [b for b in asked if VERIFY in str(b.get("tools"))]
    assert (len(asked), len(checks)) == (14, 7)
    # The intent finding's check is given the ticket it quotes (the case's own ticket).
    (refund_check,) = [b for b in checks if OVER_REFUND["title"] in str(b["messages"][1])]
    task = refund_check["messages"][1]["content"]
    assert "Quoted from ticket PAY-42: A refund never makes" in task
    assert "Several partial refunds are allowed" in task
    per_case = {case["id"]: case["verification"] for case in results["cases"]}
    assert per_case == {
        # Confirmed off-by-one posted; the linter nit and the unsure finding discarded.
        "moving-sum-off-by-one": outcome(1, 0, noise=1, refuted=0, unsure=1, unverified=0),
        # The injection twice, merged (and uncertain); the leak's check failed.
        "find-user-sql-injection": outcome(2, 1, noise=0, refuted=0, unsure=0, unverified=1),
        # The refund over the charge its ticket forbids, confirmed.
        "refund-exceeds-charge": outcome(1, 0, noise=0, refuted=0, unsure=0, unverified=0),
        # The clean changes' noise, refuted.
        "greeting-f-string": outcome(0, 0, noise=0, refuted=1, unsure=0, unverified=0),
        "clamp-clearer-names": outcome(0, 0, noise=0, refuted=0, unsure=0, unverified=0),
        "port-default-constant": outcome(0, 0, noise=0, refuted=1, unsure=0, unverified=0),
        # Refuted with the case's learning named.
        "refund-split-integer-cents": outcome(0, 0, noise=0, refuted=1, unsure=0, unverified=0),
    }
    total = outcome(4, 1, noise=1, refuted=3, unsure=1, unverified=1)
    assert results["metrics"]["llm"]["verification"] == total
    assert results["metrics"]["location"]["verification"] == total
    (injection,) = [c for c in results["cases"] if c["id"] == "find-user-sql-injection"]
    kept = {f["title"]: (f["verdict"], f["merged_from"]) for f in injection["review"]["findings"]}
    assert kept == {INJECTION["title"]: ("uncertain", 2), LEAK["title"]: ("unverified", 1)}
    # The leak, kept though unchecked, is still found: 4 of 4 issues, and no noise posted.
    llm = results["metrics"]["llm"]
    assert (llm["tp"], llm["fp"], llm["fn"], llm["clean_findings"]) == (4, 0, 0, 0)
    report = (tmp_path / "all" / "report.md").read_text()
    assert "## Verification" in report
    assert "| moving-sum-off-by-one | 1 | 0 | 2 | 1 | 0 | 1 | 0 | 0 |" in report
    assert "| find-user-sql-injection | 2 | 1 | 0 | 0 | 0 | 0 | 0 | 1 |" in report
    assert "| total | 4 | 1 | 5 | 1 | 3 | 1 | 0 | 1 |" in report

    # The same cases with verify = "off": the cached reviews, no model asked; then compared.
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    with Models(REVIEWS, RULES, reviewer_and_verifier()) as models:
        code, off = run_eval(tmp_path, str(SAMPLE), out="off")
        assert code == 0 and models.reviewer.requests == []
    # Only the noise table and min_confidence discard; nothing is checked.
    assert off["metrics"]["llm"]["verification"] == outcome(
        7, 1, noise=1, refuted=0, unsure=1, unverified=0
    )
    capsys.readouterr()
    code = main(["eval", "--compare", str(tmp_path / "off" / "results.json"),
                 str(tmp_path / "all" / "results.json")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    for row in (
        "findings posted                7         4        -3",
        "findings discarded             2         5        +3",
        "findings unverified            0         1        +1",
        "findings merged                1         1        +0",
    ):
        assert row in out, out


def sample_case_repository(root: Path, case_id: str) -> GitRepo:
    """A sample case as a repository: its first commit on main, the change on a branch."""
    (case,) = [c for c in json.loads(SAMPLE.read_text())["cases"] if c["id"] == case_id]
    repo = GitRepo(root)
    first, *rest = case["commits"]
    for commit in [first]:
        for path, text in commit["files"].items():
            repo.write(path, text)
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", commit["message"])
    repo.git("checkout", "-q", "-b", "change")
    for commit in rest:
        for path, text in commit["files"].items():
            repo.write(path, text)
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", commit["message"])
    return repo


def test_one_review_of_a_sample_case_reports_the_same_counts_in_its_json(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = sample_case_repository(tmp_path / "users", "find-user-sql-injection")
    confirmed = finding("db.py", 11, "low", "Only the first user is returned")
    refuted = finding("db.py", 9, "high", "connect raises on a missing database file")
    lint = finding("db.py", 10, "low", "Line too long in find_user", category="style")
    unsure = finding("db.py", 8, "medium", "Name may be None", confidence=0.2)
    submitted = [INJECTION, INJECTION_AGAIN, LEAK, confirmed, refuted, lint, unsure]
    answers = {
        INJECTION["title"]: verdict("uncertain"),
        LEAK["title"]: server_error(500),
        confirmed["title"]: verdict("confirmed"),
        refuted["title"]: verdict("refuted"),
    }

    def step(request: dict[str, Any]) -> dict[str, Any]:
        if VERIFY not in str(request.get("tools")):
            arguments = {"summary": "Adds find_user.", "findings": submitted}
            return reply(tool_calls=[tool_call("submit_review", arguments)])
        (title,) = [t for t in answers if t in request["messages"][1]["content"]]
        return answers[title]

    monkeypatch.setenv("REVIEWER_MIN_CONFIDENCE", "0.5")
    monkeypatch.setenv("REVIEWER_MAX_RETRIES", "0")
    monkeypatch.delenv("REVIEWER_VERIFY")  # the default: all
    report_path = tmp_path / "report.json"
    with FakeLLM([step], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(["review", "--repo", str(repo.root), "--base", "main", "--quiet",
                     "--format", f"json={report_path}", "--fail-on", "high"])  # fmt: skip
        asked = llm.bodies
    report = json.loads(report_path.read_text())
    assert code == 1 and report["status"] == "complete"
    # The uncertain injection gates. One review, then a check of each of the 4 findings the
    # noise table and min_confidence left (the injection twice is checked once, merged).
    assert (len(asked), sum(VERIFY in str(b.get("tools")) for b in asked)) == (5, 4)
    posted = {
        f["title"]: (f["verification"]["verdict"], f["merged_from"]) for f in report["findings"]
    }
    assert posted == {
        INJECTION["title"]: ("uncertain", 2),
        LEAK["title"]: ("unverified", 1),
        confirmed["title"]: ("confirmed", 1),
    }
    discarded = {d["title"]: d["reason"] for d in report["discarded"]}
    assert discarded == {
        refuted["title"]: "refuted by verification: Scripted: refuted.",
        lint["title"]: "discarded: what a linter or formatter reports: formatting, whitespace, "
        "line length, naming style (title says 'line too long', names no concrete failure)",
        unsure["title"]: "its confidence 0.2 is under min_confidence 0.5",
    }
    unverified = [f for f in report["findings"] if f["verification"]["verdict"] == "unverified"]
    assert len(unverified) == 1
    assert sum(f["merged_from"] - 1 for f in report["findings"]) == 1
    assert report["counts"] == {"critical": 1, "high": 0, "medium": 1, "low": 1, "info": 0}


def test_a_finding_refused_twice_is_counted_as_discarded_invalid(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scripted reviewer sends the same submission each turn, as Qwen2.5-Coder-1.5B did:
    # a finding past the end of bounds.py is refused, then taken out and discarded.
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    past_the_end = finding("bounds.py", 99, "medium", "Past the end of the file")
    reviews = {**REVIEWS, "clamp": [past_the_end]}
    with Models(reviews, RULES):
        code, results = run_eval(tmp_path, str(SAMPLE), "--only", "clamp-clearer-names")
    assert code == 0, results.get("errors")
    (case,) = results["cases"]
    assert case["review"]["status"] == "complete"
    assert case["verification"] == outcome(0, 0, noise=0, refuted=0, unsure=0, unverified=0) | {
        "discarded": 1,
        "discarded_by": {"noise": 0, "refuted": 0, "min_confidence": 0, "invalid": 1},
    }
