"""Making sure a checkout holds what a change request's review needs: both commits, and history
down to their merge base. Fetching adds objects only; no code of the change request is run.
The adapter names its forge's ref of the change (GitHub: `refs/pull/N/head`) and the setting
that gives a deep checkout (GitHub: `fetch-depth: 0` on actions/checkout).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.wording import plural
from reviewer.workspace.gitcmd import run_git

_DEEPEN_STEPS = (50, 500)


def ensure_commits(
    root: Path,
    base_sha: str,
    head_sha: str,
    log: Callable[[str], None],
    *,
    change_ref: str,
    noun: str,
    deep_checkout: str,
) -> None:
    """Fetch what a shallow checkout lacks: both commits, and history down to their merge
    base. Fetching adds objects only; no code of the pull request is run."""
    missing = [sha for sha in (base_sha, head_sha) if not _has_commit(root, sha)]
    if missing:
        log(f"fetching the {noun}'s commits (the checkout lacks them)")
        if not _fetch(root, log, missing):
            _fetch(root, log, [change_ref, *missing])
    for depth in _DEEPEN_STEPS:
        if _merge_base_found(root, base_sha, head_sha):
            return
        log(f"fetching {plural(depth, 'more commit')} of history (the checkout is shallow)")
        _fetch(root, log, [f"--deepen={depth}", base_sha, head_sha])
    if not _merge_base_found(root, base_sha, head_sha) and _is_shallow(root):
        _fetch(root, log, ["--unshallow"])
    if not _merge_base_found(root, base_sha, head_sha):
        lacking = [sha[:12] for sha in (base_sha, head_sha) if not _has_commit(root, sha)]
        problem = (
            f"the checkout lacks commit {', '.join(lacking)}"
            if lacking
            else f"no merge base between {base_sha[:12]} and {head_sha[:12]}"
        )
        raise ReviewerError(
            f"{problem} and fetching did not help; {deep_checkout}"
        )


def _has_commit(root: Path, sha: str) -> bool:
    proc = run_git(root, ["cat-file", "-e", f"{sha}^{{commit}}"], check=False)
    return proc.returncode == 0


def _merge_base_found(root: Path, base: str, head: str) -> bool:
    if not (_has_commit(root, base) and _has_commit(root, head)):
        return False
    return run_git(root, ["merge-base", base, head], check=False).returncode == 0


def _is_shallow(root: Path) -> bool:
    proc = run_git(root, ["rev-parse", "--is-shallow-repository"], check=False)
    return proc.stdout.strip() == b"true"


def _fetch(root: Path, log: Callable[[str], None], args: list[str]) -> bool:
    # The one fetch the run asks for: from the checkout's origin, which is the forge over https,
    # or a local repository (`reviewer github` tried locally). Its uploadpack is pinned.
    proc = run_git(
        root,
        ["fetch", "--no-tags", "--quiet", "origin", *args],
        timeout=300,
        check=False,
        fetch_over=("file",),
    )
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        log(f"git fetch {' '.join(args)} failed: {lines[-1] if lines else proc.returncode}")
    return proc.returncode == 0
