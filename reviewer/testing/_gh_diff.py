"""The fake GitHub's view of a pull request's diff, computed with git and parsed here.

Deliberately independent of `reviewer.change`: the fake is the referee of our own parser, so it
must not share its bugs. It parses only what GitHub needs to decide where a review comment may
go: each file's hunks, which (side, line) pairs lie inside them, and the deprecated
`position` (1-based offset from the first `@@` line, later `@@` lines counted too).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# The user's git configuration must not change what the fake serves. It is overridden setting
# by setting rather than ignored whole: `safe.directory` and the like must still apply.
_GIT_OVERRIDES = (
    *("-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false"),
    *("-c", "diff.relative=false", "-c", "diff.suppressBlankEmpty=false"),
    *("-c", "diff.algorithm=myers", "-c", "diff.indentHeuristic=true"),
    *("-c", "core.quotePath=true"),
)
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# `git diff --raw` status letters, as GitHub names them in `pulls/{n}/files`.
_STATUS = {
    "A": "added",
    "D": "removed",
    "M": "modified",
    "R": "renamed",
    "C": "copied",
    "T": "changed",
}
ZERO_SHA = "0" * 40


class GitError(Exception):
    """A git command the fake needed failed (a bad sha, not a repository)."""


def git(repo: Path, *args: str) -> bytes:
    proc = subprocess.run(
        ["git", "-C", str(repo), *_GIT_OVERRIDES, *args],
        capture_output=True,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)}: {message}")
    return proc.stdout


def resolve_commit(repo: Path, rev: str) -> str | None:
    """The full sha of a commit, or None; `rev` is data from a request, never an option."""
    if not rev or rev.startswith("-"):
        return None
    try:
        out = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except GitError:
        return None
    return out.decode().strip() or None


@dataclass(frozen=True)
class Line:
    """One line of a file's patch, at a `position` (the `@@` line of the first hunk is 0)."""

    position: int
    hunk: int  # index of the hunk in the file
    kind: str  # " ", "+", "-", "@" (a later hunk header) or "\\" (no newline at end of file)
    old: int | None  # line number in the base file (context and deleted lines)
    new: int | None  # line number in the head file (context and added lines)


@dataclass
class FileDiff:
    """One entry of `pulls/{n}/files`, plus the line map used to resolve comments."""

    filename: str
    status: str
    previous_filename: str | None
    old_sha: str
    new_sha: str
    binary: bool = False
    patch_lines: list[bytes] = field(default_factory=list)  # from the first `@@`, no newlines
    lines: list[Line] = field(default_factory=list)
    additions: int = 0
    deletions: int = 0

    @property
    def patch(self) -> str | None:
        """What GitHub sends as `patch`: hunks only; absent for binary or content-less diffs."""
        if self.binary or not self.patch_lines:
            return None
        return b"\n".join(self.patch_lines).decode("utf-8", "replace")

    @property
    def sha(self) -> str:
        # GitHub gives the blob at head, or the removed blob for a deleted file.
        return self.old_sha if self.status == "removed" else self.new_sha

    def locate(self, side: str, number: int) -> Line | None:
        """The diff line carrying `number` on `side` (LEFT: old file, RIGHT: new file)."""
        for line in self.lines:
            on_side = line.kind == " " or line.kind == ("-" if side == "LEFT" else "+")
            if on_side and (line.old if side == "LEFT" else line.new) == number:
                return line
        return None

    def at_position(self, position: int) -> Line | None:
        for line in self.lines:
            if line.position == position:
                return line if line.kind in " +-" else None
        return None

    def hunk_text(self, end: Line) -> str:
        """GitHub's `diff_hunk` of a comment: from its hunk's `@@` line to the anchored line."""
        start = max(
            (line.position for line in self.lines if line.hunk == end.hunk and line.kind == "@"),
            default=0,
        )
        chosen = self.patch_lines[start : end.position + 1]
        return b"\n".join(chosen).decode("utf-8", "replace")


@dataclass
class PullDiff:
    """`git diff --find-renames base...head`: the text GitHub serves and its files."""

    text: bytes
    files: list[FileDiff]

    def file(self, path: str) -> FileDiff | None:
        return next((f for f in self.files if f.filename == path), None)

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)


def compute_diff(repo: Path, base: str, head: str) -> PullDiff:
    span = f"{base}...{head}"
    common = (
        *("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames"),
        f"-O{os.devnull}",  # no diff.orderFile: git's own path order, as GitHub lists files
    )
    raw = git(repo, *common, "--raw", "-z", "--no-abbrev", span)
    text = git(repo, *common, "--unified=3", "--inter-hunk-context=0", span)
    files = _raw_entries(raw)
    sections = _split_sections(text)
    if len(sections) != len(files):
        raise GitError(f"diff of {span}: {len(files)} files but {len(sections)} patch sections")
    for entry, section in zip(files, sections, strict=True):
        _parse_section(entry, section)
    return PullDiff(text, files)


