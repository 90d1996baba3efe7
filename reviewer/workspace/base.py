"""What the tools may see: the files of one revision (or of the working tree), and nothing else.

A workspace lists its files once (from git, so `.git`, ignored files and paths outside the
repository never appear), resolves a path the model wrote into one of those files, following
symlinks only while they stay inside, and reads bytes with a cap. Subclasses say where the
bytes come from: git objects at a commit, or the files on disk.
"""

from __future__ import annotations

import bisect
import posixpath
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from pathlib import Path

from reviewer.errors import ToolError
from reviewer.workspace.paths import (
    echo_path,
    normalize_name,
    normalize_path,
    outside,
    quote_path,
)

MAX_SYMLINK_HOPS = 40


class Kind(Enum):
    FILE = "file"
    LINK = "symlink"
    SUBMODULE = "submodule"
    DIR = "directory"
    OTHER = "special file"


@dataclass(frozen=True)
class Listing:
    """Every visible path at the revision, sorted, with its kind."""

    kinds: dict[str, Kind]

    @cached_property
    def paths(self) -> list[str]:
        return sorted(self.kinds)

    def is_dir(self, rel: str) -> bool:
        if rel == "":
            return True
        prefix = rel + "/"
        index = bisect.bisect_left(self.paths, prefix)
        return index < len(self.paths) and self.paths[index].startswith(prefix)

    def entries(self, rel: str) -> tuple[list[tuple[str, int]], list[str]]:
        """What directory `rel` holds: its subdirectories, each with how many files lie
        below it, and its files. Found by bisecting the sorted paths, so a directory's
        contents are skipped over, never walked."""
        paths = self.paths
        prefix = rel + "/" if rel else ""
        index = bisect.bisect_left(paths, prefix) if prefix else 0
        end = bisect.bisect_left(paths, rel + "0") if prefix else len(paths)
        offset = len(prefix)
        dirs: list[tuple[str, int]] = []
        files: list[str] = []
        while index < end:
            path = paths[index]
            slash = path.find("/", offset)
            if slash < 0:
                files.append(path[offset:])
                index += 1
                continue
            after = bisect.bisect_left(paths, path[:slash] + "0", index, end)
            dirs.append((path[offset:slash], after - index))
            index = after
        return dirs, files

    def under(self, rel: str) -> list[str]:
        """All paths below directory `rel` ('' for everything), sorted."""
        if rel == "":
            return self.paths
        prefix = rel + "/"
        start = bisect.bisect_left(self.paths, prefix)
        end = bisect.bisect_left(self.paths, rel + "0")  # '0' sorts right after '/'
        return self.paths[start:end]


