"""`reviewer eval --from-history REPO --since DATE`: cases from the repository's own bug fixes.

A commit whose message matches the fix pattern is taken as a fix of a bug its parent had.
The case reviews the fix undone: a base commit holding the fixed tree, and a head commit
holding the parent's tree, so the reviewed change puts the bug back. The expected issue is
the fix's message, placed on the lines the fix changed. Both commits are made in a shared
clone in the cache (the user's repository is only read) and have no history: the model's
git log must not show it the fix it is asked to find.

The label is noisy: a message that says "fix" may fix a typo, a test or the build, and
a real bug fix may not say so; see the README.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.eval.cache import key_of
from reviewer.eval.cases import Dataset, EvalCase, ExpectedIssue
from reviewer.eval.local import git_writing
from reviewer.workspace import repository_root, resolve_commit
from reviewer.workspace.gitcmd import run_git

DEFAULT_FIX_PATTERN = r"(?i)\b(fix(e[sd])?|bug(fix)?|regression|hotfix)\b"
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def history_dataset(
    repo: Path, *, since: str, pattern: str, cache_dir: Path, log: object = None
) -> Dataset:
    root = repository_root(repo)
    head = resolve_commit(root, "HEAD")
    try:
        fix_pattern = re.compile(pattern)
    except re.error as exc:
        raise ReviewerError(f"--fix-pattern '{pattern}' is not a valid regex: {exc}") from exc
    out = run_git(
        root,
        ["log", "--no-merges", f"--since={since}", "--format=%H%x00%P%x00%B%x1e", head],
        timeout=120,
    ).stdout.decode("utf-8", "replace")
    fixes = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x00")
        if len(fields) != 3 or not fields[0]:
            continue
        commit, parents, message = fields[0].strip(), fields[1].split(), fields[2].strip()
        if len(parents) == 1 and fix_pattern.search(message):
            fixes.append((commit, parents[0], message))
    if not fixes:
        raise ReviewerError(
            f"no commit since {since} in {root} has a message matching the fix pattern "
            f"'{pattern}'; widen --since or pass --fix-pattern"
        )
    clone = _shared_clone(root, head, cache_dir / "history" / key_of(str(root))[:16])
    cases = []
    for commit, parent, message in reversed(fixes):  # oldest first
        issue = _expected(root, parent, commit, message)
        if issue is None:
            continue
        base = git_writing(clone, ["commit-tree", f"{commit}^{{tree}}", "-m", "base"])
        base_id = base.decode().strip()
        changed = git_writing(
            clone, ["commit-tree", f"{parent}^{{tree}}", "-p", base_id, "-m", "change"]
        )
        head_id = changed.decode().strip()
        git_writing(clone, ["update-ref", f"refs/eval/{commit}", head_id])
        cases.append(
            EvalCase(
                id=f"fix-{commit[:12]}",
                repo=clone,
                base=base_id,
                head=head_id,
                expected=(issue,),
                repository=root.name,
            )
        )
    return Dataset(f"history of {root.name}", f"{head[:12]} since {since}", tuple(cases))


def _expected(root: Path, parent: str, fix: str, message: str) -> ExpectedIssue | None:
    """The fix's message, on the file it changed most: the lines it replaced (in the
    reviewed head, which holds the parent's tree), or, when it only added lines, the place
    where they were (removed lines of the reviewed change)."""
    numstat = run_git(root, ["diff", "--numstat", "-z", "--no-renames", parent, fix]).stdout
    best: tuple[int, str] | None = None
    for entry in numstat.split(b"\x00"):
        parts = entry.split(b"\t", 2)
        if len(parts) != 3 or parts[0] == b"-":  # binary
            continue
        size = int(parts[0]) + int(parts[1])
        path = parts[2].decode("utf-8", "surrogateescape")
        if best is None or size > best[0]:
            best = (size, path)
    if best is None:
        return None
    path = best[1]
    patch = run_git(
        root, ["diff", "-U0", "--no-color", "--no-ext-diff", parent, fix, "--", path]
    ).stdout
    old: list[int] = []
    new: list[int] = []
    for match in _HUNK.finditer(patch):
        start, count = int(match[1]), int(match[2] or 1)
        if count:
            old += [start, start + count - 1]
        start, count = int(match[3]), int(match[4] or 1)
        if count:
            new += [start, start + count - 1]
    if old:
        lines, side = (min(old), max(old)), "RIGHT"
    elif new:
        lines, side = (min(new), max(new)), "LEFT"
    else:
        return None
    return ExpectedIssue(description=message, severity=None, path=path, lines=lines, side=side)


def _shared_clone(root: Path, head: str, target: Path) -> Path:
    """A clone that borrows the repository's objects (git clone --shared): cheap, and the
    commits made for the cases land there, not in the user's repository. A clone made by an
    earlier run already sees every object of the repository, `head` included: a ref to it is
    all it needs (a fetch would run git-upload-pack in the user's repository, and a lazy
    fetch from there under its configuration)."""
    if (target / ".git").is_dir():
        run_git(target, ["update-ref", "refs/eval/source", head])
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        run_git(
            target.parent,
            ["clone", "-q", "--shared", "--no-checkout", str(root), str(building / "r")],
            timeout=300,
            fetch_over=("file",),  # a local clone: objects borrowed, no upload-pack run
        )
        (building / "r").rename(target)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target
