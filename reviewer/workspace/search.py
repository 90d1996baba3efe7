"""Regex search over a workspace, bounded in matches and in time.

Two engines, one dialect. Files on disk are searched with ripgrep (linear-time regex, the
fastest there is); a commit that is not checked out is searched with `git grep -P` over its
objects. Patterns are first validated by ripgrep when it is installed, so both paths accept
the same syntax. Every hit is checked against the workspace listing before it is returned:
an engine can never show a file the tools would refuse to read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import IO

from reviewer.errors import ToolError
from reviewer.workspace.base import Kind, Workspace
from reviewer.workspace.gitcmd import git_argv, git_env
from reviewer.workspace.globs import basename_or_path_matcher
from reviewer.workspace.revision import RevisionWorkspace
from reviewer.workspace.worktree import WorktreeWorkspace, plain_file_on_disk

# A record longer than this is cut; the rest of it is read and thrown away.
MAX_RECORD_BYTES = 64 * 1024
# Longer than any path git or a file system allows.
MAX_PATH_BYTES = 8192


@dataclass
class Hit:
    path: str
    line: int
    text: str


@dataclass
class SearchOutcome:
    hits: list[Hit] = field(default_factory=list)
    more: bool = False
    timed_out: bool = False
    engine: str = ""


@cache
def ripgrep_binary() -> str | None:
    """The rg that the `ripgrep` package installed beside this Python, else one on PATH."""
    scripts = Path(sysconfig.get_path("scripts"))
    for candidate in (scripts / "rg", Path(sys.executable).parent / "rg"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


# Past this many files that differ from the checkout, a commit is searched in git objects
# alone: listing them all as pathspecs would cost more than it saves.
MAX_OVERLAY_FILES = 2000


def search(
    workspace: Workspace,
    pattern: str,
    *,
    base: str,
    base_is_file: bool,
    file_glob: str | None,
    max_hits: int,
    timeout: float,
) -> SearchOutcome:
    """Find lines matching `pattern` in the files under `base` (a resolved path, '' = root)."""
    rg = ripgrep_binary()
    if isinstance(workspace, WorktreeWorkspace):
        plan = _Plan(on_disk=True, objects=None, untracked=True)
    else:
        assert isinstance(workspace, RevisionWorkspace)
        differences = workspace.disk_differences
        if differences is not None and len(differences) <= MAX_OVERLAY_FILES:
            # The checkout holds most of the commit: rg on disk for the rest, git grep for
            # the files that differ.
            plan = _Plan(on_disk=True, objects=differences, untracked=False)
        else:
            plan = _Plan(on_disk=False, objects=None, untracked=False)
    started = time.monotonic()
    outcomes: list[SearchOutcome] = []
    if plan.on_disk:
        if rg:
            argv, parse, engine = _ripgrep_argv(rg, pattern, base, file_glob), _parse_rg, "rg"
        else:
            argv = _git_grep_argv(pattern, None, base, base_is_file, file_glob, plan.untracked)
            parse, engine = _git_grep_parser(None), "git grep"
        accept = _acceptor(workspace, base, file_glob, on_disk=True, skip=plan.objects)
        outcome = _stream(argv, workspace.root, parse, accept, max_hits, timeout)
        outcome.engine = engine
        outcomes.append(outcome)
    commit = getattr(workspace, "commit", None)
    if commit and (not plan.on_disk or plan.objects):
        if rg:
            _validate_with_ripgrep(rg, pattern)
        only = sorted(plan.objects) if plan.on_disk and plan.objects else None
        argv = _git_grep_argv(pattern, commit, base, base_is_file, file_glob, False, only)
        accept = _acceptor(workspace, base, file_glob, on_disk=False, skip=None)
        remaining = max(0.5, timeout - (time.monotonic() - started))
        outcome = _stream(
            argv, workspace.root, _git_grep_parser(commit), accept, max_hits, remaining
        )
        outcome.engine = "git grep"
        outcomes.append(outcome)
    return _merge(outcomes, max_hits)


@dataclass(frozen=True)
class _Plan:
    on_disk: bool
    # With on_disk: files to take from git objects instead (they differ on disk).
    objects: frozenset[str] | None
    untracked: bool


def _merge(outcomes: list[SearchOutcome], max_hits: int) -> SearchOutcome:
    if len(outcomes) == 1:
        return outcomes[0]
    hits = sorted((h for o in outcomes for h in o.hits), key=lambda h: (h.path, h.line))
    return SearchOutcome(
        hits=hits[:max_hits],
        more=len(hits) > max_hits or any(o.more for o in outcomes),
        timed_out=any(o.timed_out for o in outcomes),
        engine="+".join(o.engine for o in outcomes),
    )


def _ripgrep_argv(rg: str, pattern: str, base: str, file_glob: str | None) -> list[str]:
    argv = [
        rg,
        "--no-config",
        "--null",
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--color=never",
        "--hidden",
        "--no-ignore-dot",
        "--no-ignore-global",
        "--no-messages",
        "--glob=!.git",
        f"--regexp={pattern}",
    ]
    if file_glob:
        # rg anchors a glob with a slash at its working directory (the root); ours are
        # relative to the searched directory.
        anchored = f"{base}/{file_glob}" if "/" in file_glob and base else file_glob
        argv.append(f"--glob={anchored}")
    return [*argv, "--", base or "."]


def _validate_with_ripgrep(rg: str, pattern: str) -> None:
    proc = subprocess.run(
        [rg, "--no-config", "--quiet", f"--regexp={pattern}", "--", os.devnull],
        capture_output=True,
        env=git_env(),
        stdin=subprocess.DEVNULL,
        timeout=10,
        check=False,
    )
    if proc.returncode == 2:
        raise ToolError(_regex_error(proc.stderr))


def _git_grep_argv(
    pattern: str,
    commit: str | None,
    base: str,
    base_is_file: bool,
    file_glob: str | None,
    untracked: bool,
    only: list[str] | None = None,
) -> list[str]:
    args = ["grep", "-z", "-n", "-I", "-P", "--no-color", "--full-name", "-e", pattern]
    if untracked:
        args.append("--untracked")
    if commit:
        args.append(commit)
    args.append("--")
    if only is not None:
        # The files to read from objects; the base and glob are applied by the acceptor.
        return git_argv([*args, *(f":(top,literal){path}" for path in only)])
    if file_glob and not base_is_file:
        relative = file_glob if "/" in file_glob else f"**/{file_glob}"
        prefix = _escape_glob(base) + "/" if base else ""
        args.append(f":(top,glob){prefix}{relative}")
    elif base:
        args.append(f":(top,literal){base}")
    return git_argv(args)


def _escape_glob(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


Parser = Callable[[bytes, bytes], "tuple[str, int, bytes] | None"]


def _parse_rg(path: bytes, rest: bytes) -> tuple[str, int, bytes] | None:
    number, sep, text = rest.partition(b":")
    if not sep or not number.isdigit():
        return None  # e.g. "binary file matches" notices
    name = path.decode("utf-8", "surrogateescape")
    return (name[2:] if name.startswith("./") else name), int(number), text


def _git_grep_parser(commit: str | None) -> Parser:
    prefix = f"{commit}:".encode() if commit else b""

    def parse(path: bytes, rest: bytes) -> tuple[str, int, bytes] | None:
        number, sep, text = rest.partition(b"\0")
        if not sep or not number.isdigit():
            return None
        name = path.removeprefix(prefix)
        return name.decode("utf-8", "surrogateescape"), int(number), text

    return parse


def _acceptor(
    workspace: Workspace,
    base: str,
    file_glob: str | None,
    on_disk: bool,
    skip: frozenset[str] | None,
) -> Callable[[str], bool]:
    matcher = basename_or_path_matcher(file_glob) if file_glob else None
    offset = len(base) + 1 if base else 0
    verdicts: dict[str, bool] = {}

    def accept(path: str) -> bool:
        verdict = verdicts.get(path)
        if verdict is None:
            verdict = workspace.listing.kinds.get(path) is Kind.FILE
            if verdict and skip is not None and path in skip:
                verdict = False
            if verdict and base and not (path == base or path.startswith(base + "/")):
                verdict = False
            if verdict and matcher is not None:
                verdict = matcher.fullmatch(path[offset:]) is not None
            if verdict and on_disk:
                verdict = plain_file_on_disk(workspace.root, path)
            verdicts[path] = verdict
        return verdict

    return accept


def _stream(
    argv: list[str],
    cwd: Path,
    parse: Parser,
    accept: Callable[[str], bool],
    max_hits: int,
    timeout: float,
) -> SearchOutcome:
    outcome = SearchOutcome()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=git_env(cwd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        expired = threading.Event()

        def stop() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(timeout, stop)
        timer.start()
        try:
            assert proc.stdout is not None
            for path, rest in _records(proc.stdout):
                parsed = parse(path, rest)
                if parsed is None or not accept(parsed[0]):
                    continue
                if len(outcome.hits) == max_hits:
                    outcome.more = True
                    break
                text = parsed[2].rstrip(b"\r").decode("utf-8", "replace")
                outcome.hits.append(Hit(parsed[0], parsed[1], text))
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()  # type: ignore[union-attr]
        outcome.timed_out = expired.is_set() and not outcome.more
        # ripgrep searches files in parallel; a stable order makes answers reproducible.
        outcome.hits.sort(key=lambda hit: (hit.path, hit.line))
        if proc.returncode > 1 and not outcome.hits:
            errors.seek(0)
            raise ToolError(_regex_error(errors.read(4096)))
    return outcome


def _records(stream: IO[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """(path, rest of the line) records: `path NUL rest NEWLINE`, both engines' -z/--null form.

    The path is read up to its NUL, not up to a newline: a file name may hold a newline,
    and splitting on it first would let the tail of one name pass for another file's hit.
    The rest is cut to MAX_RECORD_BYTES (the excess is drained).
    """
    buffer = b""
    finished = False

    def fill() -> bool:
        nonlocal buffer, finished
        if finished:
            return False
        chunk = stream.read1(1 << 16) if hasattr(stream, "read1") else stream.read(1 << 16)
        if not chunk:
            finished = True
            return False
        buffer += chunk
        return True

    while True:
        while b"\0" not in buffer and len(buffer) <= MAX_PATH_BYTES and fill():
            pass
        nul = buffer.find(b"\0")
        if nul < 0:
            if not buffer:
                return
            # No path here (a notice, or a path too long to be real): skip to the next line.
            newline = buffer.find(b"\n")
            while newline < 0 and fill():
                buffer = buffer[-1:]  # keep memory bounded while draining
                newline = buffer.find(b"\n")
            if newline < 0:
                return
            buffer = buffer[newline + 1 :]
            continue
        path, buffer = buffer[:nul], buffer[nul + 1 :]
        while b"\n" not in buffer and len(buffer) < MAX_RECORD_BYTES and fill():
            pass
        newline = buffer.find(b"\n")
        if newline >= 0:
            rest, buffer = buffer[:newline], buffer[newline + 1 :]
            yield path, rest
            continue
        rest, buffer = buffer[:MAX_RECORD_BYTES], buffer[MAX_RECORD_BYTES:]
        # An over-long line: keep its start, drain the rest of it.
        while True:
            newline = buffer.find(b"\n")
            if newline >= 0:
                buffer = buffer[newline + 1 :]
                break
            buffer = b""
            if not fill():
                break
        yield path, rest


def _regex_error(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    detail = " ".join(lines[:6])[:400] if lines else "the search failed"
    for prefix in ("fatal: ", "rg: ", "regex parse error: "):
        detail = detail.removeprefix(prefix)
    return f"Invalid search: {detail}"
