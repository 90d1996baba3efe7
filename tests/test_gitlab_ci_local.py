"""The GitLab job as GitLab runs it: docs/examples/gitlab-ci.yml, the job users copy, run by
gitlab-ci-local (npm; the shell executor, no Docker) against the fake GitLab and the scripted
model on 127.0.0.1, as tests/test_action_workflow.py runs the Action with act.

gitlab-ci-local evaluates the job's `rules:` against the pipeline's variables (a merge request
pipeline's CI_* are passed with `--variable`), runs its `script:` in the checkout and keeps
its `artifacts:` (`when: always`). The job's `pip install` installs nothing: its package is
`reviewer`, which the test's own environment (first on PATH, no package index) already holds,
installed from this checkout.

gitlab-ci-local 4.65.0 is the last release that runs on Node 20; it is installed with npm
once per run of the suite, into reviewer-tests/ of the session's temporary $XDG_CACHE_HOME
(tests/conftest.py: no test writes to the user's home). Without npm, or without rsync (which
gitlab-ci-local calls), the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewer.testing.fake_gitlab import FakeGitLab
from reviewer.testing.fake_llm import FakeLLM
from tests.conftest import GitRepo
from tests.docs import doc_block
from tests.gitlab_fixtures import make_merge_request
from tests.test_gitlab_flow import API_KEY, BOT, SUMMARY_MARKER, finding, submit

PROJECT = Path(__file__).resolve().parents[1]
JOB_FILE = PROJECT / "docs" / "examples" / "gitlab-ci.yml"
VERSION = "4.65.0"
NO_NETWORK = "http://127.0.0.1:9"
TIMEOUT = 240


def gitlab_ci_local() -> str:
    """gitlab-ci-local from the cache folder, installed there with npm when missing."""
    for tool in ("npm", "rsync", "git"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: gitlab-ci-local needs it")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "reviewer-tests" / f"gitlab-ci-local-{VERSION}"
    binary = folder / "node_modules" / ".bin" / "gitlab-ci-local"
    if not binary.is_file():
        proc = subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder),
             f"gitlab-ci-local@{VERSION}"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        if proc.returncode != 0 or not binary.is_file():
            pytest.skip(f"npm could not install gitlab-ci-local@{VERSION}: {proc.stderr[-500:]}")
    return str(binary)


def test_the_documented_job_reviews_a_merge_request_under_gitlab_ci_local(
    repo: GitRepo, tmp_path: Path
) -> None:
    binary = gitlab_ci_local()
    make_merge_request(repo)
    repo.git("remote", "add", "origin", "https://gitlab.example/acme/shop.git")
    shutil.copy(JOB_FILE, repo.root / ".gitlab-ci.yml")  # untracked: not part of the change
    head = repo.head()
    base = repo.git("merge-base", "main", head).strip()
    offline = {
        "HTTP_PROXY": NO_NETWORK,
        "HTTPS_PROXY": NO_NETWORK,
        "http_proxy": NO_NETWORK,
        "https_proxy": NO_NETWORK,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    with FakeGitLab(repo.root, project_id=7, iid=1) as fake, FakeLLM(
        [submit(finding("Added line", line=31))]
    ) as llm:
        variables = {
            "GITLAB_CI": "true",
            "CI_PIPELINE_SOURCE": "merge_request_event",
            "CI_SERVER_URL": fake.url,
            "CI_API_V4_URL": fake.api_url,
            "CI_PROJECT_ID": "7",
            # gitlab-ci-local names a job with an `image:` /builds/... even when the shell
            # executor runs it in the checkout; GitLab's runner starts the job in it.
            "CI_PROJECT_DIR": str(repo.root),
            "CI_MERGE_REQUEST_IID": "1",
            "CI_MERGE_REQUEST_PROJECT_ID": "7",
            "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "7",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA": base,
            "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
            "CI_COMMIT_SHA": head,
            # The masked CI/CD variables a project sets (docs/gitlab.md).
            "REVIEWER_GITLAB_TOKEN": fake.token,
            "OPENAI_API_KEY": API_KEY,
            "OPENAI_BASE_URL": llm.base_url,
            "REVIEWER_MODEL": "fake-model",
            "REVIEWER_MAX_RETRIES": "0",
            "REVIEWER_FAIL_ON": "high",
            # The job's install: the package the test's environment already has, no index.
            "INSTALL_REVIEWER": "reviewer",
            "PIP_NO_INDEX": "1",
            "PIP_CONFIG_FILE": os.devnull,
        }
        command = [binary, "--force-shell-executor", "--ignore-predefined-vars",
                   ",".join(n for n in variables if n.startswith(("CI_", "GITLAB_")))]  # fmt: skip
        for name, value in variables.items():
            command += ["--variable", f"{name}={value}"]
        env = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(tmp_path),
            "LANG": "C.UTF-8",
            "TMPDIR": str(tmp_path),
            **offline,
        }
        proc = subprocess.run(
            [*command, "reviewer"],
            cwd=repo.root, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        log = proc.stdout + proc.stderr
        discussions = fake.discussions
    # One high finding: the job fails (exit 1 gates, as on GitHub), after posting.
    assert "reviewer $ reviewer gitlab" in log, log[-4000:]
    assert "done (complete, exit 1)" in log, log[-4000:]
    assert proc.returncode != 0, log[-4000:]
    threads = [d for d in discussions if d["notes"][0].get("position")]
    assert [(d["notes"][0]["position"]["new_line"], d["notes"][0]["author"]["username"])
            for d in threads] == [(31, BOT)]  # fmt: skip
    summaries = [n for d in discussions for n in d["notes"]
                 if n["body"].startswith(SUMMARY_MARKER)]  # fmt: skip
    assert len(summaries) == 1
    # `artifacts: when: always` kept the reports of the failed job.
    kept = repo.root / ".gitlab-ci-local" / "artifacts" / "reviewer" / "reviewer-reports"
    quality = json.loads((kept / "gl-code-quality-report.json").read_text())
    assert [issue["location"]["lines"]["begin"] for issue in quality] == [31]
    assert (kept / "reviewer-report.json").is_file() and (kept / "summary.md").is_file()


def test_the_docs_show_the_job_the_test_runs() -> None:
    assert doc_block("gitlab-job") == JOB_FILE.read_text()
