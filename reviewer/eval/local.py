"""Our own dataset format, for local use and for tests: a JSON file of cases.

    {"format": "reviewer-eval", "name": "sample", "version": "1",
     "cases": [{"id": "...", "repo": "../calc", "base": "main", "head": "fix",
                "title": "...", "description": "...", "repository": "acme/calc",
                "learnings": "- `calc/**`: ...",
                "expected": [{"description": "...", "severity": "high",
                              "path": "calc.py", "lines": [3, 4], "side": "RIGHT"}]}]}

`learnings` is the text of a `.reviewer/learnings.md` the review is given in place of the
one at the case's base (`learnings = "off"` turns both off, for `--compare`).

A case names a local repository (`repo`, relative to the dataset file) with `base` and
`head`, or describes it: `commits`, a list of `{"message", "files": {path: text or null}}`
(null deletes), the first commit being the base and the last the head. Such a repository is
built once in the cache with fixed authors and dates, so its commit ids (and the cache keys
made from them) are the same on every machine: the shipped dataset is self-contained.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reviewer.context.tickets.model import Ticket
from reviewer.errors import ReviewerError, json_problem
from reviewer.eval.cases import SIDES, Dataset, EvalCase, ExpectedIssue
from reviewer.findings import Severity
from reviewer.workspace.gitcmd import git_argv, git_env, run_git

FORMAT_TAG = "reviewer-eval"
SEVERITY_NAMES = tuple(severity.value for severity in Severity)
WHAT = 'a JSON file with "format": "reviewer-eval"'
_CASE_KEYS = frozenset(
    {"id", "repo", "base", "head", "commits", "title", "description", "repository", "expected",
     "tickets", "learnings"}
)  # fmt: skip
_TICKET_KEYS = frozenset({"key", "title", "text", "url", "status"})
_ISSUE_KEYS = frozenset({"description", "severity", "path", "lines", "side"})
# Every built repository has the same author and clock: same input, same commit ids.
_IDENTITY = "reviewer-eval <eval@reviewer.invalid>"
_EPOCH = 1_700_000_000


def detect_local(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return f'"{FORMAT_TAG}"'.encode() in head


def load_local(path: Path, *, cache_dir: Path, token: str | None, log: Any) -> Dataset:
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise ReviewerError(f"{path}: not valid JSON: {json_problem(exc)}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT_TAG:
        raise ReviewerError(f'{path}: a local dataset is an object with "format": "{FORMAT_TAG}"')
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise ReviewerError(f'{path}: "cases" must be a non-empty list')
    # The whole file is checked before any repository is built: a mistake in the last case
    # is one line, not a line after the repositories of every case before it.
    checked = [
        _case(case, f"{path}: case {number}", path.parent) for number, case in enumerate(cases, 1)
    ]
    ids = [item.case.id for item in checked]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise ReviewerError(f"{path}: case id '{duplicate}' is used twice; ids must be unique")
    loaded = tuple(item.built(cache_dir / "repos", log) for item in checked)
    version = str(data.get("version") or hashlib.sha256(raw).hexdigest()[:12])
    return Dataset(str(data.get("name") or path.stem), version, loaded)


@dataclass(frozen=True)
class _CheckedCase:
    """A case read and checked; its repository is built (when it describes one) later."""

    case: EvalCase
    where: str
    # The fast-import stream of the commits it describes; None when it names a repository.
    stream: bytes | None = None

    def built(self, parent: Path, log: Any) -> EvalCase:
        if self.stream is None:
            return self.case
        repo, base, head = build_repository(self.stream, parent, self.where, log)
        return replace(self.case, repo=repo, base=base, head=head)


def _checked(data: Any, where: str, what: str, keys: frozenset[str]) -> dict[str, Any]:
    """`data` as an object of only `keys`, else a one-line error naming where it is."""
    if not isinstance(data, dict):
        raise ReviewerError(f"{where}: {what} is an object")
    unknown = sorted(set(data) - keys)
    if unknown:
        raise ReviewerError(f"{where}: unknown key(s) {unknown}; known: {sorted(keys)}")
    return data


def _case(data: Any, where: str, folder: Path) -> _CheckedCase:
    data = _checked(data, where, "a case", _CASE_KEYS)
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise ReviewerError(f'{where}: "id" is a non-empty string')
    where = f"{where} ('{case_id}')"
    stream = None
    if "commits" in data:
        if "repo" in data or "base" in data or "head" in data:
            raise ReviewerError(f'{where}: give "commits" or "repo"/"base"/"head", not both')
        stream = commits_stream(data["commits"], where)
        repo, base, head = Path(), "", ""  # built once the whole dataset is checked
        label = data.get("repository") or case_id
    else:
        for key in ("repo", "base", "head"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise ReviewerError(f'{where}: "{key}" is required (or describe "commits")')
            if "\0" in data[key]:
                raise ReviewerError(f'{where}: "{key}" holds a NUL byte; no path or revision can')
        repo = (folder / data["repo"]).resolve()
        if not repo.is_dir():
            raise ReviewerError(f"{where}: repository folder '{repo}' does not exist")
        base, head = data["base"], data["head"]
        label = data.get("repository") or repo.name
    expected = data.get("expected", [])
    if not isinstance(expected, list):
        raise ReviewerError(f'{where}: "expected" is a list of issues')
    learnings = data.get("learnings")
    if learnings is not None and not isinstance(learnings, str):
        raise ReviewerError(f'{where}: "learnings" is the text of a .reviewer/learnings.md')
    case = EvalCase(
        id=case_id,
        repo=repo,
        base=base,
        head=head,
        expected=tuple(_issue(issue, f"{where}: issue {n}") for n, issue in enumerate(expected, 1)),
        repository=str(label),
        title=str(data.get("title") or ""),
        description=str(data.get("description") or ""),
        tickets=_tickets(data.get("tickets", []), where),
        learnings=learnings,
    )
    return _CheckedCase(case, where, stream)


def _tickets(data: Any, where: str) -> tuple[Ticket, ...]:
    """A case's tickets: `[{"key", "title", "text", "url"?, "status"?}]`, keys unique."""
    if not isinstance(data, list):
        raise ReviewerError(f'{where}: "tickets" is a list of {{"key", "title", "text"}}')
    tickets = []
    for number, item in enumerate(data, 1):
        item = _checked(item, f"{where}: ticket {number}", "a ticket", _TICKET_KEYS)
        if not all(isinstance(item.get(k, ""), str) for k in _TICKET_KEYS):
            raise ReviewerError(f"{where}: ticket {number}: every value is a string")
        key, text = item.get("key", "").strip(), item.get("text", "")
        if not key or not text.strip():
            raise ReviewerError(f'{where}: ticket {number}: "key" and "text" are non-empty')
        tickets.append(Ticket(key, item.get("url", ""), item.get("title", ""),
                              item.get("status", ""), text, read=True))  # fmt: skip
    keys = [t.key.upper() for t in tickets]
    if len(set(keys)) != len(keys):
        raise ReviewerError(f"{where}: two tickets have the same key")
    return tuple(tickets)


