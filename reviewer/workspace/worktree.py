"""A workspace over the files on disk, for reviewing uncommitted changes.

The disk is the truth here, and the disk can hold anything: every component of a path is
checked with lstat, symlinks are followed only inside the root, and the final open refuses
links, FIFOs, devices and hard-linked files (which can alias a file outside the repository).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from reviewer.errors import ToolError
from reviewer.workspace.base import Kind, Listing, Workspace
from reviewer.workspace.gitcmd import run_git_parallel
from reviewer.workspace.paths import echo_path, quote_path

_TRACKED_MODE_KINDS = {b"120000": Kind.LINK, b"160000": Kind.SUBMODULE}


def plain_file_on_disk(root: Path, rel: str) -> bool:
    """True when `rel` is, on disk, a regular file with one link and no symlink on its way.

    What a search engine read from disk is only shown when this holds, whatever the
    workspace's listing says: the disk may have changed under a checked-out commit.
    """
    current = str(root)
    parts = rel.split("/")
    try:
        for part in parts[:-1]:
            current = os.path.join(current, part)
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        info = os.lstat(os.path.join(current, parts[-1]))
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


class WorktreeWorkspace(Workspace):
    @property
    def label(self) -> str:
        return "the working tree"

    @property
    def blame_revision(self) -> str | None:
        return None

    def _load_listing(self) -> Listing:
        # Three git commands at once: each walks or stats the tree, and on a large one they
        # take a few hundred milliseconds back to back.
        staged, deleted, untracked = run_git_parallel(
            self.root,
            [
                ["ls-files", "-z", "-s"],
                ["diff-files", "--name-only", "-z", "--diff-filter=D"],
                ["ls-files", "-z", "-o", "--exclude-standard"],
            ],
        )
        kinds: dict[str, Kind] = {}
        for record in staged.split(b"\0"):
            if record:
                meta, _, path = record.partition(b"\t")
                kind = _TRACKED_MODE_KINDS.get(meta[:6], Kind.FILE)
                kinds[path.decode("utf-8", "surrogateescape")] = kind
        for path in deleted.split(b"\0"):
            kinds.pop(path.decode("utf-8", "surrogateescape"), None)
        for raw in untracked.split(b"\0"):
            if raw:
                path = raw.decode("utf-8", "surrogateescape")
                # git lists a nested repository as its directory, with a trailing slash.
                if path.endswith("/"):
                    kinds[path.rstrip("/")] = Kind.SUBMODULE
                else:
                    kinds[path] = Kind.FILE
        return Listing(kinds)

    def _kind_on_access(self, rel: str) -> Kind | None:
        try:
            mode = os.lstat(self._abs(rel)).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise ToolError(f"'{quote_path(rel)}' cannot be read: {exc.strerror}.") from exc
        if stat.S_ISLNK(mode):
            return Kind.LINK
        if stat.S_ISREG(mode):
            return Kind.FILE
        if stat.S_ISDIR(mode):
            return Kind.DIR
        return Kind.OTHER

    def _check_file(self, rel: str, raw: object) -> None:
        links = os.lstat(self._abs(rel)).st_nlink
        if links > 1:
            raise ToolError(_hard_link_message(echo_path(raw), links))

    def _link_target(self, rel: str) -> str:
        return os.readlink(self._abs(rel))

    def file_size(self, rel: str) -> int:
        return os.lstat(self._abs(rel)).st_size

    def read_bytes(self, rel: str, limit: int) -> bytes:
        path = self._abs(rel)
        if os.path.realpath(path) != path:
            raise ToolError(
                f"Access denied: path '{quote_path(rel)}' resolves outside the working directory."
            )
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ToolError(
                    f"'{quote_path(rel)}' is a symlink and cannot be opened directly."
                ) from exc
            raise ToolError(f"'{quote_path(rel)}' cannot be read: {exc.strerror}.") from exc
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"'{quote_path(rel)}' is not a regular file.")
            if info.st_nlink > 1:
                raise ToolError(_hard_link_message(quote_path(rel), info.st_nlink))
            chunks, remaining = [], limit
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _abs(self, rel: str) -> str:
        return os.path.join(str(self.root), rel) if rel else str(self.root)


def _hard_link_message(shown: str, links: int) -> str:
    return (
        f"'{shown}' has {links} hard links; it is not read because a hard link can alias a "
        "file outside the repository."
    )
