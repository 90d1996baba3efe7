# ruff: noqa: F811  (the fixture imported from test_eval)
"""Issue 34, measured: a case of the shipped dataset carries a learnings file, and its
learning answers a would-be false positive (floor division on integer cents whose remainder
is paid too). With the learning, the review and the verifier are shown it and the verifier
refutes the finding naming it; with `learnings = "off"` the same finding is posted, as noise
on a clean change; `reviewer eval --compare` puts the two runs side by side, tokens too.
The scripted reviewer and verifier over real HTTP (tests/test_eval_verification_counts.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from tests.test_eval import RULES, SAMPLE, Models, env, run_eval  # noqa: F401  (env: fixture)
from tests.test_eval_verification_counts import (
    CENTS_LEARNING,
    REVIEWS,
    ROUNDING,
    VERIFY,
    reviewer_and_verifier,
)

CASE = "refund-split-integer-cents"


def asked_of(models: Models) -> tuple[list[str], list[str]]:
    """The first messages of the reviews and of the checks the scripted model was sent."""
    bodies = [r.body for r in models.reviewer.requests]
    tasks = [(VERIFY in json.dumps(b.get("tools")), b["messages"][1]["content"]) for b in bodies]
    return [t for check, t in tasks if not check], [t for check, t in tasks if check]


def test_a_learning_in_a_case_refutes_a_would_be_false_positive_and_compare_shows_it(
    env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REVIEWER_VERIFY", "all")
    case = next(c for c in json.loads(SAMPLE.read_text())["cases"] if c["id"] == CASE)
    assert case["expected"] == [] and case["learnings"].count("\n- ") == 1
    with Models(REVIEWS, RULES, reviewer_and_verifier()) as models:
        code, learned = run_eval(tmp_path, str(SAMPLE), "--only", CASE, out="learned")
        reviews, checks = asked_of(models)
    assert code == 0, learned.get("errors")
    # The case's learning reached the review's first message and the check of the finding.
    assert len(reviews) == 1 and CENTS_LEARNING in reviews[0]
    assert len(checks) == 1 and CENTS_LEARNING in checks[0] and ROUNDING["title"] in checks[0]
    (run,) = learned["cases"]
    assert run["review"]["findings"] == [] and run["metrics"]["llm"]["fp"] == 0
    (discarded,) = run["review"]["verification"]["discarded"]
    assert discarded["title"] == ROUNDING["title"]
    assert "relying on the team's learning L1 in .reviewer/learnings.md: “amounts are " in (
        discarded["reason"]
    )
    assert discarded["finding"]["verification"]["learning"] == "L1"

    monkeypatch.setenv("REVIEWER_LEARNINGS", "off")
    with Models(REVIEWS, RULES, reviewer_and_verifier()) as models:
        code, plain = run_eval(tmp_path, str(SAMPLE), "--only", CASE, out="plain")
        reviews, checks = asked_of(models)
    assert code == 0, plain.get("errors")
    # Reviewed again (the setting is part of the review's key), and nobody was shown it.
    assert len(reviews) == 1 and all(CENTS_LEARNING not in t for t in reviews + checks)
    (run,) = plain["cases"]
    assert [f["title"] for f in run["review"]["findings"]] == [ROUNDING["title"]]
    assert run["metrics"]["llm"]["fp"] == 1

    capsys.readouterr()
    code = main(["eval", "--compare", str(tmp_path / "plain" / "results.json"),
                 str(tmp_path / "learned" / "results.json")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    # Each run says whether it had the learnings, and how many the reviews were shown.
    first, second = out.splitlines()[:2]
    assert ", learnings off, " in first and ", learnings auto, " in second
    assert (plain["reviewer"]["learnings"], learned["reviewer"]["learnings"]) == (["off"], ["auto"])
    rows = {" ".join(line.split()[:-3]): line.split()[-3:] for line in out.splitlines()
            if len(line.split()) > 3}  # fmt: skip
    assert rows["learnings shown"] == ["0", "1", "+1"]
    assert rows["fp"] == ["1", "0", "-1"] and rows["findings posted"] == ["1", "0", "-1"]
    assert rows["findings discarded"] == ["0", "1", "+1"]
    assert "review tokens" in rows and "verification tokens" in rows
    review_tokens: list[Any] = rows["review tokens"]
    assert int(review_tokens[1]) > int(review_tokens[0])  # the learning costs prompt tokens


def test_a_case_whose_learnings_are_not_text_is_one_line(
    env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(SAMPLE.read_text())
    data["cases"] = [{**data["cases"][0], "learnings": ["- a list is not a file"]}]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["eval", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"reviewer: error: {bad}: case 1 ('moving-sum-off-by-one'): \"learnings\" is the text "
        "of a .reviewer/learnings.md"
    )


def test_the_eval_learnings_block_compares_the_case_with_and_without_its_learnings(
    tmp_path: Path,
) -> None:
    """docs/eval.md's block as written, in a copy of the dataset at the path it names."""
    from tests.docs import doc_block
    from tests.test_doc_commands import run

    dataset = tmp_path / "reviewer" / "eval" / "datasets"
    dataset.mkdir(parents=True)
    shutil.copy(SAMPLE, dataset)
    with Models(REVIEWS, RULES, reviewer_and_verifier()) as models:
        proc = run(
            doc_block("eval-learnings"), tmp_path, REVIEWER_VERIFY="all",
            OPENAI_BASE_URL=models.reviewer.base_url, OPENAI_API_KEY="x", REVIEWER_MODEL="m",
            REVIEWER_JUDGE_BASE_URL=models.judge.base_url, XDG_CACHE_HOME=str(tmp_path / "xdg"),
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert ["fp", "1", "0", "-1"] in rows and ["findings", "posted", "1", "0", "-1"] in rows
