"""A fake GitHub API (REST and GraphQL) serving one real pull request, to test `github`.

    from reviewer.testing.fake_github import FakeGitHub

    with FakeGitHub(repo_path, repository="acme/shop", number=7,
                    base_ref="main", head_ref="feature") as fake:
        gh = github.Github(base_url=fake.base_url, auth=github.Auth.Token("t"), retry=None,
                           seconds_between_requests=None, seconds_between_writes=None)
        pr = gh.get_repo("acme/shop").get_pull(7)
        ...
        assert fake.reviews[0]["state"] == "COMMENTED"
        fake.assert_no_failures()

The pull request is made from a real git repository: its diff is `git diff --find-renames
base...head` (three dots: from the merge base, like GitHub's "Files changed"). The fake
listens on 127.0.0.1 (never `localhost`: PyGithub refuses URLs whose host differs from its
`base_url`), from a daemon thread, until `close()` or the end of the `with` block. Every URL
it returns is absolute and built from `base_url`, GHES prefix (`prefix="/api/v3"`) included.

Served (owner and name match case-insensitively; `/repositories/{id}/...` works too, as the
`link` URLs use it):
- `GET /repos/{o}/{r}`, `GET /repos/{o}/{r}/pulls/{n}` (JSON; with `Accept:
  application/vnd.github.v3.diff` or `application/vnd.github.diff` the diff text, or GitHub's
  406 `too_large` over `max_diff_files` / `max_diff_lines`), `.../pulls/{n}/files` (patch
  omitted for binary files and content-less changes, at most `max_listed_files`),
  `.../pulls/{n}/commits`, `.../commits/{sha}`, the web `diff_url`;
- `GET .../issues/{n}` ("Get an issue"): the pull request as an issue (with its
  `pull_request` key: every pull request is an issue), or an issue `add_issue(number, title,
  body)` made (no `pull_request` key), else 404; `add_repository("o/r", private=...)` serves
  another repository of the site (`GET /repos/o/r` with `private`, and its issues), a private
  one only when `reads_private` is set (as a personal token), else 404 as GitHub answers
  what a token cannot see;
- reviews: `GET`/`POST .../pulls/{n}/reviews` (200), `GET`/`DELETE .../reviews/{id}` (delete:
  pending only), `GET .../reviews/{id}/comments`;
- review comments: `GET`/`POST .../pulls/{n}/comments` (201, "Validation Failed" errors),
  `GET`/`PATCH`/`DELETE .../pulls/comments/{id}`;
- issue comments: `GET`/`POST .../issues/{n}/comments` (201), `GET`/`PATCH`/`DELETE
  .../issues/comments/{id}`;
- reactions: `GET`/`POST .../pulls/comments/{id}/reactions` and `.../issues/comments/{id}/
  reactions` (`content` +1, -1, laugh, confused, heart, hooray, rocket, eyes; 201 for a new
  reaction, 200 with the existing one);
- replies: `POST .../pulls/{n}/comments/{id}/replies` and `POST .../pulls/{n}/comments` with
  `in_reply_to`; a reply joins its thread, `in_reply_to_id` = the thread's root comment;
- `GET .../collaborators/{login}/permission`: `permission` (admin, write, read, none; maintain
  folds to write, triage to read), `role_name`, `user`; someone who is not a collaborator
  reads the (public) repository: `read`;
- `GET /users/{login}`, `GET /rate_limit`, and `GET /user`, which refuses an installation
  token (a `[bot]` login) with 403 as GitHub does.

GraphQL: `POST /graphql` (with `prefix="/api/v3"`, GHES's `/api/graphql`), executed by
graphql-core over a subset of GitHub's published schema (`github_schema_subset.graphql`, cut
from octokit/graphql-schema by `python -m tests.support.github_schema`): `repository {
pullRequest { reviewThreads { id isResolved isOutdated resolvedBy viewerCanResolve
viewerCanReply path line startLine diffSide comments { databaseId author body url createdAt
replyTo reactionGroups { content reactors users } } } } }`, `node(id)`, and the mutations
`resolveReviewThread`, `unresolveReviewThread`, `addPullRequestReviewThreadReply`. A query
GitHub would reject is rejected (unknown field, missing argument; `first`/`last` missing or
over 100 on a connection), with HTTP 200 and `errors[]` of `type`, `path`, `locations`,
`message`. Every review comment that answers none is a thread's root. The bot is
`github-actions[bot]` in REST and the `Bot` `github-actions` in GraphQL. `token_permissions`
(default: contents, pull_requests and issues `write`): without `contents: write`, resolving or
unresolving a thread answers `FORBIDDEN` "Resource not accessible by integration" and
`viewerCanResolve` is false; replies need `pull_requests: write` (and `read_only` off).

Lists paginate like GitHub: `per_page` (30 by default, at most 100), `page`, and a `link`
header `<URL>; rel="next", <URL>; rel="last"` (plus `prev`, `first`) when there is more than
one page.

A review POST is checked as GitHub checks it, all or nothing (nothing is stored on a 422):
event `COMMENT`/`APPROVE`/`REQUEST_CHANGES` or omitted (a `PENDING` review, one per user);
`APPROVE` by `github-actions[bot]` or by the author, `REQUEST_CHANGES` by the author, an
empty `COMMENT`/`REQUEST_CHANGES` review; `commit_id` (default: the head) must be a commit the
pull request has had, and anchors are resolved in the diff at that commit: `path` in the pull
request, `line` (`side` RIGHT by default) inside a hunk on that side or a `position`,
`start_line` before `line` in the same hunk. The 422 bodies are GitHub's:
`{"message":"Unprocessable Entity","errors":["Line could not be resolved"],
"documentation_url":"https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
"status":"422"}`. Issue comments: 65536 characters at most, only the author may edit or
delete (403 otherwise).

Beyond GitHub: `token` (when set, any other token gets 401 "Bad credentials"; `token X` and
`Bearer X` both work; writes always need a token), `read_only` (every write gets 403
"Resource not accessible by integration"; defaults to `fork`, like a fork's `pull_request`
run), `inject(...)` and `rate_limit(...)` to script failures (`persist=True`: stored, then
failed), `set_head(sha)` for a new push (reviews and comments stay; a comment follows its
line when other changes shift it, and is outdated, `line` and `position` null, when its own
line changed or left the diff, as on GitHub), `add_review`,
`add_review_comment`, `add_issue_comment` to seed what a previous run or a person left,
`event_payload()` for the `pull_request` event file of an Actions run.

The conversation between runs: `person(login, role=None)` acts as someone on GitHub's web
page (`.reply(comment_id, body)`, `.resolve(comment_id)`, `.unresolve(...)`, `.react(comment_id,
"-1")`, `.edit(comment_id, body)`, `.comment(body)`); `add_collaborator(login, role)` (admin,
maintain, write, triage, read, none); `set_thread_outdated(comment_id)`;
`review_comment_event(comment, action)` and `issue_comment_event(comment, action)` give the
`pull_request_review_comment` and `issue_comment` payloads (created, edited with `old_body`,
deleted) of a comment's JSON; `threads()` and `reactions(comment_id)` for assertions.

For assertions: `.reviews`, `.review_comments`, `.issue_comments` (the JSON GitHub would return),
`.requests` (method, path, query, headers, body, status), `.rejections` (GitHub-style 4xx the
fake gave), `.failures` (requests the fake could not serve, broken expectations such as
`expect_commit_id=True`), `assert_no_failures()`.

Run as a program: `python -m reviewer.testing.fake_github REPO --base main --head feature`
prints the base URL and serves until interrupted; the exit code is 1 when failures were
recorded. To try `reviewer github` on that repository (docs/action.md: "Try `reviewer
github` locally"):
- `--event FILE` writes the `pull_request` event payload there (action `opened`; after a
  push `synchronize`, with `before` and `after`), and the program prints, after the URL,
  the `export` lines of the run's environment: GITHUB_EVENT_NAME, GITHUB_EVENT_PATH,
  GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_TOKEN (`--token`, else
  `fake-token`), GITHUB_WORKSPACE, GITHUB_BASE_REF, GITHUB_HEAD_REF; `--env FILE` writes
  them there too, for `. FILE`;
- `--state FILE` holds the head, the reviews and the comments as JSON, rewritten after
  every write and on exit;
- `python -m reviewer.testing.fake_github push [REV] [--url URL]` simulates a push: the
  served pull request's head moves to REV (default: the head branch as it is now) and the
  event file is rewritten. URL defaults to `$GITHUB_API_URL`; it POSTs to the control
  endpoint `{base_url}/_fake/push` (and `GET {base_url}/_fake/state` answers the state;
  neither is recorded in `.requests`). In Python: `LocalGitHub` in `_gh_local`;
- `python -m reviewer.testing.fake_github act LOGIN [--role ROLE] [--trigger] ACTION ...`:
  a person acts between runs: `reply ID TEXT` (in the thread of review comment ID),
  `comment TEXT`, `resolve ID`, `react ID [CONTENT]` (default `-1`). `--role` makes them a
  collaborator (admin, maintain, write, triage, read); `--trigger` makes the reply or
  comment the next run's event (`pull_request_review_comment` / `issue_comment`, and the
  `--env` file's GITHUB_EVENT_NAME with it: source the file again, or `reviewer github`
  refuses an event name that is not its file's) until the next push. Comment ids are in the
  state file.
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

from reviewer.testing._gh_inject import Injection
from reviewer.testing._gh_local import CONTROL, LocalGitHub
from reviewer.testing._gh_server import FakeGitHub, GitHubRequest

__all__ = ["FakeGitHub", "GitHubRequest", "Injection", "LocalGitHub", "main"]


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m reviewer.testing.fake_github",
        description="Serve one pull request of a local git repository as a fake GitHub API. "
        "`python -m reviewer.testing.fake_github push [REV]` simulates a push to it.",
    )
    parser.add_argument("repo", type=Path, help="the git repository")
    parser.add_argument("--repository", default="acme/shop", help="owner/name")
    parser.add_argument("--number", type=int, default=1)
    parser.add_argument("--base", default="main", help="base branch (or --base-sha)")
    parser.add_argument("--head", default="feature", help="head branch (or --head-sha)")
    parser.add_argument("--base-sha")
    parser.add_argument("--head-sha")
    parser.add_argument("--title", default="Change things")
    parser.add_argument("--body")
    parser.add_argument("--author", default="octocat")
    parser.add_argument("--fork", action="store_true", help="head in a fork; writes get 403")
    parser.add_argument("--prefix", default="", help="GHES-style path prefix, e.g. /api/v3")
    parser.add_argument("--token", help="refuse any other token with a 401")
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    parser.add_argument(
        "--state", type=Path, help="keep the head, reviews and comments here (JSON)"
    )
    parser.add_argument(
        "--event", type=Path, help="keep the pull_request event payload here; print the env"
    )
    parser.add_argument("--env", type=Path, help="write the env's export lines here too")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["push"]:
        return _push(argv[1:])
    if argv[:1] == ["act"]:
        return _act(argv[1:])
    args = _arguments(argv)
    try:
        fake = LocalGitHub(
            args.repo,
            event_file=args.event,
            state_file=args.state,
            env_file=args.env,
            repository=args.repository,
            number=args.number,
            base_ref=args.base,
            head_ref=args.head,
            base_sha=args.base_sha,
            head_sha=args.head_sha,
            title=args.title,
            body=args.body,
            author=args.author,
            fork=args.fork,
            prefix=args.prefix,
            token=args.token,
            port=args.port,
        )
    except (OSError, ValueError) as exc:
        print(f"fake_github: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
    if fake.restored:
        print(fake.restored, flush=True)
    with fake:
        exports = fake.exports(fake.environment())
        fake.write_env()
        print(fake.base_url, flush=True)
        if args.event is not None:
            print(exports, end="", flush=True)
        try:
            while not stop.wait(0.1):
                pass
        except KeyboardInterrupt:
            pass
    fake.write_state()
    for failure in fake.failures:
        print(f"fake_github: {failure}", file=sys.stderr)
    return 1 if fake.failures else 0


def _push(argv: Sequence[str]) -> int:
    """`push [REV] [--url URL]`: ask a running fake to move the pull request's head."""
    parser = argparse.ArgumentParser(
        prog="python -m reviewer.testing.fake_github push",
        description="Simulate a push: the served pull request's head moves to REV.",
    )
    parser.add_argument("rev", nargs="?", help="default: the head branch as it is now")
    parser.add_argument("--url", help="the fake's base URL; default: $GITHUB_API_URL")
    args = parser.parse_args(argv)
    url = (args.url or os.environ.get("GITHUB_API_URL") or "").rstrip("/")
    if not url:
        print(
            "fake_github push: no URL: pass --url (the URL the fake printed) or source the "
            "--env file, which sets GITHUB_API_URL",
            file=sys.stderr,
        )
        return 2
    moved = _control(url, "push", {"head": args.rev} if args.rev else {}, "push")
    if moved is None:
        return 2
    print(f"pushed: the head moved from {moved['before'][:12]} to {moved['after'][:12]}")
    return 0


