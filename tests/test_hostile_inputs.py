"""Hostile or careless input is one line and exit 2, never a traceback and exit 1.

Exit 1 means "findings at or above fail-on" to a gate, so a crash must never look like one;
and what can be checked before the first model request (settings, the ignore file, the
report paths) is checked then, so a bad value costs no tokens and loses no review. Each case
drives the real command line (a process of its own, or `cli.main` where the input cannot be
passed in argv) on real repositories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewer.testing import FakeLLM, reply, tool_call
from reviewer.testing.fake_github import FakeGitHub
from tests.conftest import GitRepo
from tests.test_action import (  # noqa: F401  (github and pr_repo are fixtures)
    github,
    pr_repo,
    run_action,
    submit,
)

DEEP = 100_000
HUGE_NUMBER = "9" * 5000


def reviewer(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWER_", "GITHUB_"))}
    return subprocess.run(
        [sys.executable, "-m", "reviewer", *args],
        env={**base, "NO_PROXY": "127.0.0.1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def refused(proc: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit 2 and one line on stderr (no traceback) holding every fragment."""
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("reviewer: error:")]
    assert len(lines) == 1, proc.stderr[-2000:]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def nested(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def change(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "def total(items):\n    return sum(items)\n")
    repo.commit("base")
    repo.write("app.py", "def total(items):\n    return sum(items) / len(items)\n")
    repo.commit("divide")
    return repo


def model_env(llm: FakeLLM) -> dict[str, str]:
    return {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "k", "REVIEWER_MODEL": "m"}


# --- JSON nested 100,000 deep -----------------------------------------------------------------


def test_a_local_dataset_nested_deep_is_one_line(tmp_path: Path) -> None:
    dataset = tmp_path / "deep.json"
    dataset.write_text('{"format": "reviewer-eval", "cases": ' + nested() + "}")
    proc = reviewer("eval", str(dataset), "--judge", "location", "--cache", str(tmp_path / "c"))
    refused(proc, str(dataset), "nested")


def test_a_martian_file_nested_deep_is_one_line(tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    golden.write_text(nested())
    proc = reviewer(
        "eval", str(golden), "--dataset-format", "martian", "--judge", "location",
        "--cache", str(tmp_path / "c"),
    )  # fmt: skip
    refused(proc, str(golden), "nested")


def test_compare_of_results_nested_deep_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "a.json"
    deep.write_text('{"format": ' + nested() + "}")
    proc = reviewer("eval", "--compare", str(deep), str(deep))
    refused(proc, str(deep), "nested")


def test_stats_of_a_report_nested_deep_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "report.json"
    deep.write_text('{"states": ' + nested() + "}")
    refused(reviewer("stats", str(deep)), str(deep), "nested")


# --- a pull request number of 5,000 digits ----------------------------------------------------


def test_a_martian_url_with_a_5000_digit_number_is_one_line(tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    url = f"https://github.com/acme/shop/pull/{HUGE_NUMBER}"
    golden.write_text(json.dumps([{"pr_title": "t", "url": url, "comments": []}]))
    proc = reviewer(
        "eval", str(golden), "--dataset-format", "martian", "--judge", "location",
        "--cache", str(tmp_path / "c"),
    )  # fmt: skip
    refused(proc, "entry 1", "pull request URL")


@pytest.mark.parametrize(
    ("where", "said"),
    [("number", "pull request number"), ("pull_request.number", "is not JSON: Exceeds")],
)
def test_a_github_event_with_a_5000_digit_number_is_one_line(
    change: GitRepo, tmp_path: Path, where: str, said: str
) -> None:
    """Past 4,300 digits Python's JSON reader refuses the number (a ValueError that is not a
    JSONDecodeError); below, the number was taken and sent to GitHub."""
    event = tmp_path / "event.json"
    number = HUGE_NUMBER[:4000] if where == "number" else HUGE_NUMBER  # JSON's and int's limit
    pull = {"number": 7, "base": {"sha": "a"}, "head": {"sha": "b"}}
    body = {"number": 7, "pull_request": pull}
    if where == "number":
        body["number"] = pull["number"] = int(number)  # past int's limit json cannot write it
        text = json.dumps(body)
    else:
        text = json.dumps(body).replace('"number": 7', f'"number": {number}', 1)
        assert number in text
    event.write_text(text)
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "acme/shop",
        "GITHUB_WORKSPACE": str(change.root),
        "GITHUB_TOKEN": "t",
        "OPENAI_API_KEY": "k",
        "REVIEWER_MODEL": "m",
        "GITHUB_API_URL": "http://127.0.0.1:9",  # nothing listens: nothing may be asked
    }
    refused(reviewer("github", env=env), said)


# --- a repository path with a NUL byte --------------------------------------------------------


def test_a_dataset_repo_with_a_nul_byte_is_one_line(tmp_path: Path) -> None:
    dataset = tmp_path / "nul.json"
    case = {"id": "c1", "repo": "calc\u0000evil", "base": "main", "head": "fix"}
    dataset.write_text(json.dumps({"format": "reviewer-eval", "cases": [case]}))
    proc = reviewer("eval", str(dataset), "--judge", "location", "--cache", str(tmp_path / "c"))
    refused(proc, "case 1", '"repo"')


def test_review_repo_with_a_nul_byte_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """argv cannot hold a NUL byte, so `cli.main` is called as the console script calls it."""
    from reviewer.cli.program import main

    code = main(["review", "--repo", f"{tmp_path}\0x", "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.count("\n") == 1 and "--repo" in err and "NUL" in err


# --- settings, the ignore file and report paths: checked before the first model request ------


def test_a_pyproject_that_is_not_utf8_does_not_crash_the_review(change: GitRepo) -> None:
    """`[tool.reviewer]` is read from pyproject.toml, the project's own file: a Latin-1 byte in
    a comment of it (read on disk for --uncommitted) reads as U+FFFD, as it does at a commit."""
    change.write("pyproject.toml", b"# caf\xe9\n[tool.reviewer]\nfail_on = 'high'\n")
    script = [reply(tool_calls=[tool_call("submit_review", {"summary": "ok"})])]
    with FakeLLM(script) as llm:
        proc = reviewer(
            "review", "--repo", str(change.root), "--uncommitted", "--quiet", env=model_env(llm)
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


def test_an_ignore_glob_of_too_many_alternatives_is_refused_before_the_model(
    repo: GitRepo,
) -> None:
    """The glob was expanded only when the first finding was matched, after the model was
    paid, and the review's result was lost in a traceback."""
    braces = "{" + ",".join(f"d{n}" for n in range(65)) + "}"
    repo.write(
        ".reviewer/ignore.toml",
        f'[[ignore]]\npath = "{braces}/*.py"\nrule = "bug"\nreason = "generated"\n',
    )
    repo.write("app.py", "def total(items):\n    return sum(items)\n")
    repo.commit("base")
    repo.write("app.py", "def total(items):\n    return sum(items) / len(items)\n")
    repo.commit("divide")
    with FakeLLM([submit()]) as llm:
        proc = reviewer(
            "review", "--repo", str(repo.root), "--base", "HEAD~1", "--quiet", env=model_env(llm)
        )
        asked = len(llm.bodies)
    refused(proc, ".reviewer/ignore.toml", "entry 1", "64 alternatives")
    assert asked == 0


def test_a_report_path_that_cannot_be_written_is_refused_before_the_model(
    change: GitRepo, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with FakeLLM([submit()]) as llm:
        proc = reviewer(
            "review", "--repo", str(change.root), "--base", "HEAD~1", "--quiet",
            "--format", "json", "--output", str(blocker / "dir" / "a.json"), env=model_env(llm),
        )  # fmt: skip
        asked = len(llm.bodies)
    refused(proc, "cannot write the report")
    assert asked == 0


def test_the_actions_report_path_is_checked_before_the_model(
    github: FakeGitHub,  # noqa: F811
    pr_repo: GitRepo,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`reviewer github` writes its JSON report and the SARIF beside it after the review: a
    REVIEWER_REPORT that cannot be written lost the paid review; now it is never asked."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    report = str(blocker / "reviewer-report.json")
    run = run_action(
        github, pr_repo.root, [submit()], tmp_path, monkeypatch, capsys, REVIEWER_REPORT=report
    )
    assert run.code == 2
    assert run.llm_bodies == []
    assert "cannot write the report" in run.err and "Traceback" not in run.err
    assert run.outputs.get("status") == "not-reviewed"


# --- whatever else goes wrong ------------------------------------------------------------------


def test_an_unexpected_error_is_exit_2_and_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one exit point turns a defect into exit 2 (could not complete), never 1."""
    import reviewer.cli.parser as parser
    import reviewer.cli.program as cli

    def broken(_args: object) -> int:
        raise RuntimeError("a defect\nwith a second line")

    monkeypatch.setattr(parser, "stats_command", broken)  # the handler the parser names
    monkeypatch.delenv("REVIEWER_DEBUG", raising=False)
    code = cli.main(["stats", "x.json"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "RuntimeError" in err and "REVIEWER_DEBUG" in err
    monkeypatch.setenv("REVIEWER_DEBUG", "1")
    assert cli.main(["stats", "x.json"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_an_eval_out_folder_that_cannot_be_written_is_refused_before_any_case(
    tmp_path: Path,
) -> None:
    """results.json was written after every case was run and judged (and paid)."""
    dataset = tmp_path / "one.json"
    case = {"id": "c1", "commits": [{"files": {"a.py": "x = 1\n"}}, {"files": {"a.py": "x = 2\n"}}]}
    dataset.write_text(json.dumps({"format": "reviewer-eval", "cases": [case]}))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with FakeLLM([submit()]) as llm:
        proc = reviewer(
            "eval", str(dataset), "--judge", "location", "--cache", str(tmp_path / "c"),
            "--out", str(blocker / "out"), env=model_env(llm),
        )  # fmt: skip
        asked = len(llm.bodies)
    refused(proc, "cannot write the results")
    assert asked == 0


# --- a generated-file mark is the base's word, not the change's ------------------------------


def _skipped_as(repo: GitRepo, base: dict[str, str], head: dict[str, str]) -> dict[str, str | None]:
    from reviewer.change import load_change
    from reviewer.change.selection import select_files
    from reviewer.settings.config import Settings

    for path, text in base.items():
        repo.write(path, text)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for path, text in head.items():
        repo.write(path, text)
    repo.commit("change")
    change = load_change(repo.root, "main", "HEAD")
    return {c.path: c.reason for c in select_files(change, Settings()) if not c.reviewed}


def test_a_change_cannot_skip_its_own_file_by_calling_it_generated(repo: GitRepo) -> None:
    # A hand-written file with a backdoor, which the change itself marks as generated in its
    # first lines: the mark is the change's own words, so the file is reviewed. (Before: the
    # whole file was skipped as "generated file" and the gate stayed green over it.)
    backdoor = "import os\n\ndef run(cmd):\n    os.system(cmd)\n"
    skipped = _skipped_as(
        repo,
        {"app.py": "def run(cmd):\n    return None\n", "seed.txt": "seed\n"},
        {
            "app.py": "# Not auto-generated: written by hand.\n" + backdoor,
            "tools.py": "# Code generated by hand. DO NOT EDIT.\n" + backdoor,
            "lib.py": "// @generated\n" + backdoor,
        },
    )
    assert skipped == {}


def test_a_file_the_base_already_marks_as_generated_is_still_skipped(repo: GitRepo) -> None:
    # The plain real case: a generated file regenerated (its header's version changes too).
    header = "# Code generated by schema-gen {}. DO NOT EDIT.\n"
    skipped = _skipped_as(
        repo,
        {"src/schema.py": header.format("1.0") + "X = 1\n"},
        {"src/schema.py": header.format("1.1") + "X = 2\n"},
    )
    assert skipped == {"src/schema.py": "generated file"}