def _issue(data: Any, where: str) -> ExpectedIssue:
    data = _checked(data, where, "an expected issue", _ISSUE_KEYS)
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ReviewerError(f'{where}: "description" is a non-empty string')
    lines = data.get("lines")
    if lines is not None:
        if isinstance(lines, int) and not isinstance(lines, bool):
            lines = [lines, lines]
        if (
            not isinstance(lines, list)
            or len(lines) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in lines)
            or lines[0] > lines[1]
        ):
            raise ReviewerError(f'{where}: "lines" is [first, last] (1-based) or one line number')
    side = data.get("side", "RIGHT")
    if side not in SIDES:
        raise ReviewerError(f'{where}: "side" is RIGHT (new file) or LEFT (removed lines)')
    severity = data.get("severity")
    if severity is not None and str(severity).lower() not in SEVERITY_NAMES:
        raise ReviewerError(
            f'{where}: "severity" {json.dumps(str(severity))[:60]} is not one of '
            f"{', '.join(SEVERITY_NAMES)}"
        )
    return ExpectedIssue(
        description=description,
        severity=str(severity).lower() if severity is not None else None,
        path=data.get("path"),
        lines=(lines[0], lines[1]) if lines else None,
        side=side,
    )


def commits_stream(commits: Any, where: str) -> bytes:
    """The `git fast-import` stream of the commits a case describes, checked."""
    if not isinstance(commits, list) or len(commits) < 2:
        raise ReviewerError(f'{where}: "commits" is a list of at least two (base, then head)')
    return _fast_import_stream(commits, where)


