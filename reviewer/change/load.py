"""Reading the change under review from git: the merge base, one `git diff`, untracked files.

The committed case costs three short git calls (two rev-parse, one merge-base) and one
`git diff`, whatever the number of files. Everything that could change the format or the
hunks git prints is pinned on the command line, so a user's config cannot move an anchor.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from reviewer.change.model import Change, FileChange
from reviewer.change.parse import (
    BINARY_SNIFF_BYTES,
    MAX_FILE_PATCH_BYTES,
    MAX_FILE_PATCH_LINES,
    PatchError,
    parse_hunks,
    parse_patch,
)
from reviewer.errors import ReviewerError
from reviewer.workspace import repository_root, resolve_commit
from reviewer.workspace.gitcmd import GitFailed, run_git, stream_git

# Config with no command-line flag that would change what we parse. Flags below pin the rest
# (flags win over config): prefixes, context, inter-hunk context, algorithm, renames...
_DIFF_CONFIG = (
    "core.quotePath=false",  # non-ASCII names verbatim; the parser unquotes the rest anyway
    "diff.suppressBlankEmpty=false",  # keep the space that marks an empty context line
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
)

# How GitHub computes a pull request's diff, as near as git's flags can say it: Myers with
# the indent heuristic (git's defaults), 3 lines of context, hunks merged only when they
# touch, renames found at 50% similarity, copies not looked for (see `load_change`).
_DIFF_FLAGS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--raw",
    "-z",
    "--patch",
    "--no-abbrev",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--find-renames",
    "-l1000",  # git's default rename limit, pinned against diff.renameLimit
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--no-relative",
    "--submodule=short",  # "Subproject commit <id>" lines, not a log of the submodule
    "--ignore-submodules=dirty",  # a submodule's own edits are not this change's
)

DIFF_TIMEOUT = 300.0


def merge_base(root: Path, base: str, head: str) -> str:
    """The full id of the best common ancestor of `base` and `head`."""
    return _merge_base(root, base, head)[0]


def _merge_base(root: Path, base: str, head: str) -> tuple[str, str]:
    """The merge base and the full id of `head`, or a one-line error that says what to do."""
    base_id = resolve_commit(root, base)
    head_id = resolve_commit(root, head)
    proc = run_git(root, ["merge-base", base_id, head_id], check=False)
    if proc.returncode == 0:
        return proc.stdout.decode("ascii").split()[0], head_id
    if proc.returncode != 1 or proc.stderr.strip():
        raise GitFailed(["merge-base"], proc.returncode, proc.stderr)
    # Exit 1 and silence: no common ancestor. A shallow clone often just lacks it.
    shallow = run_git(root, ["rev-parse", "--is-shallow-repository"]).stdout.strip() == b"true"
    if shallow:
        raise ReviewerError(
            f"'{base}' and '{head}' have no common ancestor in this shallow clone; fetch more "
            "history (git fetch --unshallow, or fetch-depth: 0 in actions/checkout)"
        )
    raise ReviewerError(
        f"'{base}' and '{head}' have no common ancestor (unrelated histories); pass as base "
        f"the branch that '{head}' was started from"
    )


def load_change(
    root: Path,
    base: str,
    head: str | None,
    *,
    context_lines: int = 3,
    max_file_patch_bytes: int = MAX_FILE_PATCH_BYTES,
    max_file_patch_lines: int = MAX_FILE_PATCH_LINES,
) -> Change:
    """The diff of merge-base(base, head)..head; with `head` None, of the merge base of base
    and HEAD against the working tree, untracked (not ignored) files included as added.

    Copies are not detected: GitHub shows a copied file as added, every line commentable,
    and a reviewer should read a copy in full anyway. `context_lines` other than 3 gives
    hunks GitHub does not have, so `locate` answers only hold for the default.
    """
    if context_lines < 0:
        raise ValueError("context_lines must be 0 or more")
    base_id, head_commit = _merge_base(root, base, head or "HEAD")
    # In the working tree, HEAD only chose the merge base; the files come from the disk.
    head_id = head_commit if head is not None else None
    args = [item for pair in _DIFF_CONFIG for item in ("-c", pair)]
    args += ["diff", *_DIFF_FLAGS, f"--unified={context_lines}", base_id]
    if head_id is not None:
        args.append(head_id)
    with stream_git(root, [*args, "--"], timeout=DIFF_TIMEOUT) as chunks:
        files = read_patch(
            chunks,
            max_file_patch_bytes=max_file_patch_bytes,
            max_file_patch_lines=max_file_patch_lines,
        )
    if head_id is None:
        top = repository_root(root)
        listed = run_git(top, ["ls-files", "-z", "--others", "--exclude-standard"]).stdout
        for raw_name in listed.split(b"\0"):
            # A nested repository is listed as its folder, with a slash: not a file of ours.
            if raw_name and not raw_name.endswith(b"/"):
                added = untracked_file(
                    top,
                    raw_name.decode("utf-8", "surrogateescape"),
                    max_file_patch_bytes=max_file_patch_bytes,
                    max_file_patch_lines=max_file_patch_lines,
                )
                if added is not None:
                    files.append(added)
    return Change(base=base_id, head=head_id, files=tuple(files))


_FILE_START = b"diff --git "
_NEXT_FILE = b"\n" + _FILE_START


def read_patch(
    chunks: Iterable[bytes], *, max_file_patch_bytes: int, max_file_patch_lines: int
) -> list[FileChange]:
    """Parse `git diff --raw -z --patch` output as it arrives: the raw records first (the
    modes), then each file's patch as soon as the next file's header shows it is complete.
    Only the file being read is held, never the whole output (a large change's diff is tens
    of megabytes)."""
    files: list[FileChange] = []
    modes: dict[str, tuple[str | None, str | None]] | None = None
    buffer = bytearray()
    searched = 0  # where to look for the next file header from

    def take(end: int) -> None:
        nonlocal searched
        section = bytes(buffer[:end])
        del buffer[:end]
        searched = 0
        files.extend(
            parse_patch(
                section,
                max_file_patch_bytes=max_file_patch_bytes,
                max_file_patch_lines=max_file_patch_lines,
                modes=modes,
            )
        )

    for chunk in _then_end(chunks):
        end = chunk is None
        if chunk:
            buffer += chunk
        if modes is None:
            try:
                found, at = split_raw(bytes(buffer))
            except ValueError:  # a record cut at the end of what has arrived
                if end:
                    raise PatchError("git diff --raw output ended inside a record") from None
                continue
            if at >= len(buffer) and not end:
                continue  # more records may follow
            modes = found
            del buffer[:at]
        if not buffer.startswith(_FILE_START):
            first = buffer.find(_NEXT_FILE)
            if first < 0:
                continue
            del buffer[: first + 1]
            searched = 0
        while True:
            following = buffer.find(_NEXT_FILE, max(searched, 1))
            if following < 0:
                searched = max(0, len(buffer) - len(_NEXT_FILE))
                break
            take(following + 1)
        if end and buffer:
            take(len(buffer))
    return files


def _then_end(chunks: Iterable[bytes]) -> Iterator[bytes | None]:
    yield from chunks
    yield None


def split_raw(out: bytes) -> tuple[dict[str, tuple[str | None, str | None]], int]:
    """Split `git diff --raw -z --patch` output into {new path: (old mode, new mode)} and
    where the patch starts (an offset: the patch is not copied out of a large output). Raw
    records are `:mode mode id id STATUS\\0path\\0[path\\0]`; a NUL ends them."""
    modes: dict[str, tuple[str | None, str | None]] = {}
    pos, size = 0, len(out)
    while pos < size and out[pos] == 0x3A:  # ":"
        meta_end = out.index(b"\0", pos)
        old_mode, new_mode, _old_id, _new_id, status = out[pos + 1 : meta_end].split(b" ")
        pos = meta_end + 1
        names = 2 if status[:1] in (b"R", b"C") else 1
        for _ in range(names):
            end = out.index(b"\0", pos)
            name, pos = out[pos:end], end + 1
        modes[name.decode("utf-8", "surrogateescape")] = (_mode(old_mode), _mode(new_mode))
    if pos < size and out[pos] == 0:
        pos += 1
    return modes, pos


def _mode(value: bytes) -> str | None:
    return None if value == b"000000" else value.decode("ascii")


def untracked_file(
    top: Path,
    rel: str,
    *,
    max_file_patch_bytes: int = MAX_FILE_PATCH_BYTES,
    max_file_patch_lines: int = MAX_FILE_PATCH_LINES,
) -> FileChange | None:
    """The untracked file `rel` as git would show it once added, read without `git add`.

    None for what git would not add or what we should not read: FIFOs, sockets, devices,
    hard-linked files (a hard link can alias a file outside the repository, as in the
    workspace), and files whose folder changed under us. Symlinks are never followed: like
    git, we show the link's target text, mode 120000.
    """
    full = os.path.join(top, rel)
    try:
        # A folder swapped for a symlink after git listed the file must not lead us out.
        if os.path.realpath(os.path.dirname(full)) != os.path.dirname(full):
            return None
        info = os.lstat(full)
        if stat.S_ISLNK(info.st_mode):
            return added_file(rel, os.readlink(os.fsencode(full)), "120000")
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return None
        mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(full, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            opened = os.fstat(handle.fileno())
            if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                return None
            content = handle.read(max_file_patch_bytes + 1)
            if len(content) <= max_file_patch_bytes or b"\0" in content[:BINARY_SNIFF_BYTES]:
                return added_file(
                    rel,
                    content,
                    mode,
                    max_file_patch_bytes=max_file_patch_bytes,
                    max_file_patch_lines=max_file_patch_lines,
                )
            # Too big to show: count its lines for the totals without holding it all.
            lines = content.count(b"\n")
            last = content[-1:]
            while chunk := handle.read(1 << 20):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
            lines += last != b"\n"
            return FileChange(
                path=rel,
                old_path=None,
                status="added",
                new_mode=mode,
                additions=lines,
                oversized=True,
            )
    except OSError:
        return None  # vanished or unreadable since git listed it: not part of the change


def added_file(
    path: str,
    content: bytes,
    mode: str = "100644",
    *,
    max_file_patch_bytes: int = MAX_FILE_PATCH_BYTES,
    max_file_patch_lines: int = MAX_FILE_PATCH_LINES,
) -> FileChange:
    """An added file with this content, parsed from the patch git would print for it."""
    new = {"path": path, "old_path": None, "status": "added", "new_mode": mode}
    if not content:
        return FileChange(**new)
    if b"\0" in content[:BINARY_SNIFF_BYTES]:
        return FileChange(**new, binary=True)
    lines = content.split(b"\n")
    complete = lines[-1] == b""
    if complete:
        lines.pop()
    count = len(lines)
    # Roughly the size of git's patch: a "+" and the text for each line.
    if len(content) + count > max_file_patch_bytes or count > max_file_patch_lines:
        return FileChange(**new, additions=count, oversized=True)
    body = b"@@ -0,0 +1,%d @@\n+%s\n" % (count, b"\n+".join(lines))
    if not complete:
        body += b"\\ No newline at end of file\n"
    hunks, additions, _ = parse_hunks(body, path)
    return FileChange(**new, hunks=hunks, additions=additions)
