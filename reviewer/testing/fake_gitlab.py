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
  `position[head_sha] is missing`, `line_range` ends of `line_code` (GitLab's, from the
  diff's running counters: `_gl_lines`) and `type` only, numbers there refused with `Note
  {:position=>["must be a valid json schema"]}`), `GET`/`PUT .../discussions/:id` (`resolved`,
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

As a program (docs/gitlab.md, "Try `reviewer gitlab` locally"; `_gl_local`):
`python -m reviewer.testing.fake_gitlab --repo PATH [--state FILE] [--env FILE] [--port N]`
prints its URL and serves until interrupted; with `--state` the conversation is kept in FILE
(rewritten after every write) and taken back on the next start; with `--env` the environment
of the merge request pipeline's job (GITLAB_CI, CI_PIPELINE_SOURCE, CI_SERVER_URL,
CI_API_V4_URL, CI_PROJECT_*, CI_MERGE_REQUEST_*, CI_COMMIT_SHA, REVIEWER_GITLAB_TOKEN and
REVIEWER_REPORTS_DIR) is printed after the URL and written to FILE as `export` lines, again
after every push. Between runs (the URL defaults to $CI_SERVER_URL):
`python -m reviewer.testing.fake_gitlab push [REV] [--url URL]` and
`python -m reviewer.testing.fake_gitlab act NAME [--role ROLE] [--url URL] note TEXT | reply
DISCUSSION TEXT | resolve DISCUSSION | award NOTE [NAME]` (a discussion by its id or by one
of its notes' ids; ids are in the state file).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from reviewer.testing._gl_local import CONTROL, LocalGitLab
from reviewer.testing._gl_server import ActionRefused, FakeGitLab, GitLabRequest, Person

__all__ = ["ActionRefused", "FakeGitLab", "GitLabRequest", "LocalGitLab", "Person", "main"]


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
    parser.add_argument(
        "--env", type=Path, help="write the pipeline job's environment here (export lines, "
        "rewritten after a push) and print it"
    )
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
            args.repo, state_file=args.state, env_file=args.env, project=args.project,
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
        if args.env is not None:
            print(fake.exports(fake.environment()), end="", flush=True)
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
    parser.add_argument("--url", help=URL_HELP)
    args = parser.parse_args(argv)
    url = _url(args.url, "push")
    if url is None:
        return 2
    moved = _control(url, "push", {"head": args.rev} if args.rev else {})
    if moved is None:
        return 2
    print(f"pushed: the head moved from {moved['before'][:12]} to {moved['after'][:12]}")
    return 0


def _act(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m reviewer.testing.fake_gitlab act")
    parser.add_argument("name", help="who acts")
    parser.add_argument("--role", help="also make them a member: developer, reporter, ...")
    parser.add_argument("--url", help=URL_HELP)
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("note", help="a note on the merge request").add_argument("body")
    reply = actions.add_parser("reply", help="reply in a discussion (its id, or a note's)")
    reply.add_argument("discussion")
    reply.add_argument("body")
    resolve = actions.add_parser("resolve", help="resolve a discussion (its id, or a note's)")
    resolve.add_argument("discussion")
    award = actions.add_parser("award", help="award emoji to a note (default thumbsdown)")
    award.add_argument("note")
    award.add_argument("emoji", nargs="?")
    args = parser.parse_args(argv)
    url = _url(args.url, "act")
    if url is None:
        return 2
    request = {k: v for k, v in vars(args).items() if k != "url" and v is not None}
    done = _control(url, "act", request)
    if done is None:
        return 2
    print(f"{args.name} did {args.action}")
    return 0


URL_HELP = "the URL the fake printed; default: $CI_SERVER_URL (from the --env file)"


def _url(given: str | None, what: str) -> str | None:
    url = (given or os.environ.get("CI_SERVER_URL") or "").rstrip("/")
    if not url:
        print(f"fake_gitlab {what}: no URL: pass --url (the URL the fake printed) or source "
              "the --env file, which sets CI_SERVER_URL", file=sys.stderr)  # fmt: skip
    return url or None


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
