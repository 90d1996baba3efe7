"""The sandbox the tools run in: one revision of one repository, read-only."""

from __future__ import annotations

from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.gitcmd import GitFailed, run_git
from reviewer.workspace.base import Kind, Listing, Workspace
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


def resolve_commit(root: Path, revision: str) -> str:
    """The full commit id `revision` names, or a one-line error that says what to check."""
    if not revision or revision.startswith("-") or "\x00" in revision:
        raise ReviewerError(f"invalid revision '{revision}': give a branch, tag or commit id")
    proc = run_git(
        root,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
        check=False,
    )
    if proc.returncode != 0:
        if revision == "HEAD" and run_git(root, ["rev-list", "-n1", "--all"]).stdout == b"":
            raise ReviewerError(
                f"the repository {root} has no commits yet; commit first, or read the "
                "working tree with --uncommitted"
            )
        raise ReviewerError(
            f"unknown revision '{revision}' in {root}: check the name, or fetch it "
            "(git fetch origin, or a deeper clone)"
        )
    return proc.stdout.decode().strip()


def open_workspace(repo: Path, *, revision: str | None, uncommitted: bool = False) -> Workspace:
    """The working tree when `uncommitted`, else the files of `revision` (HEAD by default)."""
    root = repository_root(repo)
    if uncommitted:
        return WorktreeWorkspace(root)
    return RevisionWorkspace(root, resolve_commit(root, revision or "HEAD"))
