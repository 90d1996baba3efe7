"""docs/action.md's "Try `reviewer github` locally" is code: its commands, as written (only the
ports are made free ones), are typed into one real bash session in a temporary repository,
as a person would: start the fakes, run, push a commit, run again. The fakes and `reviewer`
are real programs over real HTTP; the test reads what the person would read: the log and
the fake's state file."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GIT_IDENTITY, GitRepo
from tests.docs import doc_block
from tests.test_action import finding, pr_repo, submit  # noqa: F401  (a fixture)

DONE = "__step_done__"
BOT = "github-actions[bot]"


def readme_blocks() -> list[str]:
    """The section's blocks in the order a person types them."""
    names = ("local-fakes", "local-run", "local-push", "local-act", "local-trigger")
    return [doc_block(name) for name in names]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Shell:
    """One bash session, fed commands on stdin; everything it and its jobs print, in order."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: the fakes' too
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.transcript: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def type(self, commands: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(commands + "\n")
        self.process.stdin.flush()

    def until(self, done: Callable[[str], bool], timeout: float = 120) -> list[str]:
        """Lines printed until `done(line)` is true for one (included)."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "timed out; the session printed:\n" + "\n".join(self.transcript)
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            seen.append(line)
            self.transcript.append(line)
            if done(line):
                return seen

    def step(self, commands: str) -> tuple[int, list[str]]:
        """Type commands, wait for them to end: their last exit code and what they printed."""
        self.type(f'{commands}\necho "{DONE} $?"')
        seen = self.until(lambda line: line.startswith(DONE))
        return int(seen[-1].split()[1]), seen[:-1]

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=10)


