"""The sandbox the tools run in: one revision of one repository, read-only."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.workspace.base import Kind, Listing, Workspace
from reviewer.workspace.gitcmd import GitFailed, run_git
from reviewer.workspace.revision import RevisionWorkspace
from reviewer.workspace.worktree import WorktreeWorkspace

__all__ = [
    "Kind",
    "Listing",
    "RevisionWorkspace",
    "Workspace",
    "WorktreeWorkspace",
    "open_workspace",
    "repository_root",
    "resolve_commit",
]


def repository_root(directory: Path) -> Path:
    """The resolved top level of the git repository that holds `directory`."""
    if not directory.exists():
        raise ReviewerError(f"--repo: '{directory}' does not exist; pass a git repository folder")
    if not directory.is_dir():
        raise ReviewerError(f"--repo: '{directory}' is not a folder; pass a git repository folder")
    try:
        out = run_git(directory, ["rev-parse", "--show-toplevel"]).stdout
    except GitFailed as exc:
        if "not a git repository" in exc.stderr:
            raise ReviewerError(
                f"'{directory}' is not inside a git repository; run in one or pass --repo DIR"
            ) from exc
        if "dubious ownership" in exc.stderr:
            raise ReviewerError(
                f"git refuses '{directory}' (dubious ownership); run "
                f"`git config --global --add safe.directory {directory}`"
            ) from exc
        raise
    return Path(out.decode("utf-8", "surrogateescape").strip()).resolve()


_PARENT_WALK = re.compile(r"^(.+?)(?:~\d*|\^\d*)+$")


def resolve_commit(root: Path, revision: str, *, uncommitted: bool = False) -> str:
    """The full commit id `revision` names, or a one-line error that says what to check
    (`uncommitted`: the run already reads the working tree, so that is not the advice)."""
    if not revision or revision.startswith("-") or "\x00" in revision:
        raise ReviewerError(f"invalid revision '{revision}': give a branch, tag or commit id")
    proc = _rev_parse(root, revision)
    if proc.returncode != 0:
        raise ReviewerError(_why_unknown(root, revision, uncommitted))
    return proc.stdout.decode().strip()


def _rev_parse(root: Path, revision: str) -> subprocess.CompletedProcess[bytes]:
    return run_git(
        root,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
        check=False,
    )


def _why_unknown(root: Path, revision: str, uncommitted: bool) -> str:
    """What to do about a revision git does not know: a repository without commits, a walk
    back past the first commit (`HEAD~1` on a root commit), or a name not fetched."""
    if run_git(root, ["rev-list", "-n1", "--all"]).stdout == b"":
        if uncommitted:
            return (
                f"the repository {root} has no commits yet, and --uncommitted compares the "
                "working tree with a commit; make a first commit (git add -A && git commit)"
            )
        return (
            f"the repository {root} has no commits yet; commit first, or read the "
            "working tree with --uncommitted"
        )
    walk = _PARENT_WALK.match(revision)  # `X~2`, `X^`, `X^2~1`: steps back through parents
    start = walk.group(1) if walk else ""
    shallow = run_git(root, ["rev-parse", "--is-shallow-repository"]).stdout.strip() == b"true"
    if walk and not shallow and _rev_parse(root, start).returncode == 0:
        return (
            f"'{revision}' goes back past the first commit of {start}'s history (it has no "
            "parent there); pick a base inside the history (git log --oneline)"
        )
    return (
        f"unknown revision '{revision}' in {root}: check the name, or fetch it "
        "(git fetch origin, or a deeper clone)"
    )


def open_workspace(repo: Path, *, revision: str | None, uncommitted: bool = False) -> Workspace:
    """The working tree when `uncommitted`, else the files of `revision` (HEAD by default)."""
    root = repository_root(repo)
    if uncommitted:
        return WorktreeWorkspace(root)
    return RevisionWorkspace(root, resolve_commit(root, revision or "HEAD"))
