"""What a newcomer met, each as a real process in a real repository: the advice must fit the
situation (no advice to do what the user already did), and nothing is written where it was
not asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.test_cli import reviewer


def only_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_uncommitted_in_a_repository_without_commits_does_not_advise_uncommitted(
    repo: GitRepo,
) -> None:
    repo.write("app.py", "x = 1\n")
    proc = reviewer("review", "--uncommitted", "--repo", str(repo.root), "--model", "m")
    line = only_line(proc.stderr)
    assert proc.returncode == 2
    assert "has no commits yet" in line and "make a first commit" in line
    assert "with --uncommitted" not in line  # the advice was to do what was done


def test_a_base_before_the_root_commit_does_not_advise_a_deeper_clone(repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit("first")
    for base in ("HEAD~1", "HEAD^", "main~3"):
        proc = reviewer("review", "--base", base, "--repo", str(repo.root), "--model", "m")
        line = only_line(proc.stderr)
        assert proc.returncode == 2
        assert f"'{base}' goes back past the first commit" in line, line
        assert "deeper clone" not in line
    # A name that is not there is still told to be fetched.
    proc = reviewer("review", "--base", "origin/main~1", "--repo", str(repo.root), "--model", "m")
    assert "fetch it" in only_line(proc.stderr)


def test_output_without_format_writes_the_report_its_name_says(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", "x = 2\n")
    repo.commit("change")
    submit = tool_call("submit_review", {"summary": "Fine.", "findings": []})
    with FakeLLM([reply(tool_calls=[submit])] * 3) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        args = ("review", "--repo", str(repo.root), "--base", "HEAD~1", "--model", "m")
        proc = reviewer(*args, "--output", str(repo.root / "a.json"))
        assert proc.returncode == 0, proc.stderr
        report = json.loads((repo.root / "a.json").read_text())  # it was terminal text
        assert report["format"] == "reviewer-report"
        odd = reviewer(*args, "--output", str(repo.root / "a.out"))
        # Each --output alone is the report its name says (it was refused: "more --output
        # than --format options").
        both = reviewer(*args, "--output", str(repo.root / "b.sarif"),
                        "--output", str(repo.root / "b.md"))  # fmt: skip
        assert both.returncode == 0, both.stderr
        # A --format that names its file and an --output in its place: one line (the
        # --output was dropped without a word).
        twice = reviewer(*args, "--format", f"json={repo.root / 'c.json'}",
                         "--output", str(repo.root / "c.sarif"))  # fmt: skip
    assert odd.returncode == 2 and "say which report it is with --format" in only_line(odd.stderr)
    assert json.loads((repo.root / "b.sarif").read_text())["version"] == "2.1.0"
    assert (repo.root / "b.md").read_text().startswith("#")
    assert twice.returncode == 2
    assert f"--output {repo.root / 'c.sarif'} is in the same position" in only_line(twice.stderr)
    assert len(llm.bodies) == 2  # the names were refused before any model request


def test_reports_say_whether_a_finding_is_on_a_changed_or_an_unchanged_line(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("app.py", "".join(f"line{n} = {n}\n" for n in range(1, 11)))
    repo.commit("base")
    repo.write("app.py", repo.root.joinpath("app.py").read_text().replace("line5 = 5", "line5 = 0"))
    repo.commit("change")

    def at(line: int, title: str, end_line: int | None = None) -> dict:
        return {"path": "app.py", "line": line, "end_line": end_line, "severity": "low",
                "title": title, "body": "."}  # fmt: skip

    findings = [at(5, "Changed"), at(3, "Above"), at(6, "Below", end_line=7)]
    submit = tool_call("submit_review", {"summary": "Three.", "findings": findings})
    with FakeLLM([reply(tool_calls=[submit])]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        markdown = repo.root / "review.md"
        proc = reviewer("review", "--repo", str(repo.root), "--base", "HEAD~1", "--model", "m",
                        "--format", "terminal", "--format", f"markdown={markdown}",
                        "--format", f"json={repo.root / 'review.json'}", cwd=repo.root)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # Lines 2-4 and 6-8 are the diff's context around line 5: commentable, not changed.
    said = {
        "Changed": "on a changed line",
        "Above": "on an unchanged line next to the change",
        "Below": "on unchanged lines next to the change",
    }
    terminal = proc.stdout.split("app.py:")
    markdown_text = markdown.read_text().split("`app.py:")
    for title, words in said.items():
        (block,) = [part for part in terminal if f": {title}" in part]
        assert words in block, block  # it said "on a changed line" for all three
        (view,) = [part for part in markdown_text if title in part]
        assert words in view, view
    report = json.loads((repo.root / "review.json").read_text())
    assert {f["title"]: f["on_unchanged_lines"] for f in report["findings"]} == {
        "Changed": False, "Above": True, "Below": True
    }  # fmt: skip


def test_a_base_url_without_v1_is_told_to_add_it(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fake model answered at its root too, so the most common mistake could not be
    shown with it; it serves /v1 only now, and its 404 is OpenAI's."""
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", "x = 2\n")
    repo.commit("change")
    submit = tool_call("submit_review", {"summary": "Fine.", "findings": []})
    with FakeLLM([reply(tool_calls=[submit])]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)  # http://127.0.0.1:PORT, no /v1
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        proc = reviewer("review", "--repo", str(repo.root), "--base", "HEAD~1", "--model", "m")
        assert llm.steps_used == 0  # it reviewed: the fake answered without /v1
    assert proc.returncode == 2
    (error,) = [line for line in proc.stderr.splitlines() if line.startswith("reviewer: error:")]
    assert "answered 404 (Invalid URL (POST /chat/completions)): the base URL may lack" in error
    assert f"most servers want {llm.url}/v1 (set OPENAI_BASE_URL to it)" in error


