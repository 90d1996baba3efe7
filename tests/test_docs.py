"""The documentation holds together: every command block in README.md, CONTRIBUTING.md and
docs/*.md has a name and a test that runs it, links between the pages lead somewhere, the
settings shown are settings reviewer accepts, and the synopses name the options the commands
take. Where each block runs:

- install, fake-model: tests/test_readme.py; local-fakes, local-run, local-push, local-act,
  local-trigger: tests/test_try_github_locally.py; gitlab-local-fakes, gitlab-local-run,
  gitlab-local-act, gitlab-local-push: tests/test_try_gitlab_locally.py; release:
  tests/test_release.py; lint:
  tests/test_lint.py;
  action-workflow(-readme): tests/test_action_yaml.py (and tests/test_action_workflow.py runs
  that workflow with act);
- local, ci-report, ci-gate, dry-run, reviewdog, tool-examples, eval-sample, eval-tickets,
  eval-martian: tests/test_doc_commands.py;
- test-suite, contributing-test-suite, one-test-file, review-usage, tool-usage: here.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from reviewer.settings.ignore_file import parse_ignore_file
from reviewer.settings.layers import _file_layer, resolve_settings
from tests.docs import PROJECT, blocks, command_blocks, doc_block, pages

TESTS = Path(__file__).resolve().parent


def test_every_command_block_has_a_name_and_a_test_that_asks_for_it() -> None:
    unnamed = [block.where for block in command_blocks() if block.name is None]
    assert not unnamed, f"command blocks without <!-- block: NAME -->: {unnamed}"
    names = [block.name for block in blocks() if block.name]
    assert len(names) == len(set(names)), "a block name is used twice"
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for path in TESTS.glob("test_*.py")
        if "from tests.docs import" in path.read_text(encoding="utf-8")
    )
    untested = [
        block.where + f" ({block.name})"
        for block in command_blocks()
        if f'"{block.name}"' not in sources
    ]
    assert not untested, f"no test asks for these command blocks: {untested}"


def test_contributing_names_every_program_the_tests_need() -> None:
    """A program a test looks for (and fails or is skipped without) is listed in
    CONTRIBUTING's "What the suite needs": rsync, which gitlab-ci-local calls, was not."""
    text = (PROJECT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    needs = text.split("### What the suite needs")[1].split("\n## ")[0]
    sources = "\n".join(path.read_text(encoding="utf-8") for path in TESTS.glob("test_*.py"))
    looked_for = set(re.findall(r'shutil\.which\("([\w-]+)"', sources))
    for listed in re.findall(r"for tool in \(([^)]*)\):\n\s+if shutil\.which\(tool\)", sources):
        looked_for |= set(re.findall(r'"([\w-]+)"', listed))
    assert {"git", "rsync", "npm", "openssl", "act", "actionlint", "ruff"} <= looked_for
    missing = sorted(name for name in looked_for if f"`{name}`" not in needs)
    assert missing == [], f"CONTRIBUTING.md's 'What the suite needs' does not name {missing}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def test_links_between_pages_lead_to_a_file_and_a_heading() -> None:
    broken = []
    for page in pages():
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address: no test touches the network
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_every_toml_block_is_one_reviewer_accepts() -> None:
    """A settings block resolves to settings (unknown keys and bad values are refused); an
    ignore file block parses as one."""
    toml_blocks = [block for block in blocks() if block.lang == "toml"]
    assert len(toml_blocks) >= 6
    for block in toml_blocks:
        data = tomllib.loads(block.text)
        if "ignore" in data:
            assert parse_ignore_file(block.text, block.where).entries, block.where
        else:
            resolve_settings([_file_layer(block.where, data)])


def test_ci_runs_exactly_the_readme_test_command() -> None:
    command = doc_block("test-suite").strip()
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == command
    assert doc_block("contributing-test-suite").strip() == command


def test_the_one_test_file_commands_run_the_tests_they_name() -> None:
    lines = doc_block("one-test-file").strip().splitlines()
    assert len(lines) == 2
    counts = []
    for line in lines:
        command = line.replace(".venv/bin/python", sys.executable)
        proc = subprocess.run(
            [*command.split()[:1], *command.split()[1:], "-p", "no:cacheprovider"],
            cwd=PROJECT, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        counts.append(int(re.search(r"(\d+) passed", proc.stdout).group(1)))
    assert counts[0] > counts[1] >= 1  # the file, then the one test `-k` picks


def _options(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][\w-]*", text)) - {"--help"}


@pytest.mark.parametrize(("name", "command"), [("review-usage", "review"), ("tool-usage", "tool")])
def test_a_synopsis_names_every_option_the_command_takes(name: str, command: str) -> None:
    synopsis = doc_block(name)
    assert synopsis.startswith(f"reviewer {command} ")
    usage = subprocess.run(
        [sys.executable, "-m", "reviewer", command, "--help"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout.split("\n\n", 1)[0]  # fmt: skip
    assert _options(synopsis) == _options(usage)