def _act(argv: Sequence[str]) -> int:
    """`act LOGIN [--role ROLE] ACTION ...`: a person acts on the pull request between runs."""
    parser = argparse.ArgumentParser(
        prog="python -m reviewer.testing.fake_github act",
        description="A person acts on the served pull request, as people do between runs: "
        "reply in a review thread, comment, resolve a thread, or react to a comment. Comment "
        "ids are in the state file (review_comments).",
    )
    parser.add_argument("login", help="who acts")
    parser.add_argument("--role", help="also make them a collaborator: admin, write, read, ...")
    parser.add_argument(
        "--trigger",
        action="store_true",
        help="make this reply or comment the event of the next `reviewer github` run",
    )
    parser.add_argument("--url", help="the fake's base URL; default: $GITHUB_API_URL")
    actions = parser.add_subparsers(dest="action", required=True)
    reply = actions.add_parser("reply", help="reply in the thread of review comment ID")
    reply.add_argument("comment", type=int)
    reply.add_argument("body")
    comment = actions.add_parser("comment", help="comment on the pull request's conversation")
    comment.add_argument("body")
    resolve = actions.add_parser("resolve", help="resolve the thread of review comment ID")
    resolve.add_argument("comment", type=int)
    react = actions.add_parser("react", help="react to review comment ID (default -1)")
    react.add_argument("comment", type=int)
    react.add_argument("content", nargs="?", default="-1")
    args = parser.parse_args(argv)
    url = (args.url or os.environ.get("GITHUB_API_URL") or "").rstrip("/")
    if not url:
        print("fake_github act: no URL: pass --url or source the --env file", file=sys.stderr)
        return 2
    request = {
        key: value
        for key, value in vars(args).items()
        if key in ("login", "role", "action", "comment", "body", "content", "trigger")
        and value is not None
    }
    done = _control(url, "act", request, "act")
    if done is None:
        return 2
    print(f"{args.login} did {args.action} (comment {done['comment']})")
    return 0


def _control(url: str, name: str, request: dict[str, Any], what: str) -> dict[str, Any] | None:
    """POST to the running fake's control endpoint; its answer, or None after saying why."""
    body = json.dumps(request).encode("utf-8")
    call = urllib.request.Request(
        f"{url}{CONTROL}/{name}", data=body, headers={"Content-Type": "application/json"}
    )
    # The fake is on 127.0.0.1: never through a proxy.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(call, timeout=30) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("message") or exc.reason
        except (ValueError, AttributeError):
            message = f"{exc.code} {exc.reason} (is {url} the fake's URL?)"
        print(f"fake_github {what}: {message}", file=sys.stderr)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        print(f"fake_github {what}: no fake GitHub at {url} ({reason}): is it running?",
              file=sys.stderr)  # fmt: skip
    return None


if __name__ == "__main__":
    raise SystemExit(main())
