"""`reviewer init`: write a commented settings file (and, with `--github`, the workflow).

The settings file is generated from the `Settings` model itself, so it lists every setting with
its real default and description, and cannot fall behind when a setting is added. Every line
is commented out: the file changes nothing until a line is uncommented. The workflow is the
shipped example (docs/examples/review.yml), the one the README documents and the tests lint.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import reviewer
from reviewer.errors import ReviewerError
from reviewer.settings.config import CONFIG_FILE, Settings

# The name the example workflow itself says to copy it to.
WORKFLOW_FILE = ".github/workflows/review.yml"
# The `uses:` line of the example workflow that names this action; replaced by `--action`.
ACTION_PLACEHOLDER = "OWNER/reviewer@v1"
# Settings that must not be committed: a secret belongs in the environment (a CI secret).
NOT_IN_FILE = frozenset({"api_key"})

# What to show for a setting whose default is "unset": a typical value, commented out.
EXAMPLES: dict[str, Any] = {
    "model": "gpt-4o",
    "base_url": "http://localhost:11434/v1",
    "temperature": 0.2,
    "max_output_tokens": 4096,
    "include": ["src/**"],
    "exclude": ["docs/**", "**/*.lock"],
    "instructions": "Money is always in integer cents.",
    "path_instructions": {"migrations/**": "Every migration must be reversible."},
    "max_cost": 2.5,
    "verify_model": "gpt-4o-mini",
    "jira_url": "https://acme.atlassian.net",
    "jira_projects": ["PAY", "OPS"],
    "prices": {"my-azure-deployment": {"input": 2.5, "cached_input": 1.25, "output": 10.0}},
}


@dataclass(frozen=True)
class Written:
    path: Path
    note: str = ""
    kept: bool = False  # an existing file left as it was


def settings_template() -> str:
    """A `.reviewer.toml` with every setting, its default and one line on what it does."""
    lines = [
        "# reviewer settings, read from the base revision of each change (so a change cannot",
        "# rewrite the rules it is judged by). Every line is commented out: uncomment what you",
        "# change. Precedence: command line, then REVIEWER_* environment variables, then this",
        "# file, then the defaults shown. The API key never goes here: set OPENAI_API_KEY (the",
        "# Action's `api-key` input, from a secret).",
        "",
    ]
    tables = []
    for name, field in Settings.model_fields.items():
        if name in NOT_IN_FILE:
            continue
        default = field.get_default(call_default_factory=True)
        if isinstance(default, dict):
            tables.append((name, str(field.description), default or EXAMPLES.get(name, {})))
            continue
        unset = default is None or default in ((), "")
        value = EXAMPLES[name] if unset and name in EXAMPLES else default
        if value is None:
            raise AssertionError(f"setting {name} needs an entry in init.EXAMPLES")
        lines.append(f"# {field.description}{_choices(field.annotation)}")
        if unset and value is not default:
            lines.append("# Unset by default; for example:")
        lines.append(f"# {name} = {toml_value(value)}")
        lines.append("")
    for name, description, table in tables:
        lines.append(f"# {description}")
        nested = {k: v for k, v in table.items() if isinstance(v, dict)}
        flat = {k: v for k, v in table.items() if k not in nested}
        if flat or not nested:
            lines.append(f"# [{name}]")
            lines.extend(f"# {toml_value(k)} = {toml_value(v)}" for k, v in flat.items())
        # A table of tables (prices): one `[name."key"]` header each.
        for key, inner in nested.items():
            lines.append(f"# [{name}.{toml_value(key)}]")
            lines.extend(f"# {k} = {toml_value(v)}" for k, v in inner.items())
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _choices(annotation: Any) -> str:
    """' One of: a, b, c.' for a setting that takes one of a few words."""
    values: list[Any] = []
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        values = [member.value for member in annotation]
    elif get_origin(annotation) is Literal:
        values = list(get_args(annotation))
    return f" One of: {', '.join(map(str, values))}." if values else ""


def toml_value(value: Any) -> str:
    """A TOML literal for the simple values settings take (JSON strings are TOML strings)."""
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"no TOML literal for {value}")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML literal for {type(value).__name__}")


def example_workflow() -> str:
    """The shipped example workflow: inside the wheel, or docs/examples in a source checkout."""
    # From the package's root, not this module's folder, so the module can live in any subpackage.
    package = Path(reviewer.__file__).parent
    packaged = package / "examples" / "review.yml"
    source = package.parent / "docs" / "examples" / "review.yml"
    return (packaged if packaged.is_file() else source).read_text(encoding="utf-8")


def workflow_template(action: str | None) -> tuple[str, str]:
    """The workflow text, and a note when its `uses:` line still needs the action's name."""
    text = example_workflow()
    if action:
        return text.replace(ACTION_PLACEHOLDER, action), ""
    return text, (
        f"edit `uses: {ACTION_PLACEHOLDER}` in {WORKFLOW_FILE} to name this action at a release "
        "tag or commit (or pass --action OWNER/REPO@REF)"
    )


def write_init(root: Path, *, github: bool, force: bool, action: str | None) -> list[Written]:
    """Write the files, refusing to overwrite any (all are checked before one is written).

    `--github` asks for the workflow: a settings file already there (edited, most likely) is
    kept as it is, and `--force` then overwrites the workflow only. Plain `init` asks for the
    settings file, and `--force` overwrites that."""
    settings = (root / CONFIG_FILE, settings_template(), "")
    planned = [settings]
    if github:
        text, note = workflow_template(action)
        planned = [(root / WORKFLOW_FILE, text, note)]
        if not _exists(settings[0]):
            planned.insert(0, settings)
    if not force:
        for path, _text, _note in planned:
            if _exists(path):
                raise ReviewerError(
                    f"{path} already exists; pass --force to overwrite it (nothing was written)"
                )
    written = []
    for path, text, note in planned:
        if path.is_dir():
            raise ReviewerError(f"{path} is a directory; remove it or choose another --repo")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(Written(path, note))
    if github and settings not in planned:
        written.insert(0, Written(settings[0], "kept as it is (it already exists)", kept=True))
    return written


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()