@pytest.fixture
def session_env() -> dict[str, str]:
    """The machine's environment without any run's settings, the venv's programs first."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("GITHUB_", "OPENAI_", "REVIEWER_", "RUNNER_"))
    }
    bin_dir = str(Path(sys.executable).parent)
    env.update(GIT_IDENTITY)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", NO_PROXY="127.0.0.1")
    env.update(no_proxy="127.0.0.1", NO_COLOR="1")
    return env


def test_the_readme_commands_run_reviewer_github_twice_around_a_push(
    pr_repo: GitRepo,  # noqa: F811
    session_env: dict[str, str],
) -> None:
    start, run, push_and_run, people_act, trigger = readme_blocks()
    llm_port, github_port = free_port(), free_port()

    answer_port = free_port()

    def ported(block: str) -> str:
        ports = {"8000": llm_port, "8001": github_port, "8002": answer_port}
        for documented, port in ports.items():
            block = block.replace(documented, str(port))
        return block

    # The model finds one problem, on every request.
    (pr_repo.root / "script.json").write_text(json.dumps([submit(finding())]))
    state_file = pr_repo.root / ".git" / "fake-state.json"
    github_url = f"http://127.0.0.1:{github_port}"
    shell = Shell(pr_repo.root, session_env)
    try:
        # Started in the background; ready once each has printed its URL.
        shell.type(ported(start))
        waiting = {github_url, f"http://127.0.0.1:{llm_port}/v1"}

        def all_ready(line: str) -> bool:
            waiting.discard(line)
            return not waiting

        shell.until(all_ready, timeout=30)

        code, first = shell.step(ported(run))
        assert code == 0, "\n".join(first)  # fail-on defaults to none
        state = json.loads(state_file.read_text())
        (review,) = state["reviews"]
        (comment,) = state["review_comments"]
        assert (comment["path"], comment["line"]) == ("app.py", 6)
        (summary,) = state["issue_comments"]
        assert summary["user"]["login"] == BOT
        assert first[-1] == (
            "reviewer: done (complete, exit 0): posted a review with 1 inline comment, "
            "created the summary comment; 1 open finding, highest severity high; "
            f"review {review['html_url']}, summary {summary['html_url']}"
        )

        # A person addresses the review: a new commit on the branch, pushed (the block as
        # written: it committed nothing before, "nothing to commit").
        code, second = shell.step(ported(push_and_run))
        new_head = pr_repo.head()
        assert code == 0, "\n".join(second)
        assert f"pushed: the head moved from {review['commit_id'][:12]} to {new_head[:12]}" in (
            second
        )
        event = json.loads((pr_repo.root / ".git" / "fake-event.json").read_text())
        assert (event["action"], event["after"]) == ("synchronize", new_head)
        scope = [line for line in second if "reviewing what changed since" in line]
        settings = [line for line in second if line.startswith("reviewer: settings: ")]
        assert len(scope) == len(settings) == 1
        assert second.index(settings[0]) < second.index(scope[0])
        state = json.loads(state_file.read_text())
        assert state["head_sha"] == new_head
        assert len(state["reviews"]) == 1 and len(state["review_comments"]) == 1  # not twice
        (edited,) = state["issue_comments"]
        assert edited["id"] == summary["id"] and edited["body"] != summary["body"]
        assert second[-1] == (
            "reviewer: done (complete, exit 0): posted no review (no new finding to comment "
            "on a line), edited the summary comment; 1 open finding, highest severity high; "
            f"summary {summary['html_url']}"
        )

        # The runs left their reports in the runner's temporary folder, not in the change
        # (they were untracked files of the repository, which `git add -A` would commit).
        untracked = pr_repo.git("status", "--porcelain", "--untracked-files=all")
        assert "reviewer-report" not in untracked, untracked
        temp = pr_repo.root / ".git" / "fake-runner-temp"
        assert sorted(path.name for path in temp.iterdir()) == [
            "reviewer-report.json",
            "reviewer-report.sarif",
        ]

        # People act between runs: a reader's 👎 changes nothing, a writer's "won't fix"
        # dismisses the finding, and the next run's gate clears.
        assert comment["id"] == 1500000001  # the id the README's commands name
        code, third = shell.step(ported(people_act))
        assert code == 0, "\n".join(third)
        assert third[:2] == ["mallory did react (comment 1500000001)",
                             "bob did reply (comment 1500000002)"]  # fmt: skip
        assert third[-1].startswith("reviewer: done (complete, exit 0): ")
        assert "; 0 open findings;" in third[-1]
        state = json.loads(state_file.read_text())
        (dismissed,) = state["issue_comments"]
        assert "dismissed by `bob` (replied “won't fix”): “legacy API”" in dismissed["body"]

        # A question in the thread, made the next run's event. A shell that kept the review's
        # GITHUB_EVENT_NAME is refused in one line (it reviewed again); the block sources the
        # --env file again, and the run answers.
        lines = ported(trigger).splitlines()
        ask = next(i for i, line in enumerate(lines) if "--trigger" in line)
        code, refused = shell.step("\n".join([*lines[: ask + 1], "reviewer github"]))
        said = [line for line in refused if line.startswith("reviewer:")]
        assert code == 2 and len(said) == 1, "\n".join(refused)
        error = "reviewer: error: GITHUB_EVENT_NAME is 'pull_request' but the event file "
        assert said[0].startswith(error), said[0]
        assert "holds a review comment ('pull_request_review_comment')" in said[0]
        code, answered = shell.step("\n".join(lines[ask + 1 :]))
        assert code == 0, "\n".join(answered)
        assert answered[-1].startswith("reviewer: done (answered, exit 0): 1 model request")
        state = json.loads(state_file.read_text())
        question, answer = state["review_comments"][-2:]
        assert (question["user"]["login"], question["body"]) == ("octocat", "@reviewer why?")
        assert answer["user"]["login"] == BOT and answer["in_reply_to_id"] == comment["id"]
        assert answer["body"].startswith("average(\\[\\]) divides by len(\\[\\]), which is 0.")

        # Stopping the fakes as the README says: they end cleanly, with nothing to report.
        code, stopped = shell.step("kill %1 %2; wait")
        assert not [line for line in stopped if line.startswith(("fake_github", "fake_llm"))]
    finally:
        shell.close()
    failures = [line for line in shell.transcript if line.startswith(("fake_github:", "fake_llm:"))]
    assert failures == []