SAMPLE = Path(__file__).resolve().parents[1] / "reviewer" / "eval" / "datasets" / "sample.json"


def test_eval_on_a_file_that_is_not_json_names_the_json_error(tmp_path: Path) -> None:
    broken = tmp_path / "cases.json"
    broken.write_text('[\n  {"id": 1,}\n]\n')
    proc = reviewer("eval", str(broken), "--model", "m")
    line = only_line(proc.stderr)
    assert proc.returncode == 2
    # It said "not a dataset of a known format" although the file names its format.
    assert f"'{broken}': not valid JSON" in line or "not valid JSON" in line
    assert "line 2 column" in line


def test_eval_takes_the_format_tag_of_its_own_files_as_dataset_format(tmp_path: Path) -> None:
    from reviewer.eval.formats import detect_format

    assert detect_format(SAMPLE, "reviewer-eval").name == "local"  # it was refused
    proc = reviewer("eval", str(SAMPLE), "--dataset-format", "urgent-format", "--model", "m")
    assert "unknown dataset format 'urgent-format'" in only_line(proc.stderr)


def test_eval_refuses_an_unknown_severity_with_the_case_it_is_in(tmp_path: Path) -> None:
    data = json.loads(SAMPLE.read_text())
    data["cases"][1]["expected"][0]["severity"] = "urgent"
    dataset = tmp_path / "cases.json"
    dataset.write_text(json.dumps(data))
    proc = reviewer("eval", str(dataset), "--model", "m")
    line = only_line(proc.stderr)  # with a cold cache, it followed two "built the repository"
    assert proc.returncode == 2
    assert "case 2" in line and '"severity" "urgent" is not one of critical, high' in line
    # The whole dataset is checked before any case's repository is built.
    cache = tmp_path / "cache"
    again = reviewer("eval", str(dataset), "--model", "m", "--cache", str(cache))
    assert only_line(again.stderr) == line
    assert not (cache / "repos").exists()


def test_eval_checks_every_dataset_path_before_building_the_first(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    missing = tmp_path / "missing.json"
    proc = reviewer("eval", str(SAMPLE), str(missing), "--model", "m", "--cache", str(cache))
    assert proc.returncode == 2
    assert f"dataset '{missing}' does not exist" in only_line(proc.stderr)
    assert not (cache / "repos").exists()  # the sample's repositories were built first


def test_eval_in_a_clone_writes_no_tracked_file() -> None:
    """results.json and report.md of a run were committed (stale, "0 scored of 3"), in the
    folder eval writes by default: running eval in a clone overwrote tracked files."""
    import argparse
    import subprocess

    from reviewer.eval.arguments import add_eval_parser

    out = add_eval_parser(argparse.ArgumentParser().add_subparsers()).get_default("out")
    project = SAMPLE.parents[3]
    written = [str(out / "results.json"), str(out / "report.md")]
    tracked = subprocess.run(["git", "ls-files", "--", str(out)], cwd=project,
                             capture_output=True, text=True, check=True)  # fmt: skip
    ignored = subprocess.run(["git", "check-ignore", *written], cwd=project,
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert tracked.stdout == ""
    assert ignored.stdout.split() == written


def test_eval_help_names_the_transcript_files_it_writes(tmp_path: Path) -> None:
    import argparse
    import re

    from reviewer.eval.arguments import add_eval_parser
    from reviewer.eval.runner import transcript_path

    parser = add_eval_parser(argparse.ArgumentParser().add_subparsers())
    (transcripts,) = [a for a in parser._actions if "--transcripts" in a.option_strings]
    assert "DIR/CASE-HASH.jsonl" in str(transcripts.help)  # it said DIR/CASE.jsonl
    assert re.fullmatch(r"CASE-[0-9a-f]{8}\.jsonl", transcript_path(Path("DIR"), "CASE").name)


def test_eval_counts_one_case_as_one_case(tmp_path: Path) -> None:
    proc = reviewer("eval", str(SAMPLE), "--limit", "1", "--judge", "location",
                    "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "out"))  # fmt: skip
    assert proc.returncode == 2  # no model: the case could not be scored
    lines = proc.stderr.splitlines()
    assert any(line.startswith("reviewer: eval: 1 case, 1 at a time; cache ") for line in lines)
    assert "reviewer: eval: 0 of 1 case scored; " in proc.stderr  # it said "1 cases"
    assert "reviewer: error: 1 case could not be scored: moving-sum-off-by-one" in lines


def test_stats_on_a_dry_run_plan_says_it_is_a_plan(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", "x = 2\n")
    repo.commit("change")
    plan = tmp_path / "plan.json"
    args = ("--repo", str(repo.root), "--base", "HEAD~1", "--model", "m", "--dry-run")
    assert reviewer("review", *args, "--format", f"json={plan}").returncode == 0
    proc = reviewer("stats", str(plan))
    line = only_line(proc.stderr)
    assert proc.returncode == 2
    # It said the file was not written with --format json, which it was.
    assert f"{plan} is the plan of a dry run, which holds no findings" in line
