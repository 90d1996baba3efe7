"""The README and its docs/ pages are code a newcomer runs and reference a script writer
reads: they are held to the code here, on real repositories with the package's own
executables."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import AliasChoices

from reviewer.findings import CATEGORIES, Severity
from reviewer.review.submission import FindingIn, SubmitReview
from reviewer.testing.fake_llm import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.docs import doc_block, section


def test_submit_review_fields_are_documented_as_the_model_declares_them() -> None:
    """A script for the fake model writes submit_review's arguments: the README lists every
    field of a finding, which may be left out, its other spellings, and the allowed values."""
    text = section("The answer: `submit_review`")
    for field in SubmitReview.model_fields:
        assert f"`{field}`" in text
    rows = dict(re.findall(r"^\| `(\w+\??)` \| (.*) \|$", text, re.M))
    documented = {name.rstrip("?"): (name.endswith("?"), what) for name, what in rows.items()}
    assert set(documented) == set(FindingIn.model_fields)
    for name, info in FindingIn.model_fields.items():
        optional, what = documented[name]
        assert optional == (not info.is_required()), name
        aliases = info.validation_alias
        others = (
            [a for a in aliases.choices if a != name] if isinstance(aliases, AliasChoices) else []
        )
        spelled = re.search(r"\(also (.*)\)", what)
        assert re.findall(r"`(\w+)`", spelled.group(1) if spelled else "") == others, name
    assert re.findall(r"`(\w+)`", documented["severity"][1]) == [s.value for s in Severity]
    assert re.findall(r"`(\w+)`", documented["category"][1]) == list(CATEGORIES)


def sh_block(name: str) -> str:
    """A named command block, run as a newcomer would from a clone, with this test's
    virtualenv standing for the clone's `.venv`."""
    return doc_block(name).replace(".venv/bin/", f"{Path(sys.executable).parent}/")


@pytest.fixture
def fresh_clone(make_repo: Callable[[str], GitRepo], tmp_path: Path) -> Path:
    """A fresh clone, as a newcomer has: origin/HEAD is the branch checked out, so the
    default base is the head itself. Its last commit changes two files."""
    origin = make_repo("origin")
    origin.write("app.py", "def total(prices):\n    return sum(prices)\n")
    origin.commit("first")
    origin.write("app.py", "def total(prices):\n    return sum(prices) * 100\n")
    origin.write("cents.py", "CENTS = 100\n")
    origin.commit("count in cents")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin.root), str(clone)], check=True)
    return clone


def newcomer_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWER_", "OPENAI_"))}
    return {**env, **extra}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_recipe_without_a_model_reviews_the_last_commit_and_stops_the_server(
    fresh_clone: Path, tmp_path: Path
) -> None:
    """The docs/tools.md block as it is (another free port for 8000, so parallel runs cannot
    clash): it reviews files of a real range, and leaves no process behind."""
    script = sh_block("fake-model")
    port = free_port()
    # Files, not pipes: a server left running would hold a pipe open past the shell's end.
    with (tmp_path / "out").open("w+") as stdout, (tmp_path / "err").open("w+") as stderr:
        proc = subprocess.Popen(
            ["sh", "-c", script.replace("8000", str(port))],
            cwd=fresh_clone,
            env=newcomer_env(),
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # its own process group: what it leaves running is found
        )
        try:
            proc.wait(timeout=120)
            deadline = time.monotonic() + 5
            while _group_alive(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            left_running = _group_alive(proc.pid)
        finally:
            if _group_alive(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
        out = (tmp_path / "out").read_text(encoding="utf-8")
        err = (tmp_path / "err").read_text(encoding="utf-8")
    assert proc.returncode == 0, err
    assert re.search(r"^Status: +complete$", out, re.M), out + err
    assert re.search(r"^Files: +2 reviewed, 0 not reviewed$", out, re.M), out + err
    assert not left_running, "the fake server is still running"


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def test_the_install_and_run_command_reviews_a_real_range(fresh_clone: Path) -> None:
    """The install command's review, run in a fresh clone (the virtualenv is this test's):
    it reviews the last commit's files, where the default base would review nothing."""
    command = sh_block("install").strip().split(" && ")[-1]
    submit = reply(tool_calls=[tool_call("submit_review", {"summary": "ok", "findings": []})])
    with FakeLLM([submit]) as llm:
        env = newcomer_env(OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="x", REVIEWER_MODEL="m")
        proc = subprocess.run(
            ["sh", "-c", command + " --quiet"],
            cwd=fresh_clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^Files: +2 reviewed, 0 not reviewed$", proc.stdout, re.M), proc.stdout
    llm.assert_no_failures()


def test_a_fresh_clone_without_a_base_is_told_how_to_give_one(fresh_clone: Path) -> None:
    with FakeLLM([]) as llm:
        env = newcomer_env(OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="x", REVIEWER_MODEL="m")
        proc = subprocess.run(
            [sys.executable, "-m", "reviewer", "review", "--quiet"],
            cwd=fresh_clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0 and llm.bodies == []
    assert "is the head itself, as on a fresh clone: give the base, such as --base HEAD~1" in (
        " ".join(proc.stdout.split())
    )


def test_exit_0_of_the_action_says_which_files_are_reviewed() -> None:
    """A complete run lists generated files (and the others below) as not reviewed and exits
    0: the exit-code paragraph must not promise that every file was reviewed, and names each
    reason `reviewer.change.selection.select_files` gives a file that is never reviewed."""
    text = section("Exit codes of the Action")
    paragraph = re.search(r"^Exit codes: `0` (.*?)`1`", text, re.S | re.M)
    assert paragraph
    text = " ".join(paragraph.group(1).split())
    assert "every file of the PR has been reviewed" not in text
    assert text.startswith("every file of the PR that is reviewed at all has been reviewed")
    never_reviewed = ("lock files", "vendored code", "generated files", "binary files",
                      "excluded by the settings", "not matched by `include`",
                      "over GitHub's per-file limit")  # fmt: skip
    for kind in never_reviewed:
        assert kind in text, kind


def test_a_scripted_question_is_documented_with_submit_answer() -> None:
    """A script for a question needs `submit_answer` (nothing said so): the README's example
    reply is one the answer loop accepts."""
    import json as json_module

    from reviewer.review.submission import SUBMIT_ANSWER, SubmitAnswer

    text = section("Test your prompts and settings without a model")
    match = re.search(r'`(\{"tool_calls": \[\{"name": "submit_answer".*?\}\]\})`', text)
    assert match, "the section shows no submit_answer reply"
    (call,) = json_module.loads(match.group(1))["tool_calls"]
    assert call["name"] == SUBMIT_ANSWER
    assert SubmitAnswer.model_validate(call["arguments"]).answer
