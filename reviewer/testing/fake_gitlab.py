"""A fake GitLab (REST API v4) serving one real merge request, to test `reviewer gitlab`.

    from reviewer.testing.fake_gitlab import FakeGitLab

    with FakeGitLab(repo_path, project="acme/shop", iid=1,
                    target_branch="main", source_branch="feature") as fake:
        gl = gitlab.Gitlab(fake.url, private_token=fake.token)
        mr = gl.projects.get("acme/shop", lazy=True).mergerequests.get(1)
        ...
        fake.person("dana", "developer").resolve(discussion_id)

The merge request is made from a real git repository: its diff is `git diff --find-renames
merge-base...source` (GitLab's "Changes"), and each push is a new version with new
`diff_refs` {base_sha (the merge base), start_sha (the target's head), head_sha}. The project
is private: the token's user (the bot, `project_7_bot`, Maintainer by default) and the people
added as members see it; anyone else gets 404 "404 Project Not Found".

Served under /api/v4 (`:id` is the numeric id or the URL-encoded path), as GitLab documents:
- `GET /user` (the token's user, `bot: true`; 401 "401 Unauthorized" without a token);
  tokens by `PRIVATE-TOKEN` or `Authorization: Bearer`; an unknown token is a 401; a token
  with scope `read_api` that writes gets 403 `insufficient_scope`;
- `GET /projects/:id`, `GET /projects/:id/members/all/:user_id` (`access_level` 10-50; 404
  "404 Not found" for a non-member); `GET /projects/:id/issues/:issue_iid` ("Get a single
  project issue": title, description, state, confidential, web_url; "404 Not found" for an
  iid without an issue; `add_issue(iid, title, description, confidential=...)` adds one);
- merge request `GET .../merge_requests/:iid` (sha, diff_refs, author, source/target project
  ids, web_url), `.../changes`, `.../diffs`, `.../versions` (newest first), `.../versions/:id`;
- discussions: `GET` (paginated), `POST` with `body` and an optional `position` checked
  against a version of the diff (see `_gl_positions`: 400 `Note {:line_code=>["can't be
  blank", "must be a valid line code"]}` for a line that is not on the diff with that role,
  `position[head_sha] is missing`, `line_range`), `GET`/`PUT .../discussions/:id` (`resolved`,
  Developer and above or the MR's author, else 403), `POST .../discussions/:id/notes` (reply);
- notes: `GET .../notes` (newest first; `sort=asc`), `POST` (a note of its own, not
  resolvable), `GET`/`PUT .../notes/:id` (only its author edits: 403);
- award emoji on notes: `GET`/`POST .../notes/:id/award_emoji` (a second identical award is
  404 "404 Award Emoji Name has already been taken");
- pagination: `page`, `per_page` (20, at most 100), `x-page`, `x-total`, `x-total-pages`,
  `x-next-page`, `Link`.

Failures: `inject(method, glob, status, body, persist=...)` and `rate_limit(...)` (429 "Retry
later" with `Retry-After`). Between runs: `person(name, role)` `.note`, `.reply`, `.resolve`,
`.award` (default `thumbsdown`), `.edit`; `add_member(name, role)`; `push(rev)`. Assertions:
`.requests`, `.discussions`, `.merge_request`.

As a program: `python -m reviewer.testing.fake_gitlab --repo PATH [--state FILE] [--port N]`
prints its URL and serves until interrupted; with `--state` the conversation is kept in FILE
(rewritten after every write) and taken back on the next start. Between runs:
`python -m reviewer.testing.fake_gitlab push [REV] --url URL` and
`python -m reviewer.testing.fake_gitlab act NAME [--role ROLE] --url URL note TEXT | reply
DISCUSSION TEXT | resolve DISCUSSION | award NOTE [NAME]` (ids are in the state file).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from reviewer.testing._gl_persist import dump, restore
from reviewer.testing._gl_server import ActionRefused, FakeGitLab, GitLabRequest, Person
from reviewer.testing._llm_http import Plan
from reviewer.testing._llm_wire import json_answer

__all__ = ["ActionRefused", "FakeGitLab", "GitLabRequest", "LocalGitLab", "Person", "main"]
CONTROL = "/_fake"


class LocalGitLab(FakeGitLab):
    """The fake as a program: its state in a file, and control endpoints for `push`/`act`."""

    def __init__(self, repo: Path, *, state_file: Path | None = None, **options: Any) -> None:
        super().__init__(repo, **options)
        self.state_file = state_file
        self.restored: str | None = None
        if state_file is not None and state_file.exists():
            try:
                self.restored = restore(self.store, json.loads(state_file.read_text()))
            except (ValueError, KeyError, TypeError) as exc:
                self.restored = f"not restored: the state file is unreadable ({exc})"
        self.on_write.append(self.write_state)
        self.write_state()

    def write_state(self) -> None:
        if self.state_file is None:
            return
        temporary = self.state_file.with_suffix(".tmp")
        temporary.write_text(json.dumps(dump(self.store), indent=1))
        temporary.replace(self.state_file)

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
                return Plan(json_answer(200, {"before": before, "after": after}))
            if name == "act":
                person = self.person(request["name"], request.get("role"))
                done = _perform(person, request)
                return Plan(json_answer(200, done))
        except ActionRefused as exc:
            return Plan(json_answer(exc.status, exc.body))
        except (ValueError, KeyError, TypeError) as exc:
            return Plan(json_answer(400, {"message": str(exc)}))
        return Plan(json_answer(404, {"message": f"no control {name!r}"}))


def _perform(person: Person, request: dict[str, Any]) -> Any:
    action = request["action"]
    if action == "note":
        return person.note(request["body"])
    if action == "reply":
        return person.reply(request["discussion"], request["body"])
    if action == "resolve":
        return person.resolve(request["discussion"])
    if action == "award":
        return person.award(int(request["note"]), request.get("emoji") or "thumbsdown")
    raise ValueError(f"unknown action {action!r}")


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m reviewer.testing.fake_gitlab",
        description="Serve one merge request of a local git repository as a fake GitLab.",
    )
    parser.add_argument("--repo", type=Path, required=True, help="the git repository")
    parser.add_argument("--project", default="acme/shop", help="namespace/path")
    parser.add_argument("--project-id", type=int, default=7)
    parser.add_argument("--iid", type=int, default=1)
    parser.add_argument("--target", default="main", help="target branch")
    parser.add_argument("--source", default="feature", help="source branch")
    parser.add_argument("--title", default="Change things")
    parser.add_argument("--author", default="alice")
    parser.add_argument("--token", default="glpat-fake", help="the bot's token")
    parser.add_argument("--state", type=Path, help="keep the conversation here (JSON)")
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["push"]:
        return _push(argv[1:])
    if argv[:1] == ["act"]:
        return _act(argv[1:])
    args = _arguments(argv)
    try:
        fake = LocalGitLab(
            args.repo, state_file=args.state, project=args.project,
            project_id=args.project_id, iid=args.iid, target_branch=args.target,
            source_branch=args.source, title=args.title, author=args.author, token=args.token,
            port=args.port,
        )  # fmt: skip
    except (OSError, ValueError) as exc:
        print(f"fake_gitlab: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
    if fake.restored:
        print(fake.restored, flush=True)
    with fake:
        print(fake.url, flush=True)
        try:
            while not stop.wait(0.1):
                pass
        except KeyboardInterrupt:
            pass
    fake.write_state()
    return 0


def _push(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m reviewer.testing.fake_gitlab push")
    parser.add_argument("rev", nargs="?", help="default: the source branch as it is now")
    parser.add_argument("--url", required=True, help="the URL the fake printed")
    args = parser.parse_args(argv)
    moved = _control(args.url, "push", {"head": args.rev} if args.rev else {})
    if moved is None:
        return 2
    print(f"pushed: the head moved from {moved['before'][:12]} to {moved['after'][:12]}")
    return 0


def _act(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m reviewer.testing.fake_gitlab act")
    parser.add_argument("name", help="who acts")
    parser.add_argument("--role", help="also make them a member: developer, reporter, ...")
    parser.add_argument("--url", required=True, help="the URL the fake printed")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("note").add_argument("body")
    reply = actions.add_parser("reply")
    reply.add_argument("discussion")
    reply.add_argument("body")
    actions.add_parser("resolve").add_argument("discussion")
    award = actions.add_parser("award")
    award.add_argument("note")
    award.add_argument("emoji", nargs="?")
    args = parser.parse_args(argv)
    request = {k: v for k, v in vars(args).items() if k != "url" and v is not None}
    done = _control(args.url, "act", request)
    if done is None:
        return 2
    print(f"{args.name} did {args.action}")
    return 0


def _control(url: str, name: str, request: dict[str, Any]) -> Any:
    call = urllib.request.Request(
        f"{url.rstrip('/')}{CONTROL}/{name}",
        data=json.dumps(request).encode(),
        headers={"Content-Type": "application/json"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(call, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        print(f"fake_gitlab {name}: {exc.code} {exc.read().decode(errors='replace')}",
              file=sys.stderr)  # fmt: skip
    except (urllib.error.URLError, OSError) as exc:
        print(f"fake_gitlab {name}: no fake GitLab at {url} ({exc})", file=sys.stderr)
    return None


if __name__ == "__main__":
    raise SystemExit(main())
