"""A workspace that reads one commit straight from git objects, without checking it out.

Nothing on disk is consulted for content, so symlinks are only text to resolve, and FIFOs,
devices or files planted in the working tree cannot be reached.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from reviewer.gitcmd import popen_git, run_git
from reviewer.workspace.base import Kind, Listing, Workspace

_MODE_KINDS = {b"120000": Kind.LINK, b"160000": Kind.SUBMODULE}


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
        kinds: dict[str, Kind] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            kinds[path.decode("utf-8", "surrogateescape")] = _MODE_KINDS.get(meta[:6], Kind.FILE)
        return Listing(kinds)

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
    def matches_checkout(self) -> bool:
        """True when the files on disk are exactly this commit's tracked files.

        Then a search may read the disk (much faster than inflating every object) and still
        answer for this commit; results are filtered through this commit's listing.
        """
        trees = run_git(
            self.root, ["rev-parse", f"{self.commit}^{{tree}}", "HEAD^{tree}"], check=False
        ).stdout.split()
        if len(trees) != 2 or trees[0] != trees[1]:
            return False
        # Without a refreshed index a stat-dirty file counts as changed: that only costs
        # speed (the object path is used), never correctness.
        proc = run_git(self.root, ["diff-index", "--quiet", "HEAD", "--"], check=False)
        return proc.returncode == 0