class Workspace(ABC):
    """The sandbox the tools run in. `root` is the resolved top level of the repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # The files at the base of the change under review, when there is one: removed
        # lines are read there (read_file_lines with side LEFT).
        self.base: Workspace | None = None
        # Answers of history walks (get_git_log), shared by every loop of a review: a
        # revision's history does not change while it is reviewed, and a walk can cost
        # seconds. Keyed by the git arguments.
        self.history: dict[tuple[str, ...], tuple[bytes, bool]] = {}

    # --- what subclasses provide -------------------------------------------------------

    @property
    @abstractmethod
    def label(self) -> str:
        """Where the files come from, for messages: a short commit id or 'working tree'."""

    @property
    @abstractmethod
    def blame_revision(self) -> str | None:
        """The commit blame and log start from; None means the working tree (and HEAD)."""

    @abstractmethod
    def _load_listing(self) -> Listing: ...

    @abstractmethod
    def _link_target(self, rel: str) -> str:
        """The text of symlink `rel` (its target as written)."""

    @abstractmethod
    def _kind_on_access(self, rel: str) -> Kind | None:
        """The kind of `rel` as it really is at the revision; None when it does not exist."""

    @abstractmethod
    def file_size(self, rel: str) -> int: ...

    @abstractmethod
    def read_bytes(self, rel: str, limit: int) -> bytes:
        """At most `limit` bytes from the start of regular file `rel` (already resolved)."""

    # --- shared behaviour ----------------------------------------------------------------

    @cached_property
    def listing(self) -> Listing:
        return self._load_listing()

    def normalize(self, raw: object, *, allow_root: bool = True) -> str:
        """`raw` as a repository path, without changing which file is meant.

        The usual reading forgives a model's slips: a quoted name is unquoted, white space
        around a bare path is dropped, `\\` becomes `/`. When that names nothing, the
        argument is tried exactly as written, for a file whose name really starts or ends
        with a space, holds a backslash, or starts and ends with `"`. Both readings face
        every containment check.
        """
        rel = normalize_path(raw, root=str(self.root), allow_root=allow_root)
        if not isinstance(raw, str) or not rel or self._listed(rel):
            return rel
        try:
            exact = normalize_path(
                raw, root=str(self.root), allow_root=allow_root, unquote=False, tidy=False
            )
        except ToolError:  # refused as written: the usual reading stands
            return rel
        return exact if exact != rel and self._listed(exact) else rel

    def _listed(self, rel: str) -> bool:
        return rel in self.listing.kinds or self.listing.is_dir(rel)

    def resolve_file(self, raw: object) -> str:
        """The in-repository path of the regular file `raw` names, following safe symlinks."""
        rel = self.normalize(raw, allow_root=False)
        resolved = self._follow_links(rel, str(raw))
        kind = self.listing.kinds.get(resolved)
        if kind is None:
            if self.listing.is_dir(resolved):
                raise ToolError(
                    f"'{echo_path(raw)}' is a directory, not a file. Use list_files to see "
                    "what it holds."
                )
            if resolved != rel:
                raise ToolError(
                    f"Access denied: '{echo_path(raw)}' is a symlink to "
                    f"'{quote_path(resolved)}', which is not a file of this repository at "
                    f"{self.label}."
                )
            raise ToolError(self._not_found(rel, raw))
        if kind is Kind.SUBMODULE:
            raise ToolError(
                f"'{echo_path(raw)}' is a submodule or nested repository; its files are not "
                "part of this repository."
            )
        actual = self._kind_on_access(resolved)
        if actual is None:
            raise ToolError(self._not_found(rel, raw))
        if actual is not Kind.FILE:
            raise ToolError(f"'{echo_path(raw)}' is not a regular file.")
        self._check_file(resolved, raw)
        return resolved

    def _check_file(self, rel: str, raw: object) -> None:
        """A last check of a resolved regular file; raise ToolError to refuse it."""
        return None  # git objects need none; the working tree checks hard links

    def resolve_dir(self, raw: object) -> str:
        """The in-repository directory `raw` names ('' for the root), following safe symlinks."""
        rel = self.normalize(raw)
        resolved = self._follow_links(rel, str(raw)) if rel else rel
        if self.listing.is_dir(resolved):
            return resolved
        if resolved in self.listing.kinds:
            raise ToolError(
                f"'{echo_path(raw)}' is a file, not a directory. Use read_file to read it."
            )
        raise ToolError(self._not_found(rel, raw, directory=True))

    def resolve_any(self, raw: object) -> tuple[str, bool]:
        """A file or a directory: its resolved path, and whether it is a file."""
        rel = self.normalize(raw)
        if not rel:
            # The root: no need to list the files yet (a search can start without them).
            return "", False
        resolved = self._follow_links(rel, str(raw))
        if resolved in self.listing.kinds:
            return self.resolve_file(raw), True
        return self.resolve_dir(raw), False

    def _not_found(self, rel: str, raw: object, *, directory: bool = False) -> str:
        what = "Directory" if directory else "File"
        message = f"{what} not found: '{echo_path(raw)}' does not exist at {self.label}."
        parent = posixpath.dirname(rel)
        while parent and not self.listing.is_dir(parent):
            parent = posixpath.dirname(parent)
        name = posixpath.basename(rel).casefold()
        candidates = self.listing.under(parent)[:5000]
        near = [p for p in candidates if posixpath.basename(p).casefold() == name]
        if near:
            shown = ", ".join(quote_path(path) for path in near[:5])
            return message + " Files with that name: " + shown + "."
        where = f"'{quote_path(parent)}'" if parent else "the repository root"
        return message + f" Use list_files on {where} to see what is there."

    def _follow_links(self, rel: str, raw: str) -> str:
        """Resolve symlinks component by component, refusing any that leave the root."""
        parts = rel.split("/")
        hops = 0
        index = 0
        while index < len(parts):
            prefix = "/".join(parts[: index + 1])
            if self._is_link(prefix):
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise ToolError(
                        f"'{echo_path(raw)}': too many levels of symbolic links (a loop?)."
                    )
                target = self._link_target(prefix)
                if target.startswith("/") or "\x00" in target:
                    raise outside(raw)
                joined = posixpath.join(posixpath.dirname(prefix), target, *parts[index + 1 :])
                try:
                    # Repository text, taken as written: a target may name a file whose name
                    # holds a line break (the rest of `rel` may too, from a quoted argument).
                    rel = normalize_name(joined, root=str(self.root))
                except ToolError as exc:
                    if "outside" in str(exc):
                        raise outside(raw) from exc
                    raise ToolError(
                        f"Access denied: '{echo_path(raw)}' is a symlink to "
                        f"'{quote_path(target)}', which is not readable."
                    ) from exc
                parts = rel.split("/") if rel else []
                index = 0
                continue
            index += 1
        return "/".join(parts)

    def _is_link(self, rel: str) -> bool:
        return self._kind_on_access(rel) is Kind.LINK
