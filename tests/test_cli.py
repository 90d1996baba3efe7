"""The command line, run as a user runs it: a real process, real repositories."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reviewer.tools import run_tool
from tests.conftest import GitRepo


def reviewer(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # REVIEWER_VERIFY stays: conftest turns verification off for these scripts.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("REVIEWER_") or k == "REVIEWER_VERIFY"
    }
    return subprocess.run(
        [sys.executable, "-m", "reviewer", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def small(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "def main():\n    return 1\n")
    repo.commit("first")
    repo.write("app.py", "def main():\n    return 2\n")
    repo.commit("second")
    return repo


def test_tool_prints_exactly_what_the_model_sees(small: GitRepo) -> None:
    proc = reviewer("tool", "read_file", '{"path": "app.py"}', "--repo", str(small.root))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run_tool("read_file", {"path": "app.py"}, small.revision()).text + "\n"
    assert proc.stderr == ""


def test_tool_reads_a_given_revision_and_the_working_tree(small: GitRepo) -> None:
    small.write("app.py", "def main():\n    return 3\n")
    args = ("tool", "read_file_lines", '{"path":"app.py","startLine":2,"endLine":2}')
    old = reviewer(*args, "--repo", str(small.root), "--rev", "HEAD~1")
    head = reviewer(*args, cwd=small.root)
    disk = reviewer(*args, "--uncommitted", cwd=small.root)
    assert (old.stdout, head.stdout, disk.stdout) == (
        "2:     return 1\n",
        "2:     return 2\n",
        "2:     return 3\n",
    )


def test_tool_error_exits_1(small: GitRepo) -> None:
    proc = reviewer("tool", "read_file", '{"path": "../x"}', "--repo", str(small.root))
    assert proc.returncode == 1
    assert proc.stdout == (
        "Error: Access denied: path '../x' resolves outside the working directory.\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("tool", "read_file", "{}", "--rev", "no-such-branch"),
            "unknown revision 'no-such-branch'",
        ),
        (("tool", "read_file", "{}", "--rev=--all"), "invalid revision '--all'"),
        (
            ("tool", "read_file", "{}", "--rev"),
            "expected one argument (see `reviewer tool --help`)",
        ),
        (("tool",), "the following arguments are required: name"),
        (("tool", "write_file", "{}"), "unknown tool 'write_file'"),
    ],
)
def test_bad_input_is_a_one_line_error_with_exit_2(
    small: GitRepo, args: tuple[str, ...], message: str
) -> None:
    proc = reviewer(*args, cwd=small.root)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and message in proc.stderr


def test_outside_a_repository(tmp_path: Path) -> None:
    proc = reviewer("tool", "list_files", "{}", "--repo", str(tmp_path))
    assert proc.returncode == 2
    assert "not inside a git repository" in proc.stderr
    missing = reviewer("tool", "list_files", "{}", "--repo", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_a_repository_without_commits(make_repo) -> None:
    empty = make_repo("empty")
    empty.write("a.txt", "hello\n")
    proc = reviewer("tool", "read_file", '{"path":"a.txt"}', cwd=empty.root)
    assert (
        proc.returncode == 2 and "no commits yet" in proc.stderr and "--uncommitted" in proc.stderr
    )
    disk = reviewer("tool", "read_file", '{"path":"a.txt"}', "--uncommitted", cwd=empty.root)
    assert disk.returncode == 0 and disk.stdout == "hello\n"


def test_tools_lists_every_tool_and_json_is_what_the_model_is_offered() -> None:
    """submit_review too: the model is offered it, and a script for the fake model writes
    its arguments, so both listings show it and its finding fields."""
    from reviewer.review.submission import FindingIn, review_tools

    listing = reviewer("tools")
    assert listing.returncode == 0
    for schema in review_tools():
        assert "\n" + schema["function"]["name"] + "(" in "\n" + listing.stdout
    assert [s["function"]["name"] for s in review_tools()][-1] == "submit_review"
    assert "submit_review(summary: string, findings: array)  [the model's final answer" in (
        listing.stdout
    )
    for field in FindingIn.model_fields:
        assert f" {field}" in listing.stdout.split("each of findings:")[1]
    as_json = reviewer("tools", "--json")
    assert json.loads(as_json.stdout) == review_tools()
    ran = reviewer("tool", "submit_review", "{}")
    assert ran.returncode == 2 and "the model's final answer, not a tool to run" in ran.stderr


def test_version_and_help() -> None:
    from reviewer import __version__

    assert reviewer("--version").stdout == f"reviewer {__version__}\n"
    helped = reviewer("--help")
    assert helped.returncode == 0 and "tool" in helped.stdout


def test_review_help_names_every_report_format() -> None:
    # The help is written out (reviewer.report is too heavy to import for --help); this keeps
    # it equal to the registry.
    from reviewer.report import FORMATS

    helped = " ".join(reviewer("review", "--help").stdout.split())
    listed = re.search(r"--format FORMAT\[=FILE\] (.+?); repeat", helped)
    assert listed is not None
    assert set(re.split(r", | or ", listed.group(1))) == set(FORMATS)


def test_help_and_version_do_not_import_the_heavy_clients() -> None:
    """Start-up stays fast: the clients and validation libraries load only when a command
    needs them."""
    probe = (
        "import sys\n"
        "from reviewer.cli.program import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = {'openai', 'github', 'pydantic', 'jinja2', 'httpx', 'requests', 'git'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip().endswith("[]"), proc.stdout


@pytest.mark.parametrize(
    ("option", "make", "message"),
    [
        ("--transcript", "folder", "cannot write the transcript to {p}: it is a directory"),
        ("--format=json=", "folder", "cannot write the report to {p}: it is a directory"),
        (
            "--format=json=",
            "under_a_file",
            "cannot write the report to {p}: {p.parent} is a file, not a directory",
        ),
        (
            "--transcript",
            "under_a_file",
            "cannot write the transcript to {p}: {p.parent} is a file, not a directory",
        ),
        ("--format=sarif=", "fifo", "cannot write the report to {p}: it is a FIFO (named pipe)"),
        ("--transcript", "fifo", "cannot write the transcript to {p}: it is a FIFO (named pipe)"),
    ],
)
def test_an_output_file_that_cannot_be_written_is_named_before_the_review(
    small: GitRepo, tmp_path: Path, option: str, make: str, message: str
) -> None:
    """Each case gets its own reason and names the file as what it is (report, transcript);
    the check comes before the model is asked, so no model is configured here."""
    if make == "folder":
        path = tmp_path / "out"
        path.mkdir()
    elif make == "under_a_file":
        (tmp_path / "plain").write_text("x", encoding="utf-8")
        path = tmp_path / "plain" / "review.json"
    else:
        path = tmp_path / "pipe"
        os.mkfifo(path)
    args = [option + str(path)] if option.endswith("=") else [option, str(path)]
    proc = reviewer("review", "--base", "HEAD~1", *args, cwd=small.root)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert message.format(p=path) in proc.stderr
    if make == "fifo":
        assert path.is_fifo()  # left as it was


def test_missing_folders_of_an_output_file_are_created(small: GitRepo, tmp_path: Path) -> None:
    from reviewer.report import check_writable, write_text

    target = tmp_path / "new" / "deeper" / "review.json"
    check_writable(target)
    write_text("{}\n", target)
    assert target.read_text(encoding="utf-8") == "{}\n"


def test_tool_reads_the_left_side_at_a_base_it_is_given(small: GitRepo) -> None:
    """`side: LEFT` reads the base, as in a review: `reviewer tool` takes it as --base, and
    without it the error says so (not "this review", which there is none of)."""
    args = ("tool", "read_file_lines", '{"path":"app.py","startLine":2,"endLine":2,"side":"LEFT"}')
    left = reviewer(*args, "--base", "HEAD~1", cwd=small.root)
    assert (left.returncode, left.stdout) == (0, "2:     return 1\n"), left.stderr
    small.write("app.py", "def main():\n    return 3\n")
    on_disk = reviewer(*args, "--base", "HEAD~1", "--uncommitted", cwd=small.root)
    assert on_disk.stdout == "2:     return 1\n"
    without = reviewer(*args, cwd=small.root)
    assert without.returncode == 1
    assert "--base REV" in without.stdout and "this review" not in without.stdout
    unknown = reviewer(*args, "--base", "no-such-branch", cwd=small.root)
    assert unknown.returncode == 2 and "unknown revision 'no-such-branch'" in unknown.stderr


def test_help_names_the_model_variables_the_report_files_and_every_exit_code() -> None:
    review = reviewer("review", "--help").stdout
    for name in ("REVIEWER_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        assert name in review
    assert "FORMAT=FILE writes that report to FILE" in " ".join(review.split())
    tool = " ".join(reviewer("tool", "--help").stdout.split())
    assert "Exit 0 on success, 1 when the tool answered with an error, 2 for bad input" in tool
    assert "--base REV" in tool


def test_github_help_names_every_variable_it_reads() -> None:
    # REVIEWER_STATE_KEY and REVIEWER_BOT_LOGIN were read by `reviewer github` and named in
    # no help; the help is made from the one table of such variables.
    from reviewer.settings.variables import variables_of

    helped = " ".join(reviewer("github", "--help").stdout.split())
    for name in variables_of("github"):
        assert name in helped, name
    assert "REVIEWER_STATE_KEY" in helped and "REVIEWER_BOT_LOGIN" in helped
