"""What a run on a change request shows the model: all of the pull request, or what no
complete run has reviewed yet (the files changed since the last complete review, and those a
failed run left), decided from the bot's memory and the pull request's commits. Fails closed:
a remembered commit that is not in the pull request (a force-push) means a full review.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from reviewer.forge.state import PullState
from reviewer.wording import plural
from reviewer.workspace.gitcmd import run_git


@dataclass(frozen=True)
class ReviewScope:
    """What this run shows the model: None for everything."""

    only: frozenset[str] | None
    since: str | None
    note: str


def review_scope(
    root: Path,
    state: PullState | None,
    paths: set[str],
    merge_base: str,
    head: str,
    *,
    full: bool,
    noun: str = "pull request",
) -> tuple[ReviewScope, PullState | None]:
    """The files this run must show the model, and the state it may build on. `paths` are the
    pull request's changed files, `merge_base..head` its commits."""
    if full:
        return ReviewScope(None, None, "a full review was asked for"), state
    if state is None:
        return ReviewScope(None, None, "no earlier complete review is recorded"), None
    for commit in filter(None, (state.head, state.reviewed_at)):
        if not is_pull_commit(root, commit, merge_base, head):
            note = (
                f"the recorded commit {commit[:12]} is not part of this {noun} any more "
                "(a force-push?): reviewing all of it"
            )
            return ReviewScope(None, None, note), replace(
                state, reviewed_at=None, reviewed_files={}
            )
    blobs = blob_ids(root, head)
    reviewed = {p for p, blob in state.reviewed_files.items() if blobs.get(p, "-") == blob}
    if state.reviewed_at is None:
        only = frozenset(paths - reviewed)
        note = (
            "no complete review is recorded: reviewing the "
            f"{plural(len(only), 'file')} not yet reviewed"
        )
        return ReviewScope(only, None, note), state
    changed = changed_paths(root, state.reviewed_at, head)
    only = frozenset((changed & paths) - reviewed)
    since = state.reviewed_at[:12]
    note = (
        f"reviewing what changed since {since}, the last complete review"
        if only
        else f"nothing changed since {since}, the last complete review: nothing new to review"
    )
    return ReviewScope(only, state.reviewed_at, note), state


def is_pull_commit(root: Path, commit: str, merge_base: str, head: str) -> bool:
    """Whether `commit` is one of the pull request's commits: head, or an ancestor of it that
    the base does not already have."""
    if commit == head:
        return True
    ancestor = run_git(root, ["merge-base", "--is-ancestor", commit, head], check=False)
    if ancestor.returncode != 0:
        return False
    in_base = run_git(root, ["merge-base", "--is-ancestor", commit, merge_base], check=False)
    return in_base.returncode == 1


def changed_paths(root: Path, old: str, new: str) -> set[str]:
    out = run_git(
        root, ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", old, new, "--"]
    ).stdout
    return {name for name in out.decode("utf-8", "surrogateescape").split("\0") if name}


def blob_ids(root: Path, commit: str) -> dict[str, str]:
    """Path -> object id of every file at `commit`."""
    out = run_git(root, ["ls-tree", "-r", "-z", "--full-tree", commit]).stdout
    ids: dict[str, str] = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = record.partition("\t")
        if tab:
            ids[path] = meta.rsplit(" ", 1)[-1]
    return ids
