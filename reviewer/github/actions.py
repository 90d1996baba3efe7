"""The GitHub Actions side of the world: the run's environment and event, and the files and
workflow commands a step talks back through (outputs, job summary, masks, annotations).
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from reviewer.errors import ReviewerError, json_problem
from reviewer.findings import Finding
from reviewer.forge.interface import CommentEvent
from reviewer.report.github import annotations
from reviewer.safety.redact import Redactor
from reviewer.safety.sinks import command_line
from reviewer.safety.sinks import log as sinks_log

# A comment starts a run that answers it (forge/answer_flow.py); the others review.
COMMENT_EVENTS = ("pull_request_review_comment", "issue_comment")
SUPPORTED_EVENTS = ("pull_request", "pull_request_target", "workflow_dispatch", *COMMENT_EVENTS)
DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class PullRequestRef:
    """What the event says of the pull request; shas are None when only the number is known."""

    number: int
    base_sha: str | None = None
    head_sha: str | None = None
    base_ref: str = ""
    head_ref: str = ""
    title: str = ""
    body: str = ""
    is_fork: bool = False


@dataclass(frozen=True)
class CommentRef:
    """The comment a comment event is about (research file, "Events"): a review comment
    (`pull_request_review_comment`: in a thread on a line) or a comment on the conversation
    (`issue_comment`, of an issue or a pull request)."""

    id: int
    action: str  # created, edited or deleted
    body: str
    author: str
    # A review comment, in a thread whose first comment is `thread_id`; else a PR comment.
    in_thread: bool
    thread_id: int | None
    # An issue's comment events come to the same workflow: they are not questions for us.
    on_pull_request: bool
    pull_author: str


@dataclass(frozen=True)
class ActionsContext:
    event_name: str
    repository: str
    api_url: str
    server_url: str
    workspace: Path
    pull_request: PullRequestRef
    token: str | None
    output_file: Path | None
    summary_file: Path | None
    run_url: str | None
    run_id: str
    # The comment that started the run, for the comment events; None for the others.
    comment: CommentRef | None = None

    @property
    def owner_and_name(self) -> tuple[str, str]:
        owner, _, name = self.repository.partition("/")
        return owner, name

    def comment_event(self) -> CommentEvent | None:
        """The comment that started the run, as the core reads it."""
        c = self.comment
        if c is None:
            return None
        thread = None if c.thread_id is None else str(c.thread_id)
        return CommentEvent(
            c.id, c.action, c.body, c.author, c.in_thread, thread, c.on_pull_request
        )


def load_context(environ: Mapping[str, str]) -> ActionsContext:
    """Read the run's environment; every problem is one line that says what to fix."""
    event_name = environ.get("GITHUB_EVENT_NAME", "")
    event_path = environ.get("GITHUB_EVENT_PATH")
    repository = environ.get("GITHUB_REPOSITORY", "")
    if not event_path:
        raise ReviewerError(
            "GITHUB_EVENT_PATH is not set: `reviewer github` runs inside GitHub Actions; "
            "use `reviewer review` elsewhere"
        )
    if "/" not in repository:
        raise ReviewerError("GITHUB_REPOSITORY is not set to OWNER/NAME")
    event = _read_event(Path(event_path))
    if event_name not in SUPPORTED_EVENTS:
        raise ReviewerError(
            f"`reviewer github` reviews pull requests (events: {', '.join(SUPPORTED_EVENTS)}); "
            f"this run is '{event_name or 'unknown'}'"
        )
    _check_payload_matches(event_name, event, event_path)
    if event_name in COMMENT_EVENTS:
        pull, comment = _comment(event_name, event)
    else:
        pull, comment = _pull_request(event_name, event, environ), None
    server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    run_id = environ.get("GITHUB_RUN_ID", "")
    attempt = environ.get("GITHUB_RUN_ATTEMPT", "1")
    return ActionsContext(
        event_name=event_name,
        repository=repository,
        api_url=(environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
        server_url=server,
        workspace=Path(environ.get("GITHUB_WORKSPACE") or "."),
        pull_request=pull,
        token=environ.get("GITHUB_TOKEN") or environ.get("INPUT_GITHUB-TOKEN") or None,
        output_file=_optional_path(environ.get("GITHUB_OUTPUT")),
        summary_file=_optional_path(environ.get("GITHUB_STEP_SUMMARY")),
        run_url=f"{server}/{repository}/actions/runs/{run_id}" if run_id else None,
        run_id=f"{run_id}-{attempt}" if run_id else secrets.token_hex(6),
        comment=comment,
    )


def _read_event(path: Path) -> dict[str, Any]:
    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReviewerError(f"cannot read the event file {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ReviewerError(f"the event file {path} is not JSON: {exc.msg}") from exc
    except (ValueError, RecursionError) as exc:  # a number too long, or nested too deep
        raise ReviewerError(f"the event file {path} is not JSON: {json_problem(exc)}") from exc
    if not isinstance(event, dict):
        raise ReviewerError(f"the event file {path} does not hold an object")
    return event


# What tells the supported events' payloads apart (research: conversation-and-formats.md,
# "Events"; protocols.md 1.2): a comment event's has `comment`, with the `issue` for
# issue_comment or the `pull_request` for a review comment; a pull_request(_target) event's
# has `pull_request` and no comment; workflow_dispatch's has `inputs` or `workflow`.
_PAYLOAD_KINDS = {
    "pull_request": "a pull request event (opened, synchronize, ...)",
    "pull_request_review_comment": "a review comment",
    "issue_comment": "a comment on the conversation",
    "workflow_dispatch": "a manual run (workflow_dispatch)",
}


def _payload_kind(event: Mapping[str, Any]) -> str | None:
    """The event a payload is of, by its keys; None when they do not say."""
    on_pull = isinstance(event.get("pull_request"), dict)
    if isinstance(event.get("comment"), dict):
        if isinstance(event.get("issue"), dict):
            return "issue_comment"
        return "pull_request_review_comment" if on_pull else None
    if on_pull:
        return "pull_request"
    if "inputs" in event or "workflow" in event:
        return "workflow_dispatch"
    return None


def _check_payload_matches(event_name: str, event: Mapping[str, Any], event_path: str) -> None:
    """GitHub writes GITHUB_EVENT_NAME and the event file of one run; when they disagree (a
    shell that kept the name of an earlier run, a copied file) the run would do what the
    name says with what the file holds: review where a comment asked a question, or the
    reverse. Refused."""
    kind = _payload_kind(event)
    expected = "pull_request" if event_name == "pull_request_target" else event_name
    if kind is None or kind == expected:
        return
    raise ReviewerError(
        f"GITHUB_EVENT_NAME is '{event_name}' but the event file {event_path} holds "
        f"{_PAYLOAD_KINDS[kind]} ('{kind}'): they are not of the same run; set "
        "GITHUB_EVENT_NAME to the file's event (with the fake GitHub: source its --env file "
        "again after `act --trigger` or `push`)"
    )


def _pull_request(
    event_name: str, event: dict[str, Any], environ: Mapping[str, str]
) -> PullRequestRef:
    if event_name == "workflow_dispatch":
        inputs = event.get("inputs") or {}
        raw = (
            inputs.get("pr")
            or inputs.get("pull_request")
            or inputs.get("pr-number")
            or environ.get("REVIEWER_PR")
        )
        number = _pull_number(str(raw).strip().lstrip("#"))
        if number is None:
            raise ReviewerError(
                "workflow_dispatch needs the pull request number: add an input named `pr` "
                "to the workflow (or set REVIEWER_PR)"
            )
        return PullRequestRef(number=number)
    pull = event.get("pull_request")
    if not isinstance(pull, dict):
        raise ReviewerError(f"the {event_name} event has no pull_request object")
    base, head = pull.get("base") or {}, pull.get("head") or {}
    head_repo = head.get("repo") or {}
    base_repo = (base.get("repo") or {}).get("full_name")
    number = _pull_number(pull.get("number") or event.get("number"))
    if number is None:
        raise ReviewerError(f"the {event_name} event has no pull request number (1 to 10 digits)")
    return PullRequestRef(
        number=number,
        base_sha=base.get("sha"),
        head_sha=head.get("sha"),
        base_ref=base.get("ref", ""),
        head_ref=head.get("ref", ""),
        title=pull.get("title") or "",
        body=pull.get("body") or "",
        # A deleted fork has no head repo: treat it as a fork (its token is read-only).
        is_fork=not head_repo or head_repo.get("full_name") != base_repo,
    )


def _comment(event_name: str, event: dict[str, Any]) -> tuple[PullRequestRef, CommentRef]:
    """The pull request and the comment of a comment event. `issue_comment` has no
    pull_request object: its issue's number is the pull request's, its shas are read later."""
    comment = event.get("comment")
    if not isinstance(comment, dict) or not isinstance(comment.get("id"), int):
        raise ReviewerError(f"the {event_name} event has no comment object with an id")
    author = str((comment.get("user") or {}).get("login") or "")
    if event_name == "pull_request_review_comment":
        pull = _pull_request(event_name, event, {})
        root = comment.get("in_reply_to_id")
        return pull, CommentRef(
            id=comment["id"],
            action=str(event.get("action") or ""),
            body=str(comment.get("body") or ""),
            author=author,
            in_thread=True,
            thread_id=root if isinstance(root, int) else comment["id"],
            on_pull_request=True,
            pull_author=str(((event.get("pull_request") or {}).get("user") or {}).get("login")),
        )
    issue = event.get("issue")
    number = _pull_number(issue.get("number")) if isinstance(issue, dict) else None
    if not isinstance(issue, dict) or not isinstance(issue.get("number"), int) or number is None:
        raise ReviewerError("the issue_comment event has no issue object with a number")
    return PullRequestRef(number=number), CommentRef(
        id=comment["id"],
        action=str(event.get("action") or ""),
        body=str(comment.get("body") or ""),
        author=author,
        in_thread=False,
        thread_id=None,
        on_pull_request=bool(issue.get("pull_request")),
        pull_author=str((issue.get("user") or {}).get("login") or ""),
    )


def _pull_number(value: object) -> int | None:
    """A pull request number (GitHub's are positive and 32-bit), else None: an event or input
    of 5,000 digits is refused in one line, not carried into API paths and logs."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 10**10 else None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
        return int(value) or None
    return None


def require_model_key(context: ActionsContext, env: Mapping[str, str]) -> None:
    """Before anything is read or posted. A fork's `pull_request` run gets no secrets
    (GitHub's rule), which is worth its own explanation."""
    if (env.get("OPENAI_API_KEY") or "").strip():
        return
    if context.pull_request.is_fork and context.comment is not None:
        raise ReviewerError(
            "this pull request comes from a fork, and GitHub gives the workflows of its review "
            "comments no secrets, so OPENAI_API_KEY is empty; ask in a comment on the pull "
            "request instead (issue_comment runs in the base repository, with its secrets)"
        )
    if context.pull_request.is_fork:
        raise ReviewerError(
            "this pull request comes from a fork, and GitHub gives workflows that a fork "
            "triggers no secrets, so OPENAI_API_KEY is empty and nothing was reviewed; a "
            "maintainer can review it with workflow_dispatch, or the workflow can use "
            "pull_request_target (see docs/examples/review.yml in reviewer)"
        )
    raise ReviewerError(
        "missing the API key (OPENAI_API_KEY): pass `api-key: ${{ secrets.OPENAI_API_KEY }}` "
        "to the action (any value works for a local server)"
    )


def _optional_path(value: str | None) -> Path | None:
    return Path(value) if value else None


# --- talking back to the runner ------------------------------------------------------------


def add_mask(value: str | None, stream: TextIO | None = None) -> None:
    """Ask the runner to hide `value` in the log, before it could ever be printed."""
    if value and value.strip():
        for line in value.splitlines():
            if line.strip():
                print(f"::add-mask::{line.strip()}", file=stream or sys.stdout, flush=True)


def write_outputs(path: Path | None, outputs: Mapping[str, str]) -> None:
    if path is None:
        return
    with path.open("a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            if "\n" in value:
                delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
                handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
            else:
                handle.write(f"{name}={value}\n")


def append_summary(path: Path | None, markdown: str) -> None:
    if path is None:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")


def emit_command(command: str, message: str, **properties: str | int | None) -> None:
    """A workflow command on stdout, where the runner reads it."""
    print(command_line(command, message, **properties), flush=True)


log = sinks_log  # one line on stderr that the runner reads no command from


class ActionsCI:
    """The Actions job a run is in, as the core's CISide (interface.py)."""

    def __init__(self, context: ActionsContext, env: Mapping[str, str]) -> None:
        self.context = context
        self.env = env
        self.in_ci = env.get("GITHUB_ACTIONS") == "true"
        self.run_id = context.run_id
        self.repository = context.repository
        # The runner's temporary folder, outside the checkout.
        self.temp_dir = Path(env.get("RUNNER_TEMP") or ".")
        self.results_where = "the job summary and annotations"

    def log(self, message: str) -> None:
        log(message)

    def error(self, message: str, title: str | None = None) -> None:
        if title is None:
            emit_command("error", message)
        else:
            emit_command("error", message, title=title)

    def warning(self, message: str) -> None:
        emit_command("warning", message)

    def annotate(self, findings: Sequence[Finding]) -> None:
        for line in annotations(list(findings), redact=Redactor()):
            print(line, flush=True)

    def write_outputs(self, outputs: Mapping[str, str]) -> None:
        write_outputs(self.context.output_file, outputs)

    def append_summary(self, markdown: str) -> None:
        append_summary(self.context.summary_file, markdown)

    def mask(self, value: str | None) -> None:
        add_mask(value)

    def require_model_key(self) -> None:
        require_model_key(self.context, self.env)
