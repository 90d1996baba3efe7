"""Where settings come from, in order: CLI flags, then the environment, then the repository's
config file (`.reviewer.toml` or pyproject's `[tool.reviewer]`, read at the *base* revision),
then defaults: each a `Layer` that knows the source of every key, merged and validated once
into `Settings`, with the error naming the key and where it came from.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reviewer.errors import ReviewerError
from reviewer.settings.config import CONFIG_FILE, ENV_PREFIX, PYPROJECT, Settings
from reviewer.settings.variables import COMMAND_VARIABLES
from reviewer.workspace.gitcmd import run_git

_ENV_ALIASES = {"OPENAI_BASE_URL": "base_url", "OPENAI_API_KEY": "api_key"}
# Secrets: a settings file is committed or shared, so it may not hold them.
_NOT_IN_FILES = frozenset({"api_key"})


@dataclass(frozen=True)
class Layer:
    """One source of settings and where it came from, for error messages."""

    source: str
    values: Mapping[str, Any]
    # Where a key came from when the layer's name is not precise enough (the variable).
    key_sources: Mapping[str, str] = field(default_factory=dict)
    # Settings this kind of source may not set (a file: the API key), so never offered as
    # known ones in its errors.
    refused: frozenset[str] = frozenset()

    def source_of(self, key: str) -> str:
        return self.key_sources.get(key, self.source)


def environment_layer(environ: Mapping[str, str]) -> Layer:
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, key in _ENV_ALIASES.items():
        if environ.get(name):
            values[key] = environ[name]
            sources[key] = f"the environment ({name})"
    for name, value in environ.items():
        if name in COMMAND_VARIABLES:
            continue
        if name.startswith(ENV_PREFIX) and value != "":
            key = name[len(ENV_PREFIX) :].lower()
            values[key] = _env_value(key, value)
            sources[key] = f"the environment ({name})"
    return Layer("the environment (REVIEWER_*)", values, sources)


def _env_value(key: str, value: str) -> Any:
    lists = ("include", "exclude", "jira_projects")
    if key in lists or (key == "rule_files" and value not in ("auto", "none")):
        return tuple(part.strip() for part in value.replace("\n", ",").split(",") if part.strip())
    return value


def config_file_layer(root: Path, revision: str | None) -> Layer | None:
    """`.reviewer.toml`, else `[tool.reviewer]` of `pyproject.toml`, at `revision`.

    `revision` None reads the files on disk (a review of uncommitted work has no base
    commit other than HEAD, which is then what is read).
    """
    for name in (CONFIG_FILE, PYPROJECT):
        text = _read_at(root, name, revision)
        if text is None:
            continue
        where = f"{name} at {revision[:12]}" if revision else name
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ReviewerError(f"{where} is not valid TOML: {exc}") from exc
        if name == PYPROJECT:
            data = data.get("tool", {}).get("reviewer")
            if data is None:
                continue
            where = f"[tool.reviewer] in {where}"
        return _file_layer(where, data)
    return None


def file_at_revision_layer(root: Path, name: str, revision: str) -> Layer:
    """A settings file the workflow names (the Action's `config` input), read at `revision`."""
    text = _read_at(root, name.removeprefix("./"), revision)
    where = f"{name} at {revision[:12]}"
    if text is None:
        raise ReviewerError(f"config: '{name}' does not exist at the base revision {revision[:12]}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ReviewerError(f"{where} is not valid TOML: {exc}") from exc
    if Path(name).name == PYPROJECT:
        data = data.get("tool", {}).get("reviewer", {})
    return _file_layer(where, data)


def explicit_file_layer(path: Path) -> Layer:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReviewerError(f"--config: cannot read '{path}': {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ReviewerError(f"--config: '{path}' is not UTF-8 text, as TOML is") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ReviewerError(f"--config: '{path}' is not valid TOML: {exc}") from exc
    if path.name == PYPROJECT:
        data = data.get("tool", {}).get("reviewer", {})
    return _file_layer(str(path), data)


def _file_layer(where: str, data: Mapping[str, Any]) -> Layer:
    """The settings of a file. Its API key is refused: a settings file is committed or
    shared, so a key in it is a leaked secret (the endpoint and model are not secrets)."""
    if "api_key" in data:
        raise ReviewerError(
            f"{where} sets api_key, and a key must not be in a settings file (it gets "
            "committed): remove it and set OPENAI_API_KEY (in the GitHub Action, the api-key "
            "input, from a secret)"
        )
    return Layer(where, data, refused=_NOT_IN_FILES)


def _read_at(root: Path, name: str, revision: str | None) -> str | None:
    if revision is None:
        path = root / name
        # As at a revision below: the project's own pyproject.toml need not be UTF-8 for us.
        return path.read_bytes().decode("utf-8", "replace") if path.is_file() else None
    proc = run_git(root, ["show", f"{revision}:{name}"], check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace")


def resolve_settings(layers: list[Layer | None]) -> Settings:
    """Merge layers, highest priority first, and validate once."""
    known = set(Settings.model_fields)
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for layer in reversed([layer for layer in layers if layer is not None]):
        for key, value in layer.values.items():
            if key not in known:
                raise ReviewerError(
                    f"unknown setting '{key}' in {layer.source_of(key)}; known settings: "
                    f"{', '.join(sorted(known - layer.refused))}"
                )
            merged[key] = value
            origin[key] = layer.source_of(key)
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise ReviewerError(_invalid(exc, origin)) from exc


# How a setting whose shape is not obvious is written, for the error that names it.
SETTING_EXAMPLES = {
    "path_instructions": 'path_instructions = { "src/**/*.py" = "Check error handling." }',
    "include": 'include = ["src/**", "lib/**"]',
    "exclude": 'exclude = ["**/*.lock", "vendor/**"]',
    "rule_files": 'rule_files = "auto" (or [] for none, or ["AGENTS.md", "docs/review.md"])',
    "language": 'language = "Deutsch"',
    "prices": '[prices."my-model"] with input = 2.5, cached_input = 1.25, output = 10.0',
    "max_cost": "max_cost = 2.5",
    "verify": 'verify = "all" (or "off", or a severity such as "medium")',
    "jira_url": 'jira_url = "https://acme.atlassian.net"',
    "jira_projects": 'jira_projects = ["PAY", "OPS"]',
    "tickets": 'tickets = "auto" (or "off")',
}


def _invalid(exc: ValidationError, origin: Mapping[str, str]) -> str:
    """One line: which setting (and which entry of it), where it was set, what is wrong,
    what the setting is, and how it is written."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]] or ["?"]
    key = loc[0]
    entry = f" (entry {', '.join(repr(part) for part in loc[1:])})" if len(loc) > 1 else ""
    field = Settings.model_fields.get(key)
    what = f" {key}: {field.description}" if field and field.description else ""
    example = f" Example: {SETTING_EXAMPLES[key]}" if key in SETTING_EXAMPLES else ""
    return (
        f"invalid setting '{key}'{entry} in {origin.get(key, 'the settings')}: {error['msg']}."
        f"{what}{example}"
    )


def settings_layers(
    *,
    flags: Mapping[str, Any],
    root: Path,
    config_revision: str | None,
    config_path: Path | None = None,
    config_name: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Layer | None]:
    """The sources of a review's settings, highest priority first."""
    if config_path:
        file_layer = explicit_file_layer(config_path)
    elif config_name and config_revision:
        file_layer = file_at_revision_layer(root, config_name, config_revision)
    else:
        file_layer = config_file_layer(root, config_revision)
    cli = Layer("the command line", {k: v for k, v in flags.items() if v is not None})
    env = environment_layer(os.environ if environ is None else environ)
    return [cli, env, file_layer]


def load_settings(
    *,
    flags: Mapping[str, Any],
    root: Path,
    config_revision: str | None,
    config_path: Path | None = None,
    config_name: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    return resolve_settings(
        settings_layers(
            flags=flags,
            root=root,
            config_revision=config_revision,
            config_path=config_path,
            config_name=config_name,
            environ=environ,
        )
    )


def setting_sources(layers: list[Layer | None]) -> dict[str, str]:
    """Where each setting's value comes from: the layer that set it, else `default`."""
    sources = dict.fromkeys(Settings.model_fields, "default")
    for layer in reversed([layer for layer in layers if layer is not None]):
        for key in layer.values:
            if key in sources:
                sources[key] = layer.source_of(key)
    return sources


def settings_notes(
    root: Path, config_revision: str | None, config_path: Path | None, config_name: str | None
) -> list[str]:
    """Which settings file a review uses, and a warning for each file in the working tree
    whose settings for us differ from the base revision's (the rules come from the base
    revision, so a change cannot rewrite them): a pyproject.toml without [tool.reviewer], or
    whose other tables changed, is not one."""
    if config_path:
        return [f"settings: {config_path} (--config)"]
    if config_name and config_revision:
        return [f"settings: {config_name} at {config_revision[:12]}"]
    layer = config_file_layer(root, config_revision)
    used = layer.source if layer else "defaults (no settings file)"
    notes = [f"settings: {used}"]
    if config_revision is None:
        return notes
    base = config_revision[:12]
    for name in (CONFIG_FILE, PYPROJECT):
        local = _settings_of(name, _read_at(root, name, None))
        if local is None:
            continue  # no settings for us on disk: nothing the user could expect to apply
        committed = _settings_of(name, _read_at(root, name, config_revision))
        if local == committed:
            continue
        what = f"working tree's {name}"
        what = f"[tool.reviewer] table of the {what}" if name == PYPROJECT else what
        state = (
            f"is not in the base revision {base}"
            if committed is None
            else f"differs from the one at {base}"
        )
        notes.append(
            f"warning: the {what} {state}; the settings used are the "
            f"base revision's ({used}), so a change cannot rewrite its rules; to try the "
            f"local one, pass --config {name}"
        )
    return notes


def _settings_of(name: str, text: str | None) -> object:
    """The settings `text` of file `name` holds for us (None when none): all of
    `.reviewer.toml`, the `[tool.reviewer]` table of `pyproject.toml`; text that is not
    TOML stands for itself."""
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return text if name != PYPROJECT or "tool.reviewer" in text else None
    return data if name != PYPROJECT else data.get("tool", {}).get("reviewer")
