"""The fake GitHub as a program (`python -m reviewer.testing.fake_github`): what a person
needs to try `reviewer github` on a local repository, runs and pushes in turn.

It keeps two files current: the `pull_request` event payload (at `GITHUB_EVENT_PATH`; action
`opened` at the start, `synchronize` with `before` and `after` after a push, as GitHub sends
them) and the state (reviews and comments, rewritten after every write; its `_memory` key lets
a restart on the same file take the conversation back, `_gh_persist`). It serves two
control endpoints beside the API, under its base URL:

- `POST {base_url}/_fake/push`, body `{"head": REV}` or none (the head branch as it is now):
  a push. The pull request's head moves to that commit (reviews and comments stay, see
  `FakeGitHub.set_head`) and the event file is rewritten. Answers `{"before", "after"}`, or
  422 with a message when REV is not a commit or is the head already.
- `POST {base_url}/_fake/act`, body `{"login", "role"?, "action", "comment"?, "body"?,
  "content"?, "trigger"?}`: a person acts on the pull request, as people do between runs
  (`role` also makes them a collaborator with it: admin, maintain, write, triage, read).
  Actions: `reply` (to the thread of review comment `comment`, with `body`), `comment` (on
  the conversation, `body`), `resolve` (the thread of `comment`), `react` (`content`, e.g.
  `-1`, on `comment`). With `"trigger": true` a reply or comment becomes the run's event
  (`pull_request_review_comment` or `issue_comment`, action `created`; the env file's
  GITHUB_EVENT_NAME follows), so the next `reviewer github` answers it; a push makes the
  event a `synchronize` again. Answers `{"comment": ID}` for what was written, or 422.
- `GET {base_url}/_fake/state`: the state, as in the state file.

Neither is GitHub's: they are not recorded in `.requests` and not counted by the rate limit.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reviewer.testing._gh_objects import JsonObject, json_answer
from reviewer.testing._gh_persist import MEMORY_KEY, dump, restore
from reviewer.testing._gh_server import FakeGitHub
from reviewer.testing._llm_http import Plan
from reviewer.testing._llm_wire import Answer

CONTROL = "/_fake"
# What a person can do between runs through `POST /_fake/act`.
_ACTIONS = ("reply", "comment", "resolve", "react")
# Any token works when the fake checks none; the variable must still be set.
DEFAULT_TOKEN = "fake-token"


class LocalGitHub(FakeGitHub):
    """A FakeGitHub that keeps an event file and a state file current and can be pushed to
    over HTTP. Takes FakeGitHub's arguments, plus the two files (either may be None)."""

    def __init__(
        self,
        repo: str | os.PathLike[str],
        *,
        event_file: Path | None = None,
        state_file: Path | None = None,
        env_file: Path | None = None,
        **settings: Any,
    ) -> None:
        # Set before the server starts: it answers from FakeGitHub.__init__ on.
        self.event_file = event_file
        self.state_file = state_file
        self.env_file = env_file
        self.event_name = "pull_request"
        self._files_lock = threading.Lock()
        super().__init__(repo, **settings)
        # Started again on the same state file: the conversation so far is taken back, and
        # the event file stays the last run's.
        self.restored = self._restore()
        if self.restored is None or not (event_file and event_file.exists()):
            self.write_event("opened")
        self.write_state()

    @property
    def runner_temp(self) -> Path:
        """`RUNNER_TEMP`: inside the repository's git folder, which git never lists."""
        git_dir = subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir"],
            cwd=self.repo, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        folder = Path(git_dir) / "fake-runner-temp"
        folder.mkdir(exist_ok=True)
        return folder

    def _restore(self) -> str | None:
        """What was taken back from the state file, or why not (None: no file to read)."""
        if self.state_file is None or not self.state_file.exists():
            return None
        try:
            data = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return f"not restored: {self.state_file} is not readable JSON ({exc})"
        if not isinstance(data, dict) or MEMORY_KEY not in data:
            return None
        return restore(self.store, data[MEMORY_KEY]) + f" from {self.state_file}"

    def environment(self, token: str | None = None) -> dict[str, str]:
        """What `reviewer github` reads from an Actions run, pointing at this fake."""
        pull = self.pull
        env = {
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_REPOSITORY": pull["base"]["repo"]["full_name"],
            "GITHUB_API_URL": self.base_url,
            "GITHUB_SERVER_URL": self.url,
            "GITHUB_TOKEN": token or self.token or DEFAULT_TOKEN,
            "GITHUB_WORKSPACE": str(self.repo.resolve()),
            "GITHUB_BASE_REF": pull["base"]["ref"],
            "GITHUB_HEAD_REF": pull["head"]["ref"],
            # A runner's temporary folder is outside the checkout: the reports a run leaves
            # there (reviewer-report.json, its SARIF) never show up as files of the change.
            "RUNNER_TEMP": str(self.runner_temp),
        }
        if self.event_file is not None:
            env["GITHUB_EVENT_PATH"] = str(self.event_file.resolve())
        return env

    @staticmethod
    def exports(env: dict[str, str]) -> str:
        """`export NAME=value` lines a POSIX shell can source."""
        return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())

    def push(self, head: str | None = None) -> tuple[str, str]:
        """Move the head to `head` (default: the head branch now) and rewrite the event file
        as a `synchronize`; (before, after). ValueError says what is wrong."""
        target = head or self.store.info.head_ref
        before = self.head_sha
        self.set_head(target)  # ValueError when not a commit
        after = self.head_sha
        if after == before:
            raise ValueError(
                f"nothing to push: the head is {after[:12]} already "
                f"(commit on {self.store.info.head_ref} first, or name another commit)"
            )
        self.write_event("synchronize", before=before)
        self.write_state()
        return before, after

    def act(self, request: JsonObject) -> JsonObject:
        """What `POST /_fake/act` does (see the module's docstring); ValueError says what is
        wrong with the request."""
        login, action = request.get("login"), request.get("action")
        if not isinstance(login, str) or not login or action not in _ACTIONS:
            raise ValueError(f"give a login and an action ({', '.join(_ACTIONS)})")
        person = self.person(login, request.get("role"))
        comment, body = request.get("comment"), request.get("body")
        if action != "comment" and not isinstance(comment, int):
            raise ValueError(f"{action} needs the id of a review comment ('comment')")
        if action in ("reply", "comment") and not isinstance(body, str):
            raise ValueError(f"{action} needs its text ('body')")
        written: JsonObject | None = None
        if action == "reply":
            written = person.reply(comment, body)
        elif action == "comment":
            written = person.comment(body)
        elif action == "resolve":
            person.resolve(comment)
        else:
            person.react(comment, str(request.get("content") or "-1"))
        if written is not None and request.get("trigger"):
            review = action == "reply"
            self.event_name = "pull_request_review_comment" if review else "issue_comment"
            make = self.review_comment_event if review else self.issue_comment_event
            if self.event_file is not None:
                self._write(self.event_file, make(written))
            self.write_env()
        self.write_state()
        return {"comment": written["id"] if written else comment}

    def write_env(self) -> None:
        if self.env_file is not None:
            with self._files_lock:
                self.env_file.write_text(self.exports(self.environment()), encoding="utf-8")

    def state(self) -> JsonObject:
        return {
            "head_sha": self.head_sha,
            "reviews": self.reviews,
            "review_comments": self.review_comments,
            "issue_comments": self.issue_comments,
            MEMORY_KEY: dump(self.store),
        }

    def write_event(self, action: str, *, before: str | None = None) -> None:
        if self.event_name != "pull_request":
            self.event_name = "pull_request"
            self.write_env()
        if self.event_file is None:
            return
        payload = self.event_payload(action)
        if before is not None:
            payload = {**payload, "before": before, "after": self.head_sha}
        self._write(self.event_file, payload)

    def write_state(self) -> None:
        if self.state_file is not None:
            self._write(self.state_file, self.state())

    def _write(self, path: Path, data: JsonObject) -> None:
        # Whole or not at all: a reader never sees half a file.
        with self._files_lock:
            partial = path.with_name(path.name + ".partial")
            partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            partial.replace(path)

    def _plan(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Plan:
        path = urlsplit(target).path
        if self.prefix and path.startswith(self.prefix + "/"):
            path = path[len(self.prefix) :]
        if path == CONTROL or path.startswith(CONTROL + "/"):
            return Plan(self._control(method, path, raw))
        plan = super()._plan(method, target, headers, raw)
        if method != "GET":
            self.write_state()
        return plan

    def _control(self, method: str, path: str, raw: bytes) -> Answer:
        if (method, path) == ("GET", f"{CONTROL}/state"):
            return json_answer(200, self.state())
        if (method, path) == ("POST", f"{CONTROL}/act"):
            try:
                request = json.loads(raw)
                if not isinstance(request, dict):
                    raise ValueError("the body is a JSON object")
                return json_answer(200, self.act(request))
            except (ValueError, KeyError, PermissionError) as exc:
                return json_answer(422, {"message": str(exc)})
        if (method, path) != ("POST", f"{CONTROL}/push"):
            usage = f'POST {CONTROL}/push {{"head": REV}}, POST {CONTROL}/act, GET {CONTROL}/state'
            return json_answer(404, {"message": f"no {method} {path} here; the fake has {usage}"})
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            body = None
        head = body.get("head") if isinstance(body, dict) else None
        if body is None or not isinstance(body, dict) or not isinstance(head, str | None):
            return json_answer(400, {"message": 'the body is {"head": "REV"} or nothing'})
        try:
            before, after = self.push(head)
        except ValueError as exc:
            return json_answer(422, {"message": str(exc)})
        return json_answer(200, {"before": before, "after": after})
