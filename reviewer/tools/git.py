"""The history tools: get_git_blame and get_git_log, at the reviewed revision."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

from reviewer.errors import ToolError
from reviewer.tools.base import END_ALIASES, PATH_ALIASES, START_ALIASES, Tool, param
from reviewer.tools.files import MAX_SCAN_BYTES, read_text
from reviewer.tools.text import cut_line, echo_path, split_lines, visible
from reviewer.wording import plural
from reviewer.workspace import Kind, Workspace, WorktreeWorkspace
from reviewer.workspace.gitcmd import GitFailed, run_git, run_git_for

MAX_BLAME_LINES = 300
DEFAULT_LOG_COUNT = 10
MAX_LOG_COUNT = 100
# History walks are bounded in time: a log of a rarely changed file, or blame of an old
# one, walks the whole history (60,000 commits of sympy: 5-12 s, more with four loops at
# once). What was found by then is shown, and the cut is said.
LOG_SECONDS = 5.0
BLAME_SECONDS = 10.0
_UNCOMMITTED = "0" * 40


class GetGitBlame(Tool):
    """Show who last changed each line of a file and in which commit, at the reviewed
    revision: `commit date author  42: text`, then the commits' subjects. At most 300 lines
    per call; give startLine and endLine for a range."""

    name: ClassVar[str] = "get_git_blame"
    path: str = param("File path relative to the repository root.", *PATH_ALIASES)
    startLine: int | None = param("First line (1-indexed).", *START_ALIASES, default=None, ge=1)
    endLine: int | None = param("Last line (inclusive).", *END_ALIASES, default=None, ge=1)

    def run(self, workspace: Workspace) -> str:
        rel = workspace.resolve_file(self.path)
        shown = echo_path(self.path)
        if workspace.listing.kinds.get(rel) is Kind.FILE and isinstance(
            workspace, WorktreeWorkspace
        ):
            _require_tracked(workspace, rel, shown)
        text, _size = read_text(workspace, rel, shown, MAX_SCAN_BYTES)
        file_lines = split_lines(text)
        total = len(file_lines)
        if total == 0:
            return f"(empty file: {shown})"
        start = self.startLine or 1
        if start > total:
            raise ToolError(
                f"startLine {start} is past the end of '{shown}', which has "
                f"{plural(total, 'line')}."
            )
        end = min(self.endLine or total, total)
        if end < start:
            raise ToolError(f"endLine ({end}) is before startLine ({start}).")
        cut = end - start + 1 > MAX_BLAME_LINES
        if cut:
            end = start + MAX_BLAME_LINES - 1
        args = ["blame", "--porcelain", "-L", f"{start},{end}"]
        if workspace.blame_revision:
            args.append(workspace.blame_revision)
        try:
            out, stopped = run_git_for(workspace.root, [*args, "--", rel], BLAME_SECONDS)
        except GitFailed as exc:
            raise ToolError(f"git blame failed for '{shown}': {_one_line(exc.stderr)}") from exc
        if stopped:
            raise ToolError(
                f"git blame of lines {start}-{end} of '{shown}' did not finish in "
                f"{BLAME_SECONDS:.0f} s (a long history): ask for fewer lines, or see "
                "get_git_log for the file's recent commits."
            )
        lines, commits = _parse_porcelain(out)
        # The text comes from our own read of the file (secrets masked), not from git's output.
        result = [
            f"{_who(c, commits)}  {n}: {cut_line(file_lines[n - 1] if n <= total else t)}"
            for c, n, t in lines
        ]
        history = [
            f"{commit[:8]} {date} {visible(author)}: {cut_line(summary)}"
            for commit, (author, date, summary) in commits.items()
            if commit != _UNCOMMITTED
        ]
        if history:
            result += ["", "Commits:", *history]
        if cut:
            result.append(
                f"\n[Showing lines {start}-{end} of {total:,}. Continue with startLine={end + 1}.]"
            )
        return "\n".join(result)


def _who(commit: str, commits: dict[str, tuple[str, str, str]]) -> str:
    if commit == _UNCOMMITTED:
        return "uncommitted (working tree)"
    author, date, _summary = commits[commit]
    return f"{commit[:8]} {date} {visible(author)}"


def _one_line(stderr: str) -> str:
    """git's error text in a one-line message: its line breaks folded, the rest made visible."""
    return visible(" ".join(stderr[:300].split()))


