"""The GitHub Actions environment: events, outputs, masks and workflow commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.errors import ReviewerError
from reviewer.github.actions import add_mask, load_context, write_outputs
from reviewer.safety.sinks import command_line


def event_file(tmp_path: Path, event: dict) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return str(path)


def pr_event(fork: bool = False) -> dict:
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "title": "Add average",
            "body": None,
            "base": {"ref": "main", "sha": "a" * 40, "repo": {"full_name": "acme/shop"}},
            "head": {
                "ref": "feature",
                "sha": "b" * 40,
                "repo": {"full_name": "someone/shop" if fork else "acme/shop"},
            },
        },
    }


def env_for(tmp_path: Path, event: dict, name: str = "pull_request") -> dict[str, str]:
    return {
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": event_file(tmp_path, event),
        "GITHUB_REPOSITORY": "acme/shop",
        "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
        "GITHUB_SERVER_URL": "https://ghe.example.com",
        "GITHUB_RUN_ID": "99",
        "GITHUB_TOKEN": "t",
    }


def test_pull_request_event(tmp_path: Path) -> None:
    context = load_context(env_for(tmp_path, pr_event()))
    pull = context.pull_request
    assert (pull.number, pull.base_sha, pull.head_sha) == (7, "a" * 40, "b" * 40)
    assert pull.body == "" and pull.is_fork is False
    assert context.api_url == "https://ghe.example.com/api/v3"
    assert context.run_url == "https://ghe.example.com/acme/shop/actions/runs/99"
    assert context.run_id == "99-1"


def test_fork_and_deleted_fork(tmp_path: Path) -> None:
    assert load_context(env_for(tmp_path, pr_event(fork=True))).pull_request.is_fork
    event = pr_event()
    event["pull_request"]["head"]["repo"] = None
    assert load_context(env_for(tmp_path, event, "pull_request_target")).pull_request.is_fork


def test_workflow_dispatch_takes_the_pr_input(tmp_path: Path) -> None:
    env = env_for(tmp_path, {"inputs": {"pr": "#12"}}, "workflow_dispatch")
    pull = load_context(env).pull_request
    assert pull.number == 12 and pull.head_sha is None
    with pytest.raises(ReviewerError, match="input named `pr`"):
        load_context(env_for(tmp_path, {"inputs": {}}, "workflow_dispatch"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"GITHUB_EVENT_PATH": ""}, "runs inside GitHub Actions"),
        ({"GITHUB_REPOSITORY": ""}, "OWNER/NAME"),
        ({"GITHUB_EVENT_NAME": "push"}, "this run is 'push'"),
        ({"GITHUB_EVENT_PATH": "/nonexistent/event.json"}, "cannot read the event file"),
    ],
)
def test_bad_environments(tmp_path: Path, change: dict, message: str) -> None:
    env = {**env_for(tmp_path, pr_event()), **change}
    with pytest.raises(ReviewerError, match=message):
        load_context(env)


REVIEW_COMMENT = {"action": "created", "comment": {"id": 5, "body": "@reviewer why?"},
                  "pull_request": pr_event()["pull_request"]}  # fmt: skip
ISSUE_COMMENT = {"action": "created", "comment": {"id": 6, "body": "/review"},
                 "issue": {"number": 7, "pull_request": {}}}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "event", "holds"),
    [
        # A shell that kept pull_request after `fake_github act --trigger`: it reviewed.
        ("pull_request", REVIEW_COMMENT, "a review comment ('pull_request_review_comment')"),
        ("pull_request_target", ISSUE_COMMENT, "the conversation ('issue_comment')"),
        ("workflow_dispatch", pr_event(), "a pull request event"),
        # And the reverse, after a push: it said "no comment object with an id".
        ("pull_request_review_comment", pr_event(), "a pull request event"),
        ("issue_comment", REVIEW_COMMENT, "a review comment"),
        ("pull_request_review_comment", ISSUE_COMMENT, "a comment on the conversation"),
        ("issue_comment", {"inputs": {"pr": "7"}}, "a manual run (workflow_dispatch)"),
    ],
)
def test_an_event_file_of_another_event_than_its_name_is_refused(
    tmp_path: Path, name: str, event: dict, holds: str
) -> None:
    env = env_for(tmp_path, event, name)
    with pytest.raises(ReviewerError) as refused:
        load_context(env)
    message = str(refused.value)
    assert message.startswith(
        f"GITHUB_EVENT_NAME is '{name}' but the event file {env['GITHUB_EVENT_PATH']} holds "
    )
    assert holds in message and "\n" not in message


@pytest.mark.parametrize(
    ("name", "event"),
    [
        ("pull_request", pr_event()),
        ("pull_request_target", pr_event()),
        ("pull_request_review_comment", REVIEW_COMMENT),
        ("issue_comment", ISSUE_COMMENT),
        ("workflow_dispatch", {"inputs": {"pr": "7"}}),
    ],
)
def test_an_event_file_of_its_own_event_is_read(tmp_path: Path, name: str, event: dict) -> None:
    assert load_context(env_for(tmp_path, event, name)).pull_request.number == 7


def test_outputs_single_and_multiline(tmp_path: Path) -> None:
    path = tmp_path / "out"
    write_outputs(path, {"findings": "3", "notes": "a\nb"})
    text = path.read_text()
    assert text.startswith("findings=3\nnotes<<ghadelimiter_")
    delimiter = text.splitlines()[1].split("<<")[1]
    assert text.endswith(f"a\nb\n{delimiter}\n")


def test_workflow_commands_escape_like_the_toolkit(capsys: pytest.CaptureFixture[str]) -> None:
    # A carriage return is shown as a line end (it could overwrite a line in a terminal).
    assert command_line("notice", "50%\r\nx") == "::notice::50%25%0Ax"
    assert command_line("notice", "m", title="a:b,c") == "::notice title=a%3Ab%2Cc::m"
    line = command_line("error", "bad\nthing", file="src/a,b.py", line=3, endLine=None)
    assert line == "::error file=src/a%2Cb.py,line=3::bad%0Athing"
    add_mask("s3cret\nsecond")
    assert capsys.readouterr().out == "::add-mask::s3cret\n::add-mask::second\n"
