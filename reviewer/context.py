"""What the model is told: which files are reviewed, the line-numbered diff, the instructions,
rendered through the Jinja templates in `prompts/` (a repository may override them).

Every changed file ends up either reviewed or skipped with a reason; nothing is dropped
silently. Nothing from the process environment is passed to a template.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jinja2 import ChoiceLoader, DictLoader, FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from reviewer.config import Settings
from reviewer.diff import Change, FileChange, Hunk
from reviewer.findings import FileCoverage
from reviewer.gitcmd import run_git
from reviewer.tokens import CHARS_PER_TOKEN
from reviewer.workspace.globs import basename_or_path_matcher

PROMPT_NAMES = ("system.md.j2", "task.md.j2")
OVERRIDE_DIR = ".reviewer/prompts"
# Share of the context window the first message (diff included) may take; the rest is for
# the investigation and the reply.
TASK_SHARE = 0.45


@dataclass(frozen=True)
class ChangeInfo:
    """The change as a person describes it: untrusted text, shown to the model as data."""

    title: str
    description: str
    repository: str


@dataclass(frozen=True)
class ReviewContext:
    system: str
    task: str
    coverage: tuple[FileCoverage, ...]


def prompts_dir() -> Path:
    """Templates ship inside the wheel (reviewer/prompts); a source checkout has ./prompts."""
    packaged = Path(__file__).parent / "prompts"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "prompts"


def select_files(change: Change, settings: Settings) -> list[FileCoverage]:
    """Decide, for every changed file, whether it is reviewed, and why not."""
    include = [basename_or_path_matcher(g) for g in settings.include]
    exclude = [basename_or_path_matcher(g) for g in settings.exclude]
    coverage = []
    for file in change.files:
        reason = ""
        if include and not any(m.fullmatch(file.path) for m in include):
            reason = "not matched by include"
        elif any(m.fullmatch(file.path) for m in exclude):
            reason = "excluded by config"
        elif file.binary:
            reason = "binary file"
        elif file.oversized:
            reason = "diff too large"
        coverage.append(FileCoverage(file.path, file.status, not reason, reason))
    return coverage


def render_hunk(hunk: Hunk) -> list[str]:
    """A hunk with the new-file line number on every line the model can point at.

    Added and context lines carry their new line number; removed lines carry their old
    number after a minus, so a LEFT finding can name it.
    """
    ranges = f"-{hunk.old_start},{hunk.old_count} +{hunk.new_start},{hunk.new_count}"
    out = [f"@@ {ranges} @@ {hunk.section}".rstrip()]
    for line in hunk.lines:
        if line.kind == "add":
            out.append(f"{line.new_line:>6} + {line.text}")
        elif line.kind == "del":
            out.append(f"{'-' + str(line.old_line):>6} - {line.text}")
        else:
            out.append(f"{line.new_line:>6}   {line.text}")
    return out


def render_file(file: FileChange) -> str:
    header = f"### {file.path} ({_describe(file)}, +{file.additions} -{file.deletions})"
    if file.status == "deleted":
        return f"{header}\nThe file is deleted ({file.deletions} lines removed)."
    if not file.hunks:
        return f"{header}\nNo content change."
    lines = [header]
    for hunk in file.hunks:
        lines.extend(render_hunk(hunk))
    return "\n".join(lines)


def _describe(file: FileChange) -> str:
    parts = [file.status]
    if file.status in ("renamed", "copied") and file.old_path:
        parts = [f"{file.status} from {file.old_path}"]
    if file.mode_changed:
        parts.append(f"mode {file.old_mode} -> {file.new_mode}")
    return ", ".join(parts)


def build_context(
    *,
    change: Change,
    info: ChangeInfo,
    settings: Settings,
    revision_label: str,
    root: Path,
    config_revision: str | None,
) -> ReviewContext:
    coverage = select_files(change, settings)
    budget_chars = int(settings.context_window * TASK_SHARE * CHARS_PER_TOKEN)
    rendered: list[str] = []
    used = 0
    files = {f.path: f for f in change.files}
    final: list[FileCoverage] = []
    for item in coverage:
        if not item.reviewed:
            final.append(item)
            continue
        text = render_file(files[item.path])
        if used + len(text) > budget_chars:
            final.append(FileCoverage(item.path, item.status, False, "over the context window"))
            continue
        used += len(text)
        rendered.append(text)
        final.append(item)
    reviewed_paths = [c.path for c in final if c.reviewed]
    environment = _environment(root, config_revision)
    values = {
        "repository": info.repository,
        "revision": revision_label,
        "title": info.title,
        "description": info.description,
        "instructions": settings.instructions.strip(),
        "path_instructions": _path_instructions(settings, reviewed_paths),
        "files": final,
        "skipped": [c for c in final if not c.reviewed],
        "diff": "\n\n".join(rendered),
        "fence": _fence_for(info.description + info.title),
    }
    return ReviewContext(
        system=environment.get_template("system.md.j2").render(values),
        task=environment.get_template("task.md.j2").render(values),
        coverage=tuple(final),
    )


def _path_instructions(settings: Settings, paths: list[str]) -> list[tuple[str, str]]:
    chosen = []
    for glob, text in settings.path_instructions.items():
        matcher = basename_or_path_matcher(glob)
        if any(matcher.fullmatch(p) for p in paths):
            chosen.append((glob, text.strip()))
    return chosen


def _fence_for(text: str) -> str:
    """A fence longer than any run of backticks in the untrusted text, so it cannot close it."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _environment(root: Path, config_revision: str | None) -> SandboxedEnvironment:
    """Templates from the repository's base revision first, then the packaged ones.

    The sandboxed environment matters: an override comes from the repository.
    """
    overrides: dict[str, str] = {}
    for name in PROMPT_NAMES:
        text = _read_override(root, name, config_revision)
        if text is not None:
            overrides[name] = text
    return SandboxedEnvironment(
        loader=ChoiceLoader([DictLoader(overrides), FileSystemLoader(str(prompts_dir()))]),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _read_override(root: Path, name: str, revision: str | None) -> str | None:
    rel = f"{OVERRIDE_DIR}/{name}"
    if revision is None:
        path = root / rel
        return (
            path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else None
        )
    proc = run_git(root, ["show", f"{revision}:{rel}"], check=False)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
