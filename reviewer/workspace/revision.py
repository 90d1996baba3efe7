"""A workspace that reads one commit straight from git objects, without checking it out.

Nothing on disk is consulted for content, so symlinks are only text to resolve, and FIFOs,
devices or files planted in the working tree cannot be reached.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from reviewer.workspace.base import Kind, Listing, Workspace
from reviewer.workspace.gitcmd import popen_git, run_git

_MODE_KINDS = {"120000": Kind.LINK, "160000": Kind.SUBMODULE}
# A record is `mode type oid TAB path NUL`; the first tab of a record is its separator, so
# the path (which may itself hold tabs) runs from there to the NUL.
_PATHS = re.compile("\t([^\0]*)")
_SPECIAL = re.compile("(?:^|\0)(120000|160000) [^\t]*\t([^\0]*)")


def parse_ls_tree(out: bytes) -> Listing:
    """`git ls-tree -r -z` as a Listing. One regex pass over the whole output: per-record
    Python work is what a 100,000-file tree costs, and listing speed is a stated target."""
    text = out.decode("utf-8", "surrogateescape")
    kinds = dict.fromkeys(_PATHS.findall(text), Kind.FILE)
    if "120000 " in text or "160000 " in text:
        for mode, path in _SPECIAL.findall(text):
            kinds[path] = _MODE_KINDS[mode]
    return Listing(kinds)


class RevisionWorkspace(Workspace):
    def __init__(self, root: Path, commit: str) -> None:
        super().__init__(root)
        self.commit = commit

    @property
    def label(self) -> str:
        return f"commit {self.commit[:12]}"

    @property
    def blame_revision(self) -> str | None:
        return self.commit

    def _load_listing(self) -> Listing:
        out = run_git(self.root, ["ls-tree", "-r", "-z", "--full-tree", self.commit]).stdout
        return parse_ls_tree(out)

    def _kind_on_access(self, rel: str) -> Kind | None:
        kind = self.listing.kinds.get(rel)
        if kind is None and self.listing.is_dir(rel):
            return Kind.DIR
        return kind

    def _link_target(self, rel: str) -> str:
        return self.read_bytes(rel, 4096).decode("utf-8", "surrogateescape")

    def file_size(self, rel: str) -> int:
        out = run_git(self.root, ["cat-file", "-s", self._object(rel)]).stdout
        return int(out.strip() or 0)

    def read_bytes(self, rel: str, limit: int) -> bytes:
        proc = popen_git(self.root, ["cat-file", "blob", self._object(rel)])
        assert proc.stdout is not None
        try:
            data = proc.stdout.read(limit)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            if proc.stderr is not None:
                proc.stderr.close()
        return data

    def _object(self, rel: str) -> str:
        return f"{self.commit}:{rel}"

    @cached_property
    def disk_differences(self) -> frozenset[str] | None:
        """The files whose content on disk is not this commit's; None when git cannot say.

        A search reads the other files from disk (much faster than inflating every object)
        and only these from git objects; every hit is filtered through this commit's
        listing. With a clean working tree (what is on disk is HEAD) they are the files that
        differ between this commit and HEAD, from the two trees alone. With local changes,
        git compares this commit with the files on disk (a path missing from the index,
        untracked on disk, counts as differing), hashing only what its stat data cannot vouch
        for.
        """
        # Without a refreshed index a stat-dirty file counts as changed: that only costs
        # speed (the object path is used), never correctness.
        # Submodules: only their commits count (a dirty one's status would run git in it).
        clean = run_git(
            self.root,
            ["diff-index", "--quiet", "--ignore-submodules=dirty", "HEAD", "--"],
            check=False,
        )
        against = ["HEAD"] if clean.returncode == 0 else []
        changed = run_git(
            self.root,
            [
                "diff",
                "--name-only",
                "-z",
                "--no-renames",
                "--no-ext-diff",
                "--ignore-submodules=dirty",
                self.commit,
                *against,
                "--",
            ],
            check=False,
        )
        if changed.returncode != 0:
            return None
        names = changed.stdout.decode("utf-8", "surrogateescape").split("\0")
        return frozenset(name for name in names if name)

    @property
    def matches_checkout(self) -> bool:
        """True when the files on disk are exactly this commit's tracked files."""
        return self.disk_differences == frozenset()
