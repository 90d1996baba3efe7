"""Running git safely: argument lists, a clean environment, bounded time and output.

Every git invocation in the program goes through here. Arguments are always a list (never a
shell string), the caller's environment is not inherited beyond what git needs, and no
configuration of the repository can run a program: `reviewer.workspace.gitsafe` says how, `git_env`
and `git_argv` apply it to every call.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import reviewer.workspace.gitsafe as gitsafe
from reviewer.errors import ReviewerError

# Variables git may need to find its config (safe.directory lives in the global config on CI
# runners) and to run at all. Everything else, secrets included, stays out of the child.
_PASSED_THROUGH = ("PATH", "HOME", "XDG_CONFIG_HOME", "SYSTEMROOT", "TMPDIR")

# Config that could run programs (see gitsafe) or change output formats we parse is pinned.
_SAFE_CONFIG = (
    *gitsafe.PINNED,
    "core.quotePath=false",
    "color.ui=false",
    "grep.column=false",
    "grep.fullName=true",
    "grep.lineNumber=true",
    "blame.coloring=none",
)

# Repositories this program cloned itself, with the protocols git may fetch their missing
# objects over (a partial clone's lazy fetch): `reviewer eval`'s clones, whose remote may be
# a local mirror. Any other repository fetches over https only.
_FETCHING: dict[Path, frozenset[str]] = {}

# Each folder's overrides (gitsafe.overrides), read once: a review runs hundreds of git calls
# in one repository whose configuration does not change meanwhile.
_OVERRIDES: dict[tuple[Path, frozenset[str]], list[tuple[str, str]]] = {}


def allow_fetching(repo: Path, protocols: Collection[str]) -> None:
    """Let git fetch into `repo`, a clone this program made, over `protocols` too."""
    _FETCHING[Path(os.path.abspath(repo))] = frozenset(protocols)


def git_env(repo: Path | None = None, fetch_over: Collection[str] = ()) -> dict[str, str]:
    """The environment of a git call in `repo`: what git needs and nothing else of ours, and
    the overrides that keep `repo`'s configuration from running programs (gitsafe)."""
    env = {key: os.environ[key] for key in _PASSED_THROUGH if key in os.environ}
    env.update(
        LC_ALL="C",
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="",  # set and empty: git asks no program (not even core.askPass's)
        GIT_PAGER="cat",
        GIT_EDITOR=":",
        # Read-only by construction: no opportunistic index refresh, no lock files.
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
    )
    if repo is not None:
        pairs = _overrides(repo, env, fetch_over)
        env["GIT_CONFIG_COUNT"] = str(len(pairs))
        for number, (key, value) in enumerate(pairs):
            env[f"GIT_CONFIG_KEY_{number}"] = key
            env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def _overrides(
    repo: Path, env: dict[str, str], fetch_over: Collection[str]
) -> list[tuple[str, str]]:
    where = Path(os.path.abspath(repo))
    allowed = set(fetch_over)
    for root, protocols in _FETCHING.items():
        if where == root or root in where.parents:
            allowed |= protocols
    key = (where, frozenset(allowed))
    if key not in _OVERRIDES:
        # Outside a repository git lists the user's and the system's config: still read.
        proc = subprocess.run(
            git_argv(gitsafe.LIST_CONFIG),
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
        if proc.returncode != 0:
            raise GitFailed(gitsafe.LIST_CONFIG, proc.returncode, proc.stderr)
        _OVERRIDES[key] = gitsafe.overrides(proc.stdout, allowed)
    return _OVERRIDES[key]


def git_argv(args: Sequence[str]) -> list[str]:
    argv = ["git", "--no-pager"]
    for item in _SAFE_CONFIG:
        argv += ["-c", item]
    return [*argv, *gitsafe.with_flags(list(args))]


def run_git(
    repo: Path,
    args: Sequence[str],
    *,
    timeout: float = 30.0,
    check: bool = True,
    input_bytes: bytes | None = None,
    fetch_over: Collection[str] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run git in `repo` and return its result; raise ReviewerError when it fails and `check`.
    `fetch_over`: protocols beyond https this call may fetch over (a clone of our own)."""
    try:
        proc = subprocess.run(
            git_argv(args),
            cwd=repo,
            env=git_env(repo, fetch_over),
            input=input_bytes,
            stdin=None if input_bytes is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise ReviewerError("git is not installed or not on PATH; install git and retry") from exc
    except subprocess.TimeoutExpired as exc:
        raise ReviewerError(f"git {args[0]} took longer than {timeout:.0f} s in {repo}") from exc
    if check and proc.returncode != 0:
        raise GitFailed(args, proc.returncode, proc.stderr)
    return proc


def _start_to_file(
    repo: Path, args: Sequence[str], env: dict[str, str], errors: IO[bytes]
) -> subprocess.Popen[bytes]:
    """git with stdout a pipe and stderr a file (so no pipe can fill up while the caller
    reads the other)."""
    try:
        return subprocess.Popen(
            git_argv(args),
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
    except FileNotFoundError as exc:
        raise ReviewerError("git is not installed or not on PATH; install git and retry") from exc


@contextmanager
def stream_git(
    repo: Path, args: Sequence[str], *, timeout: float = 30.0, chunk_size: int = 1 << 20
) -> Iterator[Iterator[bytes]]:
    """git's stdout as chunks, for one large output (the whole diff of a change) that the
    caller parses as it arrives: it is never held whole, and parsing overlaps git's work.
    stderr goes to a temporary file, so no pipe can fill up. Failure (exit code, time
    limit) raises when the block ends; leaving it early stops git."""
    with tempfile.TemporaryFile() as errors:
        proc = _start_to_file(repo, args, git_env(repo), errors)
        watchdog = threading.Timer(timeout, proc.kill)
        watchdog.start()
        stdout = proc.stdout
        assert stdout is not None

        def chunks() -> Iterator[bytes]:
            while data := stdout.read1(chunk_size):
                yield data

        finished = False
        try:
            yield chunks()
            finished = True
        finally:
            if not finished:
                proc.kill()
            stdout.close()
            code = proc.wait()
            expired = not watchdog.is_alive()
            watchdog.cancel()
        if expired and code != 0:
            raise ReviewerError(f"git {args[0]} took longer than {timeout:.0f} s in {repo}")
        if code != 0:
            errors.seek(0)
            raise GitFailed(args, code, errors.read())


def run_git_for(repo: Path, args: Sequence[str], seconds: float) -> tuple[bytes, bool]:
    """Run git for at most `seconds`: its output so far, and whether it was stopped. For
    history walks whose cost depends on the repository (a log of a rarely changed file in
    60,000 commits): the caller shows what was found and says the rest was not searched.
    GIT_FLUSH=1 makes git write each record as it finds it. Raises GitFailed when git
    fails on its own."""
    env = {**git_env(repo), "GIT_FLUSH": "1"}
    with tempfile.TemporaryFile() as errors:
        proc = _start_to_file(repo, args, env, errors)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + seconds
        chunks: list[bytes] = []
        stopped = False
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    stopped = True
                    break
                data = os.read(fd, 1 << 16)
                if not data:
                    break
                chunks.append(data)
        finally:
            if stopped:
                proc.kill()
            proc.stdout.close()
            code = proc.wait()
        if code != 0 and not stopped:
            errors.seek(0)
            raise GitFailed(args, code, errors.read())
    return b"".join(chunks), stopped


class GitFailed(ReviewerError):
    def __init__(self, args: Sequence[str], returncode: int, stderr: bytes) -> None:
        self.returncode = returncode
        self.stderr = stderr.decode("utf-8", "replace").strip()
        first = self.stderr.splitlines()[0] if self.stderr else f"exit code {returncode}"
        super().__init__(f"git {args[0]} failed: {first}")


def popen_git(repo: Path, args: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start git with stdout as a pipe, for callers that stream and may stop early."""
    return subprocess.Popen(
        git_argv(args),
        cwd=repo,
        env=git_env(repo),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def run_git_parallel(
    repo: Path, commands: Sequence[Sequence[str]], *, timeout: float = 60.0
) -> list[bytes]:
    """Run several read-only git commands at once; their outputs, in order. Any failure
    raises like `run_git` would."""
    procs = [(args, popen_git(repo, args)) for args in commands]
    outputs = []
    try:
        for args, proc in procs:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                raise ReviewerError(
                    f"git {args[0]} took longer than {timeout:.0f} s in {repo}"
                ) from exc
            if proc.returncode != 0:
                raise GitFailed(args, proc.returncode, err)
            outputs.append(out)
    finally:
        for _args, proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return outputs
