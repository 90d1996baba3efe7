"""Local copies of the pull requests a benchmark names, made once and reused.

A benchmark names a pull request by its URL; a review needs a local repository holding its
base and head. Each repository is cloned once into `cache_dir/github.com/OWNER/NAME`: a
partial clone (`--filter=blob:none`: every commit and tree, and only the files of the heads
reviewed, fetched in one batch per head, since a search of a revision reads every file),
without a checkout (the review reads commits, never the working tree, but needs a non-bare
repository to find its top level). Every case of that repository shares it. A
pull request's head is fetched into `refs/reviewer-eval/pull/N/head`, as GitHub keeps it in
`refs/pull/N/head`. What was learnt about a pull request (its head, its base, its title and
description) is written to `NAME.pulls/N.json` beside the clone, so a second load asks
neither git's remote nor GitHub again. A lock file per repository keeps two loads (threads
or processes) from cloning or fetching into it at once.

The base, when the benchmark does not give it: with a token, the pull request's `base.sha`
from GitHub's REST API (through `reviewer.github.client`); without one, the merge base of the head
with the default branch (`origin/HEAD`), or, when the head has been merged into it by a
merge commit, the merge base with that merge's first parent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reviewer.errors import ReviewerError, json_problem
from reviewer.eval.cases import EvalCase, ExpectedIssue
from reviewer.wording import plural
from reviewer.workspace.gitcmd import GitFailed, allow_fetching, run_git

# Where repositories are cloned from; a test (or a mirror) points it elsewhere.
GIT_BASE_ENV = "REVIEWER_EVAL_GIT_BASE"
DEFAULT_GIT_BASE = "https://github.com"
DEFAULT_API_URL = "https://api.github.com"
_CLONE_TIMEOUT = 4 * 3600.0  # sentry and keycloak are large, even without file contents
_FETCH_TIMEOUT = 3600.0
_REF_PREFIX = "refs/reviewer-eval/pull"
_PULL_URL = re.compile(
    r"https://github\.com/([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100})/pull/([0-9]{1,10})/?"
)
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class PullRef:
    owner: str
    name: str
    number: int

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.name}"

    def __str__(self) -> str:
        return f"{self.repository}#{self.number}"


def pull_requests_in(file: Path, raw: bytes, reader: str, hint: str) -> list[dict[str, Any]]:
    """A benchmark file's list of pull requests (JSON objects), or a one-line error naming the
    reader (`martian`, `aacr`), the file and what to pass instead (`hint`)."""
    try:
        items = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ReviewerError(f"{reader}: {file} is not UTF-8 text; {hint}") from exc
    except json.JSONDecodeError as exc:
        raise ReviewerError(
            f"{reader}: {file} is not valid JSON ({exc.msg}, line {exc.lineno}); {hint}"
        ) from exc
    except (ValueError, RecursionError) as exc:  # a number too long, or nested too deep
        problem = json_problem(exc)
        raise ReviewerError(f"{reader}: {file} is not valid JSON ({problem}); {hint}") from exc
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ReviewerError(f"{reader}: {file} is not a list of pull requests; {hint}")
    return items


def parse_pull_url(url: object, where: str) -> PullRef:
    """The pull request a GitHub URL names, or a one-line error naming `where` it was read."""
    match = _PULL_URL.fullmatch(url) if isinstance(url, str) else None
    if match is None or match.group(2).removesuffix(".git") in ("", ".", ".."):
        raise ReviewerError(
            f"{where}: {url!r} is not a GitHub pull request URL "
            "(https://github.com/OWNER/NAME/pull/N); fix or remove that entry"
        )
    owner, name, number = match.groups()
    return PullRef(owner, name.removesuffix(".git"), int(number))


def commit_id(value: object, where: str) -> str:
    """A full commit id from a dataset file, or a one-line error."""
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        raise ReviewerError(f"{where}: {value!r} is not a full commit id (40 hex digits)")
    return value


@dataclass(frozen=True)
class PullCase:
    """A case as a benchmark file describes it: a pull request, before it is fetched."""

    id: str
    pull: PullRef
    expected: tuple[ExpectedIssue, ...]
    repository: str  # the label for per-repository metrics
    title: str = ""
    base: str | None = None  # given by the benchmark, else found (see the module's doc)
    head: str | None = None  # given by the benchmark, else the pull request's head


class Clones:
    """The cache of cloned repositories under `cache_dir`, and the cases made from it."""

    def __init__(
        self,
        cache_dir: Path,
        *,
        token: str | None,
        log: Callable[[str], None],
        git_base: str | None = None,
        api_url: str | None = None,
    ) -> None:
        self.cache_dir = Path(cache_dir)
        self.token = token or None
        self.log = log
        base = git_base or os.environ.get(GIT_BASE_ENV) or DEFAULT_GIT_BASE
        self.git_base = base.rstrip("/")
        # The protocol the clones fetch over: https from GitHub, a local mirror's `file`.
        scheme = urlsplit(self.git_base).scheme.lower()
        self.protocols = frozenset({scheme if len(scheme) > 1 else "file"})
        self.api_url = (api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")

    def url(self, pull: PullRef) -> str:
        return f"{self.git_base}/{pull.owner}/{pull.name}.git"

    def folder(self, pull: PullRef) -> Path:
        return self.cache_dir / "github.com" / pull.owner / pull.name

    def resolve(self, case: PullCase) -> EvalCase:
        """The case with a local repository holding its base and head."""
        root = self.folder(case.pull)
        # Our own partial clone: git may fetch the files a review reads when it needs them.
        allow_fetching(root, self.protocols)
        with _locked(root.with_name(root.name + ".lock")):
            self._clone(case.pull, root)
            info = _PullInfo(root.with_name(root.name + ".pulls") / f"{case.pull.number}.json")
            head = case.head or self._pull_head(case.pull, root, info)
            if self.token is not None and "github" not in info.data:
                info.update(github=self._from_github(case.pull))
            base = case.base or self._base(case.pull, root, head, info)
            self._require(case.pull, root, (base, head))
            self._prefetch_files(case.pull, root, head)
        github = info.data.get("github") or {}
        return EvalCase(
            id=case.id,
            repo=root,
            base=base,
            head=head,
            expected=case.expected,
            repository=case.repository,
            title=case.title or str(github.get("title") or ""),
            description=str(github.get("body") or ""),
        )

    # --- git ---------------------------------------------------------------------------------

    def _clone(self, pull: PullRef, root: Path) -> None:
        if (root / ".git").is_dir():
            return
        url = self.url(pull)
        partial = root.with_name(root.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)  # a clone cut short by an earlier run
        root.parent.mkdir(parents=True, exist_ok=True)
        self.log(f"eval: cloning {url} into {root} (commits and trees; files when read)")
        args = ["clone", "--quiet", "--no-checkout", "--filter=blob:none", "--", url, str(partial)]
        try:
            run_git(root.parent, args, timeout=_CLONE_TIMEOUT, fetch_over=self.protocols)
        except GitFailed as exc:
            shutil.rmtree(partial, ignore_errors=True)
            raise ReviewerError(
                f"cannot clone {url}: {_last_line(exc.stderr)}; check the network, the URL "
                f"and ${GIT_BASE_ENV}"
            ) from exc
        partial.rename(root)

    def _fetch(self, pull: PullRef, root: Path, refspec: str, what: str) -> None:
        try:
            run_git(root, ["fetch", "--quiet", "origin", refspec], timeout=_FETCH_TIMEOUT)
        except GitFailed as exc:
            raise ReviewerError(
                f"cannot fetch {what} of {pull} from {self.url(pull)}: "
                f"{_last_line(exc.stderr)}; check that the pull request exists"
            ) from exc

    def _pull_head(self, pull: PullRef, root: Path, info: _PullInfo) -> str:
        cached = info.data.get("head")
        if isinstance(cached, str) and _has_commit(root, cached):
            return cached
        ref = f"{_REF_PREFIX}/{pull.number}/head"
        self._fetch(pull, root, f"+refs/pull/{pull.number}/head:{ref}", "the head")
        head = _rev_parse(root, ref)
        info.update(head=head)
        return head

    def _require(self, pull: PullRef, root: Path, commits: Sequence[str]) -> None:
        """Fetch the commits the clone lacks (a pull request's older head, a deleted branch);
        each is kept by a ref, so git's housekeeping never drops it."""
        missing = [c for c in commits if not _has_commit(root, c)]
        if missing and not _has_ref(root, f"{_REF_PREFIX}/{pull.number}/head"):
            ref = f"{_REF_PREFIX}/{pull.number}/head"
            self._fetch(pull, root, f"+refs/pull/{pull.number}/head:{ref}", "the head")
            missing = [c for c in missing if not _has_commit(root, c)]
        for commit in missing:
            self._fetch(pull, root, f"+{commit}:{_REF_PREFIX}/{pull.number}/{commit}", commit)
        for commit in commits:
            run_git(root, ["update-ref", f"{_REF_PREFIX}/{pull.number}/{commit}", commit])

    def _prefetch_files(self, pull: PullRef, root: Path, commit: str) -> None:
        """Fetch the files of `commit` the clone lacks, in one batch. Without it each file is
        fetched on its own when first read, and a search of the revision (`git grep`) would
        make one request per file of the repository."""
        listed = run_git(
            root, ["rev-list", "--objects", "--no-walk", "--missing=print", commit], timeout=600.0
        ).stdout.decode("utf-8", "surrogateescape")
        missing = [line[1:].split()[0] for line in listed.splitlines() if line.startswith("?")]
        if not missing:
            return
        self.log(
            f"eval: fetching {plural(len(missing), 'file')} of {pull} at {commit[:12]} missing here"
        )
        # The options and input of git's own lazy fetch, for all of them at once.
        args = ["-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags"]
        args += ["--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none"]
        try:
            run_git(
                root,
                [*args, "--stdin", "origin"],
                input_bytes="\n".join(missing).encode() + b"\n",
                timeout=_FETCH_TIMEOUT,
            )
        except GitFailed as exc:
            raise ReviewerError(
                f"cannot fetch the files of {pull} from {self.url(pull)}: "
                f"{_last_line(exc.stderr)}; check the network"
            ) from exc

    def _base(self, pull: PullRef, root: Path, head: str, info: _PullInfo) -> str:
        github = info.data.get("github")
        if isinstance(github, dict) and isinstance(github.get("base"), str):
            return str(github["base"])
        cached = info.data.get("merge_base")
        if isinstance(cached, str):
            return cached
        base = _merge_base_with_default(pull, root, head)
        info.update(merge_base=base)
        return base

    # --- GitHub ------------------------------------------------------------------------------

    def _from_github(self, pull: PullRef) -> dict[str, str]:
        # Imported here: PyGithub is only needed when a token is given.
        from reviewer.forge.signing import Signer
        from reviewer.github.client import GitHubClient

        # Nothing is signed or read back here: the client only reads the pull request.
        signer = Signer(b"", str(pull))
        client = GitHubClient(
            self.api_url, self.token or "", pull.repository, log=self.log, signer=signer
        )
        found = client.pull_info(client.pull(pull.number))
        return {"base": found.base_sha, "title": found.title, "body": found.body}


class _PullInfo:
    """What is known about one pull request, kept in a small JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = None  # not written yet, or cut short: learnt again
        if isinstance(loaded, dict):
            self.data = loaded

    def update(self, **values: Any) -> None:
        self.data.update(values)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(self.data, indent=1, sort_keys=True), encoding="utf-8")
        partial.replace(self.path)


def _merge_base_with_default(pull: PullRef, root: Path, head: str) -> str:
    default = "refs/remotes/origin/HEAD"
    if not _has_ref(root, default):
        raise ReviewerError(
            f"cannot find the base of {pull}: the clone {root} has no default branch "
            "(origin/HEAD); give a GitHub token so the base comes from the pull request"
        )
    base = _git_line(root, ["merge-base", head, default])
    if base != head:
        return base
    # The head is in the default branch already: merged by a merge commit (its base is that
    # merge's first parent) or fast-forwarded (no trace of its base is left).
    first_parents = _git_lines(root, ["rev-list", "--first-parent", f"{head}..{default}"])
    descendants = set(_git_lines(root, ["rev-list", "--ancestry-path", f"{head}..{default}"]))
    merges = [c for c in first_parents if c in descendants]
    if merges:
        parent = _git_line(root, ["rev-parse", f"{merges[-1]}^1"])
        base = _git_line(root, ["merge-base", parent, head])
        if base != head:
            return base
    raise ReviewerError(
        f"cannot find the base of {pull} without GitHub: its head is on the default branch; "
        "give a GitHub token so the base comes from the pull request"
    )


def _git_line(root: Path, args: Sequence[str]) -> str:
    return run_git(root, args).stdout.decode().strip()


def _git_lines(root: Path, args: Sequence[str]) -> list[str]:
    return run_git(root, args, timeout=300.0).stdout.decode().split()


def _rev_parse(root: Path, ref: str) -> str:
    return _git_line(root, ["rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}"])


def _has_ref(root: Path, ref: str) -> bool:
    args = ["rev-parse", "--verify", "--quiet", "--end-of-options", ref]
    return run_git(root, args, check=False).returncode == 0


def _has_commit(root: Path, commit: str) -> bool:
    # `--missing` keeps git from fetching a missing object on its own: in a partial clone that
    # lazy fetch negotiates nothing and could download the commit's whole history again.
    proc = run_git(root, ["rev-list", "--missing=print", "--no-walk", commit], check=False)
    return proc.returncode == 0


def _last_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else "git gave no reason"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made if missing): one clone or fetch at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        _lock(handle.fileno())
        try:
            yield
        finally:
            _unlock(handle.fileno())


try:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt
    import time

    def _lock(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                return
            except OSError:
                time.sleep(0.5)

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
