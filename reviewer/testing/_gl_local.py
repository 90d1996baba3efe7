"""The fake GitLab as a program (`python -m reviewer.testing.fake_gitlab`): what a person needs
to try `reviewer gitlab` on a local repository, runs, people's actions and pushes in turn.

It keeps two files current: the state (the conversation, `_gl_persist`, rewritten after every
write and taken back on a restart with the same file) and the environment of a merge request
pipeline's job (`environment()`: GitLab's predefined CI/CD variables that `reviewer gitlab`
reads, reviewer/gitlab/ci.py, and the masked variables a project sets), as `export` lines a
shell sources; a push rewrites it, since the job's commit changes. Control endpoints beside
the API (not GitLab's; not recorded in `.requests`):

- `POST /_fake/push`, body `{"head": REV}` or none (the source branch as it is now): a push,
  a new version of the merge request's diff. Answers `{"before", "after"}`.
- `POST /_fake/act`, body `{"name", "role"?, "action", ...}`: a person acts, through
  GitLab's rules (a Reporter's resolve is GitLab's 403): `note` (`body`), `reply`
  (`discussion`, `body`), `resolve` (`discussion`), `award` (`note`, `emoji`: thumbsdown by
  default). A discussion is named by its id or by the id of one of its notes.
- `GET /_fake/state`: the state, as in the state file.
"""

from __future__ import annotations

import json
import shlex
import threading
from pathlib import Path
from typing import Any

from reviewer.testing._gh_diff import git
from reviewer.testing._gl_persist import dump, restore
from reviewer.testing._gl_server import ActionRefused, FakeGitLab, Person
from reviewer.testing._llm_http import Plan
from reviewer.testing._llm_wire import json_answer

CONTROL = "/_fake"
# Where the job's reports go: the git folder, outside the work tree (in a pipeline they are
# in the checkout, kept as artifacts; here they would be untracked files of the change).
REPORTS_FOLDER = "fake-gitlab-reports"
_WRITING = threading.Lock()  # the server answers from many threads


class LocalGitLab(FakeGitLab):
    """The fake as a program: its state in a file, the job's environment in another, and
    control endpoints for `push` and `act`."""

    def __init__(
        self,
        repo: Path,
        *,
        state_file: Path | None = None,
        env_file: Path | None = None,
        **options: Any,
    ) -> None:
        self.state_file = state_file
        self.env_file = env_file
        super().__init__(repo, **options)
        self.restored: str | None = None
        if state_file is not None and state_file.exists():
            try:
                self.restored = restore(self.store, json.loads(state_file.read_text()))
            except (ValueError, KeyError, TypeError) as exc:
                self.restored = f"not restored: the state file is unreadable ({exc})"
        self.on_write.append(self.write_state)
        self.write_state()
        self.write_env()

    def environment(self) -> dict[str, str]:
        """The variables of this merge request's pipeline job, as GitLab sets them
        (docs.gitlab.com/ci/variables/predefined_variables/), and the project's masked
        REVIEWER_GITLAB_TOKEN (docs/gitlab.md)."""
        info = self.store.info
        version = self.store.latest
        root = Path(git(self.repo, "rev-parse", "--show-toplevel").decode().strip())
        git_dir = Path(git(self.repo, "rev-parse", "--absolute-git-dir").decode().strip())
        return {
            "GITLAB_CI": "true",
            "CI_PIPELINE_SOURCE": "merge_request_event",
            "CI_SERVER_URL": self.url,
            "CI_API_V4_URL": self.api_url,
            "CI_PROJECT_ID": str(info.id),
            "CI_PROJECT_PATH": info.path_with_namespace,
            "CI_PROJECT_DIR": str(root),
            "CI_MERGE_REQUEST_IID": str(info.iid),
            "CI_MERGE_REQUEST_PROJECT_ID": str(info.id),
            "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": str(info.source_project_id),
            "CI_MERGE_REQUEST_PROJECT_URL": f"{self.url}/{info.path_with_namespace}",
            "CI_MERGE_REQUEST_TITLE": info.title,
            "CI_MERGE_REQUEST_DIFF_BASE_SHA": version.base_sha,
            "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": info.source_branch,
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": info.target_branch,
            "CI_COMMIT_SHA": version.head_sha,
            "REVIEWER_GITLAB_TOKEN": self.token,
            "REVIEWER_REPORTS_DIR": str(git_dir / REPORTS_FOLDER),
        }

    @staticmethod
    def exports(env: dict[str, str]) -> str:
        """`export NAME=value` lines a POSIX shell can source."""
        return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())

    def write_env(self) -> None:
        if self.env_file is not None:
            _write(self.env_file, self.exports(self.environment()))

    def write_state(self) -> None:
        if self.state_file is not None:
            _write(self.state_file, json.dumps(dump(self.store), indent=1))

    def _plan(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Plan:
        if not target.startswith(CONTROL + "/"):
            return super()._plan(method, target, headers, raw)
        request = json.loads(raw) if raw else {}
        name = target[len(CONTROL) + 1 :]
        try:
            if name == "state":
                return Plan(json_answer(200, dump(self.store)))
            if name == "push":
                before, after = self.push(request.get("head"))
                self.write_env()
                return Plan(json_answer(200, {"before": before, "after": after}))
            if name == "act":
                person = self.person(request["name"], request.get("role"))
                return Plan(json_answer(200, self._perform(person, request)))
        except ActionRefused as exc:
            return Plan(json_answer(exc.status, exc.body))
        except (ValueError, KeyError, TypeError) as exc:
            return Plan(json_answer(400, {"message": str(exc)}))
        return Plan(json_answer(404, {"message": f"no control {name!r}"}))

    def _perform(self, person: Person, request: dict[str, Any]) -> Any:
        action = request["action"]
        if action == "note":
            return person.note(request["body"])
        if action == "reply":
            return person.reply(self._discussion(request["discussion"]), request["body"])
        if action == "resolve":
            return person.resolve(self._discussion(request["discussion"]))
        if action == "award":
            return person.award(int(request["note"]), request.get("emoji") or "thumbsdown")
        raise ValueError(f"unknown action {action!r}")

    def _discussion(self, named: str) -> str:
        """A discussion's id, from its id or from the id of one of its notes."""
        with self.store.lock:
            if named.isdigit():
                note = self.store.note(int(named))
                if note is None:
                    raise ValueError(f"no note {named}")
                return note.discussion_id
            return named


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a reader never sees half a file."""
    with _WRITING:
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
