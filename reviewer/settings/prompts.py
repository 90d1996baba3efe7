"""The prompt templates: Jinja files shipped in the package (`prompts/`), which a repository
may override from `.reviewer/prompts/` at its base revision, rendered in Jinja's sandbox
(an override comes from the repository, so it is untrusted code).
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import ChoiceLoader, DictLoader, FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

import reviewer
from reviewer.workspace.gitcmd import run_git

# The tickets a change names ("what the change is for"), included by task and verify_task.
TICKETS_INCLUDE = "_tickets.md.j2"
# The team's learnings (.reviewer/learnings.md), included by task and verify_task.
LEARNINGS_INCLUDE = "_learnings.md.j2"
PROMPT_NAMES = ("system.md.j2", "task.md.j2", TICKETS_INCLUDE, LEARNINGS_INCLUDE)
# An answer to a question in a thread (reviewer/review/answer.py); overridable the same way.
ANSWER_PROMPT_NAMES = ("answer_system.md.j2", "answer_task.md.j2")
# A finding's verification (reviewer/checks/verify.py); overridable the same way.
VERIFY_PROMPT_NAMES = (
    "verify_system.md.j2",
    "verify_task.md.j2",
    TICKETS_INCLUDE,
    LEARNINGS_INCLUDE,
)
OVERRIDE_DIR = ".reviewer/prompts"


def prompts_dir() -> Path:
    """Templates ship inside the wheel (reviewer/prompts); a source checkout has ./prompts."""
    # From the package's root, not this module's folder, so the module can live in any subpackage.
    package = Path(reviewer.__file__).parent
    packaged = package / "prompts"
    return packaged if packaged.is_dir() else package.parent / "prompts"


def fence_for(text: str) -> str:
    """A fence longer than any run of backticks in the untrusted text, so it cannot close it."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def prompt_environment(
    root: Path, config_revision: str | None, names: tuple[str, ...] = PROMPT_NAMES
) -> SandboxedEnvironment:
    """Templates `names` from the repository's base revision first, then the packaged ones.

    The sandboxed environment matters: an override comes from the repository.
    """
    overrides: dict[str, str] = {}
    for name in names:
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


def prompt_texts(
    root: Path, config_revision: str | None, names: tuple[str, ...] = PROMPT_NAMES
) -> dict[str, str]:
    """Each template `names` (those a review renders, or VERIFY_PROMPT_NAMES) at
    `config_revision`: the repository's override, else the packaged one (what an evaluation
    hashes to know which prompts produced a score)."""
    return {
        name: _read_override(root, name, config_revision)
        or (prompts_dir() / name).read_text(encoding="utf-8")
        for name in names
    }


def _read_override(root: Path, name: str, revision: str | None) -> str | None:
    rel = f"{OVERRIDE_DIR}/{name}"
    if revision is None:
        path = root / rel
        return (
            path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else None
        )
    proc = run_git(root, ["show", f"{revision}:{rel}"], check=False)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