def _require_tracked(workspace: Workspace, rel: str, shown: str) -> None:
    proc = run_git(workspace.root, ["ls-files", "--error-unmatch", "--", rel], check=False)
    if proc.returncode != 0:
        raise ToolError(f"'{shown}' is not committed yet, so it has no history to blame.")


def _parse_porcelain(
    out: bytes,
) -> tuple[list[tuple[str, int, str]], dict[str, tuple[str, str, str]]]:
    """Lines as (commit, final line number, text) and commits as (author, date, summary)."""
    lines: list[tuple[str, int, str]] = []
    commits: dict[str, tuple[str, str, str]] = {}
    info: dict[str, str] = {}
    current = ""
    number = 0
    for raw in out.split(b"\n"):
        if raw.startswith(b"\t"):
            text = raw[1:].decode("utf-8", "replace").removesuffix("\r")
            if current not in commits:
                commits[current] = (
                    info.get("author", "?"),
                    _date(info.get("author-time")),
                    info.get("summary", ""),
                )
            lines.append((current, number, text))
            continue
        fields = raw.decode("utf-8", "replace").split(" ", 1)
        if len(fields[0]) == 40 and len(fields) == 2:
            current = fields[0]
            number = int(fields[1].split()[1])
            if current not in commits:
                info = {}
        elif len(fields) == 2:
            info[fields[0]] = fields[1]
    return lines, commits


def _date(timestamp: str | None) -> str:
    if not timestamp or not timestamp.isdigit():
        return "----------"
    return datetime.fromtimestamp(int(timestamp), UTC).strftime("%Y-%m-%d")


class GetGitLog(Tool):
    """List the commits that touched a file or directory (or the whole repository), newest
    first, up to the reviewed revision: `commit date author: subject`. Follows renames of a
    single file."""

    name: ClassVar[str] = "get_git_log"
    path: str | None = param(
        "File or directory relative to the repository root; the whole repository when omitted.",
        *PATH_ALIASES,
        "directory",
        default=None,
    )
    count: int = param(
        "How many commits to show (default 10, at most 100).",
        "count",
        "limit",
        "n",
        "max_count",
        default=DEFAULT_LOG_COUNT,
        ge=1,
    )

    def run(self, workspace: Workspace) -> str:
        rel = workspace.normalize(self.path or "")
        revision = workspace.blame_revision or "HEAD"
        count = min(self.count, MAX_LOG_COUNT)
        # One NUL-ended record per commit, fields split by \x1f: a subject or an author may
        # hold any other character, \r and \x1c included, which str.splitlines would break at.
        args = ["log", f"-n{count}", "-z", "--no-decorate", "--date=short"]
        args.append("--format=%h%x1f%ad%x1f%an%x1f%s")
        if rel and workspace.listing.kinds.get(rel) is Kind.FILE:
            args.append("--follow")
        args += [revision, "--"]
        if rel:
            args.append(f":(top,literal){rel}")
        try:
            key = tuple(args)
            if key not in workspace.history:
                workspace.history[key] = run_git_for(workspace.root, args, LOG_SECONDS)
            raw, stopped = workspace.history[key]
            out = raw.decode("utf-8", "replace")
        except GitFailed as exc:
            if "does not have any commits" in exc.stderr or "bad revision" in exc.stderr:
                raise ToolError("The repository has no commits yet.") from exc
            raise ToolError(f"git log failed: {_one_line(exc.stderr)}") from exc
        if stopped:  # the last record may be cut short: only whole ones are shown
            out = out[: out.rfind("\0") + 1]
        entries = []
        for record in out.split("\0"):
            parts = record.split("\x1f", 3)  # the subject, last, keeps any \x1f of its own
            if len(parts) == 4:
                commit, date, author, subject = parts
                entries.append(f"{commit} {date} {visible(author)}: {cut_line(subject)}")
        cut = (
            f"[History searched for {LOG_SECONDS:.0f} s and stopped: older commits were not "
            "searched.]"
        )
        if not entries:
            target = f"'{echo_path(self.path)}'" if rel else "the repository"
            if stopped:
                return f"No commits touch {target} in the history searched.\n\n{cut}"
            return f"No commits touch {target} up to {workspace.label}."
        if stopped:
            entries.append(f"\n{cut}")
        if self.count > MAX_LOG_COUNT:
            entries.append(f"\n[count is capped at {MAX_LOG_COUNT}.]")
        return "\n".join(entries)
