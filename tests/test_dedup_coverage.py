"""One finding once, and honest coverage: the same problem found by two parts of a review is
reported once (merged, counted), and a file whose diff was cut to fit a request is "partly
reviewed" with the lines the model was shown, in every report and in the dry run's plan.
Scripted models over real HTTP, real git repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.test_batching import body, make_change, split_review_env

_ADDED = re.compile(r"^\s+(\d+) \+ ", re.MULTILINE)
FORMATS = ("json", "markdown", "sarif", "terminal")


def review(repo: GitRepo, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Path]]:
    outputs = {fmt: tmp_path / f"r.{fmt}" for fmt in FORMATS}
    args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet", *extra]
    for fmt, path in outputs.items():
        args += ["--format", f"{fmt}={path}"]
    return main(args), outputs


def submit(findings: list[dict[str, Any]], summary: str = "Reviewed.") -> dict[str, Any]:
    arguments = {"summary": summary, "findings": findings}
    return reply(tool_calls=[tool_call("submit_review", arguments)])


# --- honest coverage -------------------------------------------------------------------


def big_file(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 13,000-line added file, far over what a 16,000-token window shows in one request."""
    make_change(repo, {"data/big.py": body(13_000, "v")})
    split_review_env(monkeypatch)


def test_a_cut_file_is_partly_reviewed_in_every_report(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big_file(repo, monkeypatch)
    shown: list[int] = []

    def look(request: dict[str, Any]) -> dict[str, Any]:
        shown.extend(int(n) for n in _ADDED.findall(request["messages"][1]["content"]))
        return submit([])

    with FakeLLM([look]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code, outputs = review(repo, tmp_path)
        llm.assert_no_failures()
    assert code == 0
    last = max(shown)
    assert shown == list(range(1, last + 1)) and 100 < last < 13_000  # the diff was cut
    report = json.loads(outputs["json"].read_text())
    (entry,) = report["files"]
    assert entry["reviewed"] is True and entry["partly_reviewed"] is True
    assert entry["shown_lines"] == [[1, last]]
    said = f"partly reviewed (lines 1-{last:,} shown)"
    terminal = outputs["terminal"].read_text()
    assert "Partly reviewed (1)" in terminal and f"data/big.py: {said}" in terminal
    assert "1 reviewed (1 partly: its diff was cut)" in terminal
    markdown = outputs["markdown"].read_text()
    assert "**Partly reviewed (1):**" in markdown and f"`data/big.py`: {said}" in markdown
    sarif = json.loads(outputs["sarif"].read_text())
    notes = [
        n["message"]["text"]
        for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    ]
    assert any(note.startswith(f"data/big.py: {said}") for note in notes)


def test_the_dry_run_plan_says_a_file_will_be_partly_reviewed(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    big_file(repo, monkeypatch)
    out = tmp_path / "plan.json"
    with FakeLLM([]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(["review", "--repo", str(repo.root), "--base", "main", "--quiet",
                     "--dry-run", "--format", f"json={out}"])  # fmt: skip
        assert llm.bodies == []
    assert code == 0
    (entry,) = json.loads(out.read_text())["files"]
    assert entry["partly_reviewed"] is True and entry["shown_lines"][0][0] == 1
    last = entry["shown_lines"][0][1]
    assert 100 < last < 13_000
    assert f"partly data/big.py: lines 1-{last:,} shown" in capsys.readouterr().out


def test_a_file_shown_whole_is_not_partly_reviewed(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_change(repo, {"small.py": body(50, "s")})
    split_review_env(monkeypatch)
    with FakeLLM([submit([])]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code, outputs = review(repo, tmp_path)
    assert code == 0
    (entry,) = json.loads(outputs["json"].read_text())["files"]
    assert entry["partly_reviewed"] is False and entry["shown_lines"] == []
    assert "Partly reviewed" not in outputs["terminal"].read_text()


# --- one finding once ------------------------------------------------------------------

TITLES = ("Unchecked None return from compute", "compute result may be None, unchecked")


def test_the_same_problem_found_by_two_parts_is_reported_once(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_change(repo, {f"pkg{d}/mod{n}.py": body(120, f"p{d}m{n}") for d in range(4)
                       for n in range(3)})  # fmt: skip
    split_review_env(monkeypatch, REVIEWER_CONCURRENCY="1")
    parts = 0

    def each_part(request: dict[str, Any]) -> dict[str, Any]:
        nonlocal parts
        parts += 1
        # Every part points at the same lines of one file with the same problem, worded its
        # own way, at its own severity; and at a different problem on the same lines.
        same = {"path": "pkg0/mod0.py", "line": 3 + parts % 2, "end_line": 5,
                "severity": "high" if parts == 2 else "low", "category": "bug",
                "title": TITLES[parts % 2], "body": f"Part {parts} saw it."}  # fmt: skip
        other = {"path": "pkg0/mod0.py", "line": 4, "severity": "medium", "category": "bug",
                 "title": "Loop index off by one", "body": "Another problem."}  # fmt: skip
        return submit([same, other] if parts == 1 else [same])

    with FakeLLM([each_part], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code, outputs = review(repo, tmp_path)
        llm.assert_no_failures()
    assert code == 0 and parts >= 2
    report = json.loads(outputs["json"].read_text())
    by_title = {f["title"]: f for f in report["findings"]}
    assert len(report["findings"]) == 2, list(by_title)
    other = by_title.pop("Loop index off by one")
    assert other["merged_from"] == 1
    ((_title, merged),) = by_title.items()
    assert merged["severity"] == "high" and merged["body"] == "Part 2 saw it."  # most severe
    assert merged["merged_from"] == parts  # every part's report counted
    assert report["counts"]["high"] == 1 and report["counts"]["low"] == 0
    said = f"reported {parts} times, merged"
    assert said in outputs["terminal"].read_text() and said in outputs["markdown"].read_text()
    sarif = json.loads(outputs["sarif"].read_text())
    assert [r["properties"].get("mergedFrom") for r in sarif["runs"][0]["results"]].count(
        parts
    ) == 1


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (("bug", 3, 5, "Unchecked None return"), ("bug", 5, 8, "None return unchecked"), True),
        (("bug", 3, 5, "Unchecked None return"), ("bug", 6, 8, "Unchecked None return"), False),
        (("bug", 3, 5, "Unchecked None return"), ("security", 3, 5, "Unchecked None return"),
         False),
        (("bug", 3, 5, "Unchecked None return"), ("bug", 3, 5, "SQL built from user input"),
         False),
        ((None, 3, 3, "Unchecked None return"), ("bug", 3, 3, "unchecked none return!"), True),
    ],
)  # fmt: skip
def test_what_counts_as_the_same_problem(
    a: tuple[str | None, int, int, str], b: tuple[str | None, int, int, str], same: bool
) -> None:
    from reviewer.checks.merging import merge_overlapping, same_problem
    from reviewer.findings import Finding, Severity

    def finding(spec: tuple[str | None, int, int, str]) -> Finding:
        category, line, end, title = spec
        return Finding("a.py", line, Severity.LOW, title, "", end_line=end, category=category)

    assert same_problem(finding(a), finding(b)) is same
    merged = merge_overlapping([finding(a), finding(b)])
    assert [f.merged_from for f in merged] == ([2] if same else [1, 1])