def build_repository(stream: bytes, parent: Path, where: str, log: Any) -> tuple[Path, str, str]:
    """A repository holding the commits of `stream` (built once; the folder is named by their
    hash), and the ids of its first and last commit."""
    digest = hashlib.sha256(stream).hexdigest()[:16]
    target = parent / digest
    if not (target / ".git").is_dir():
        parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=parent))
        try:
            run_git(building, ["init", "-q", "-b", "main"])
            _run(building, ["fast-import", "--quiet"], stream)
            run_git(building, ["reset", "-q", "--hard", "main"])
            try:
                os.rename(building, target)
            except OSError:  # another run built it meanwhile
                shutil.rmtree(building, ignore_errors=True)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        if log:
            log(f"built the repository of {where} in {target}")
    ids = run_git(target, ["rev-list", "--first-parent", "--reverse", "main"]).stdout.split()
    return target, ids[0].decode(), ids[-1].decode()


def _fast_import_stream(commits: list[Any], where: str) -> bytes:
    out = bytearray()
    for number, commit in enumerate(commits, 1):
        if not isinstance(commit, dict) or not isinstance(commit.get("files", {}), dict):
            raise ReviewerError(f'{where}: commit {number} is {{"message", "files": {{...}}}}')
        message = str(commit.get("message") or f"commit {number}").encode()
        stamp = f"{_IDENTITY} {_EPOCH + number * 60} +0000\n".encode()
        out += b"commit refs/heads/main\n"
        out += b"author " + stamp + b"committer " + stamp
        out += b"data %d\n" % len(message) + message + b"\n"
        for path, text in sorted(commit.get("files", {}).items()):
            if _bad_path(path):
                raise ReviewerError(f"{where}: commit {number}: bad file path {path!r}")
            quoted = json.dumps(path, ensure_ascii=False).encode()  # quoted as fast-import reads
            if text is None:
                out += b"D " + quoted + b"\n"
            elif isinstance(text, str):
                body = text.encode()
                out += b"M 100644 inline " + quoted + b"\n"
                out += b"data %d\n" % len(body) + body + b"\n"
            else:
                raise ReviewerError(f"{where}: commit {number}: {path!r} is text or null")
        out += b"\n"
    return bytes(out)


def _bad_path(path: str) -> bool:
    return (
        not path
        or any(ord(c) < 32 for c in path)
        or path.startswith("/")
        or ".." in path.split("/")
        or ".git" in path.split("/")
    )


def _run(repo: Path, args: list[str], stdin: bytes) -> None:
    git_writing(repo, args, stdin)


def git_writing(repo: Path, args: list[str], stdin: bytes | None = None) -> bytes:
    """git that writes objects in a repository of the evaluation's own (never the user's),
    as a fixed author at a fixed time, so the same input makes the same commit ids."""
    stamp = f"@{_EPOCH} +0000"
    name, _, email = _IDENTITY.partition(" <")
    env = {
        **git_env(repo),
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email.rstrip(">"),
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email.rstrip(">"),
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
    }
    proc = subprocess.run(
        git_argv(args), cwd=repo, env=env, input=stdin, capture_output=True, check=False
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise ReviewerError(f"git {args[0]} failed building a dataset repository: {message}")
    return proc.stdout
