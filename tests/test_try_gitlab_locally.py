"""docs/gitlab.md's "Try `reviewer gitlab` locally" is code: its commands, as written (only the
ports are made free ones), are typed into one real bash session in a temporary repository,
as a person would: start the fakes, run, people act (a Reporter, a Developer), push a commit,
run again. The fakes and `reviewer` are real programs over real HTTP; the test reads what the
person would read: what the fake printed, the log, and the fake's state file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GIT_IDENTITY, GitRepo
from tests.docs import doc_block
from tests.gitlab_fixtures import make_merge_request
from tests.test_gitlab_flow import BOT, SUMMARY_MARKER, finding, submit
from tests.test_try_github_locally import Shell, free_port

BLOCKS = ("gitlab-local-fakes", "gitlab-local-run", "gitlab-local-act", "gitlab-local-push")


@pytest.fixture
def session_env() -> dict[str, str]:
    """The machine's environment without any job's variables, the venv's programs first."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("CI_", "GITLAB_", "GITHUB_", "OPENAI_", "REVIEWER_", "RUNNER_"))
    }
    bin_dir = str(Path(sys.executable).parent)
    env.update(GIT_IDENTITY)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", NO_PROXY="127.0.0.1")
    env.update(no_proxy="127.0.0.1", NO_COLOR="1")
    return env


def bot_notes(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for d in state["discussions"] for n in d["notes"] if n["author"] == BOT]


def test_the_docs_commands_run_reviewer_gitlab_around_people_and_a_push(
    repo: GitRepo, session_env: dict[str, str]
) -> None:
    start, run, people_act, push_and_run = (doc_block(name) for name in BLOCKS)
    make_merge_request(repo)
    llm_port, gitlab_port = free_port(), free_port()

    def ported(block: str) -> str:
        return block.replace("8000", str(llm_port)).replace("8002", str(gitlab_port))

    # The model finds one problem (the added line 31 of app.py), on every request.
    (repo.root / "script.json").write_text(json.dumps([submit(finding("Added line"))]))
    state_file = repo.root / ".git" / "fake-gitlab.json"
    gitlab_url = f"http://127.0.0.1:{gitlab_port}"
    shell = Shell(repo.root, session_env)
    try:
        shell.type(ported(start))
        waiting = {gitlab_url, f"http://127.0.0.1:{llm_port}/v1"}
        printed: list[str] = []

        def all_ready(line: str) -> bool:
            printed.append(line)
            waiting.discard(line)
            last = any(line.startswith("export REVIEWER_REPORTS_DIR=") for line in printed)
            return not waiting and last

        shell.until(all_ready, timeout=30)
        # fake_gitlab --env printed the job's environment: every variable reviewer gitlab reads.
        exported = {line.split("=", 1)[0].removeprefix("export ") for line in printed
                    if line.startswith("export ")}  # fmt: skip
        assert {"GITLAB_CI", "CI_PIPELINE_SOURCE", "CI_API_V4_URL", "CI_PROJECT_ID",
                "CI_MERGE_REQUEST_IID", "CI_MERGE_REQUEST_DIFF_BASE_SHA", "CI_COMMIT_SHA",
                "REVIEWER_GITLAB_TOKEN"} <= exported  # fmt: skip

        code, first = shell.step(ported(run))
        assert code == 0, "\n".join(first)  # fail-on defaults to none
        state = json.loads(state_file.read_text())
        summary, thread = bot_notes(state)
        assert summary["body"].startswith(SUMMARY_MARKER) and summary["id"] == 3000001
        assert thread["id"] == 3000002 and thread["position"]["new_line"] == 31  # the docs' id
        web = f"{gitlab_url}/acme/shop/-/merge_requests/1"
        assert first[-1] == (
            "reviewer: done (complete, exit 0): posted 1 discussion on lines, created the "
            "summary note; 1 open finding, highest severity high; "
            f"discussions {web}#note_3000002, summary {web}#note_3000001"
        )
        reports = repo.root / ".git" / "fake-gitlab-reports"
        assert {"reviewer-report.json", "gl-code-quality-report.json"} <= {
            path.name for path in reports.iterdir()
        }
        untracked = repo.git("status", "--porcelain", "--untracked-files=all")
        assert "reviewer-report" not in untracked, untracked

        # A Reporter's 👎 changes nothing; a Developer's resolve dismisses the finding.
        code, second = shell.step(ported(people_act))
        assert code == 0, "\n".join(second)
        assert second[:2] == ["rita did award", "dana did resolve"]
        assert "finding " in "\n".join(second) and "dismissed by dana (resolved the thread)" in (
            "\n".join(second)
        )
        assert second[-1].startswith("reviewer: done (complete, exit 0): ")
        assert "; 0 open findings;" in second[-1]
        state = json.loads(state_file.read_text())
        (summary,) = [n for n in bot_notes(state) if n["body"].startswith(SUMMARY_MARKER)]
        assert "dismissed by `dana` (resolved the thread)" in summary["body"]

        # A person addresses the review: the block commits on the branch, pushes, runs again.
        base_head = repo.head()
        code, third = shell.step(ported(push_and_run))
        assert code == 0, "\n".join(third)
        new_head = repo.head()
        assert new_head != base_head and repo.git("log", "-1", "--format=%s").strip() == (
            "Address the review"
        )
        assert f"pushed: the head moved from {base_head[:12]} to {new_head[:12]}" in third
        assert len([line for line in third if "reviewing what changed since" in line]) == 1
        state = json.loads(state_file.read_text())
        assert state["versions"][-1]["head_sha"] == new_head
        notes = bot_notes(state)
        assert [n["id"] for n in notes] == [3000001, 3000002]  # nothing posted twice
        assert third[-1].startswith(
            "reviewer: done (complete, exit 0): posted no discussion (no new finding to "
            "comment on a line), edited the summary note; 0 open findings;"
        )
    finally:
        shell.close()