def _raw_entries(raw: bytes) -> list[FileDiff]:
    """`--raw -z`: `:oldmode newmode oldsha newsha STATUS\\0path\\0[newpath\\0]` per file."""
    fields = raw.split(b"\0")
    entries: list[FileDiff] = []
    index = 0
    while index < len(fields) and fields[index].startswith(b":"):
        _, _, old_sha, new_sha, status = fields[index][1:].decode().split(" ")
        letter = status[0]
        paths = [fields[index + 1].decode("utf-8", "surrogateescape")]
        index += 2
        if letter in "RC":
            paths.append(fields[index].decode("utf-8", "surrogateescape"))
            index += 1
        entries.append(
            FileDiff(
                filename=paths[-1],
                status=_STATUS.get(letter, "modified"),
                previous_filename=paths[0] if letter in "RC" else None,
                old_sha=old_sha,
                new_sha=new_sha,
            )
        )
    return entries


def _split_sections(text: bytes) -> list[list[bytes]]:
    # Inside a section every line starts with " ", "+", "-", "\\" or "@@", or is a header
    # line git writes before the first hunk: "diff --git " can only open a new file.
    sections: list[list[bytes]] = []
    for line in text.split(b"\n"):
        if line.startswith(b"diff --git "):
            sections.append([])
        if sections:
            sections[-1].append(line)
    if sections and sections[-1] and sections[-1][-1] == b"":
        sections[-1].pop()  # the newline that ends the whole diff
    return sections


def _parse_section(entry: FileDiff, section: list[bytes]) -> None:
    first = next((i for i, line in enumerate(section) if line.startswith(b"@@")), None)
    if first is None:
        entry.binary = any(line.startswith(b"Binary files ") for line in section)
        return
    entry.patch_lines = section[first:]
    hunk = -1
    old = new = 0
    for position, line in enumerate(entry.patch_lines):
        match = _HUNK.match(line)
        if match:
            hunk += 1
            old, new = int(match[1]), int(match[3])
            if position:
                entry.lines.append(Line(position, hunk, "@", None, None))
            continue
        kind = line[:1].decode("latin-1") or " "
        if kind == "+":
            entry.lines.append(Line(position, hunk, "+", None, new))
            entry.additions += 1
            new += 1
        elif kind == "-":
            entry.lines.append(Line(position, hunk, "-", old, None))
            entry.deletions += 1
            old += 1
        elif kind == "\\":
            entry.lines.append(Line(position, hunk, "\\", None, None))
        else:
            entry.lines.append(Line(position, hunk, " ", old, new))
            old += 1
            new += 1


def commits_between(repo: Path, base: str, head: str) -> list[str]:
    """The pull request's commits, oldest first (what `pulls/{n}/commits` lists)."""
    out = git(repo, "rev-list", "--reverse", f"{base}..{head}")
    return out.decode().split()


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    tree: str
    parents: list[str]
    author: tuple[str, str, int]  # name, email, unix time
    committer: tuple[str, str, int]
    message: str


def commit_info(repo: Path, sha: str) -> CommitInfo:
    fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%B"
    out = git(repo, "show", "-s", f"--format={fmt}", sha).decode("utf-8", "replace")
    sha_, tree, parents, an, ae, at, cn, ce, ct, message = out.split("\0", 9)
    return CommitInfo(
        sha_, tree, parents.split(), (an, ae, int(at)), (cn, ce, int(ct)), message.rstrip("\n")
    )


@functools.lru_cache(maxsize=512)
def _changes(repo: Path, old: str, new: str, path: str) -> tuple[tuple[int, int, int, int], ...]:
    # Commits never change, so the answer for (old, new, path) can be kept forever.
    text = git(
        repo, "diff", "--no-color", "--no-ext-diff", "-U0", old, new, "--", f":(literal){path}"
    )
    hunks = []
    for line in text.split(b"\n"):
        match = _HUNK.match(line)
        if match:
            a, b = int(match[1]), int(match[2] or 1)
            c, d = int(match[3]), int(match[4] or 1)
            hunks.append((a, b, c, d))
    return tuple(hunks)


def moved_line(repo: Path, old: str, new: str, path: str, line: int) -> int | None:
    """Where line `line` of `path` at commit `old` is at commit `new`; None if it changed.

    How GitHub keeps a review comment on its line across pushes: lines that other changes
    merely shifted follow them; a comment whose own line changed becomes outdated.
    """
    offset = 0
    for a, b, _c, d in _changes(repo, old, new, path):
        if b and a <= line < a + b:
            return None
        # A pure insertion (b == 0) goes after old line a; a replacement starts at line a.
        if (b == 0 and a < line) or (b and a + b <= line):
            offset += d - b
    return line + offset
