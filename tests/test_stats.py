"""`reviewer stats`: per rule and severity, how many findings were posted, fixed, dismissed
and are still open, from real JSON reports of `reviewer github` runs (each finding once, in
its last state); a file that is not a report is one line and exit 2."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from reviewer.cli.program import main
from tests.test_action import finding, github, pr_repo, submit  # noqa: F401  (fixtures)
from tests.test_action_runs import PullRequest, pr  # noqa: F401  (pr is a fixture)
from tests.test_conversation_runs import GUARDED


def test_stats_count_each_finding_in_its_last_state(
    pr: PullRequest,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Not category style: the noise table discards what a linter reports, never posted.
    style = finding(line=5, severity="low", category="docs", title="Name it mean", body="x")
    first = pr.run([submit(finding(), style)])
    assert first.code == 0, first.err
    (low,) = [c for c in pr.github.review_comments if "Name it mean" in c["body"]]
    pr.github.person("bob", "write").react(low["id"], "-1")
    pr.push("Guard average", {"app.py": GUARDED})
    second = pr.run([submit()])
    assert second.code == 0, second.err

    reports = [run.outputs["report"] for run in (first, second)]
    assert main(["stats", *reports]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "rule   severity  posted  fixed  dismissed  open",
        "bug    high           1      1          0     0",
        "docs   low            1      0          1     0",
        "total                 2      1          1     0",
    ]
    # The first report alone: both open.
    assert main(["stats", reports[0]]) == 0
    assert (
        capsys.readouterr().out.splitlines()[-1]
        == "total                 2      0          0     2"
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "is not JSON"),
        ('{"format": "sarif"}', "is not a reviewer JSON report"),
        ('{"format": "reviewer-report", "version": 9}', "is a version 9 report"),
        ('{"format": "reviewer-report", "version": 1}', "is not a valid report"),
    ],
)
def test_a_file_that_is_not_a_report_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, said: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["stats", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and str(bad) in err


def test_a_hostile_reports_rules_reach_stdout_as_inert_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A report is a file anyone can hand over: its `rule` reached stdout as written, so the
    # Actions runner ran `::error`, `::set-output` and `##[add-mask]` from it and a terminal
    # obeyed its escapes.
    from reviewer.findings import ReviewResult
    from reviewer.report import render
    from tests.test_sinks import runner_commands

    hostile = [
        "::error file=app.py::forged",
        "::set-output name=findings::0",
        "bug ##[add-mask]secret",
        "\x1b[2J\x1b]0;owned\x07clear",
        "line\n::warning::two",
        "bidi\u202eevil",
    ]
    report = json.loads(render(ReviewResult("complete", "", (), "m", "b" * 40, "h" * 40), "json"))
    report["states"] = {
        f"{n:016x}": {"state": "open", "rule": rule, "severity": "high", "how": ""}
        for n, rule in enumerate(hostile)
    }
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(report))

    assert main(["stats", str(path)]) == 0
    out = capsys.readouterr().out
    assert runner_commands(out) == [], out
    assert not [c for c in out if unicodedata.category(c) == "Cc" and c != "\n"]
    assert "\u202e" not in out
    lines = out.splitlines()
    assert len(lines) == 2 + len(hostile)  # one row per rule: no line broken in two
    # The table still lines up and still names each rule, visibly.
    assert len({len(line.split("high")[0].replace("\u200b", "")) for line in lines[1:-1]}) == 1
    assert any("set-output name=findings" in line for line in lines)
    assert lines[-1].split() == ["total", "6", "0", "0", "6"]
