"""Settings: CLI flags, then environment, then the repository's config file, then defaults.

Everything is validated once into a frozen model. Unknown keys are an error that names the
key and where it came from. The repository's config file is read from the *base* revision,
so a change under review cannot rewrite the rules it is judged by.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from reviewer.errors import ReviewerError
from reviewer.findings import Severity
from reviewer.settings.pricing import Price
from reviewer.settings.variables import COMMAND_VARIABLES
from reviewer.workspace.gitcmd import run_git

CONFIG_FILE = ".reviewer.toml"
PYPROJECT = "pyproject.toml"
ENV_PREFIX = "REVIEWER_"
# `@` and a GitHub login: letters, digits and single hyphens, 39 characters at most.
_MENTION = re.compile(r"@[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}")
FailOn = Literal["critical", "high", "medium", "low", "info", "none"]
VerifyLevel = Literal["all", "off", "critical", "high", "medium", "low", "info"]


class Settings(BaseModel):
    """Every setting of a review. Field names are the config-file keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The model and its endpoint.
    model: str | None = Field(None, description="Model name the endpoint serves.")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (with /v1).")
    api_key: SecretStr | None = Field(None, description="API key; any value for local servers.")
    temperature: float | None = Field(
        None, ge=0, le=2, description="Sampling temperature; the server's default if unset."
    )
    max_output_tokens: int | None = Field(
        None,
        ge=1,
        description="Tokens per reply; unset: 8192 (room for a large submission), or a "
        "quarter of context_window when that is less. A reply cut at it is asked again.",
    )
    request_timeout: float = Field(
        180.0,
        gt=0,
        description="Seconds for one model request (a CPU server needs more, see the README); "
        "a reply still being written then is asked again, shorter.",
    )
    tool_choice: Literal["auto", "required"] = Field(
        "auto",
        description='"required" asks the server to force a tool call on every request (left '
        "out once a server refuses it); auto lets the model answer in text.",
    )
    max_retries: int = Field(4, ge=0, le=20, description="Retries of a transient model error.")
    context_window: int = Field(128_000, ge=4_000, description="The model's context, tokens.")

    # What to review and how.
    include: tuple[str, ...] = Field((), description="Globs of files to review (all if empty).")
    exclude: tuple[str, ...] = Field((), description="Globs of files never to review.")
    instructions: str = Field("", description="Extra review instructions for the model.")
    rule_files: Literal["auto"] | tuple[str, ...] = Field(
        "auto",
        description='Rule files whose instructions apply, read at the base revision: "auto" '
        "(AGENTS.md, CLAUDE.md, REVIEW.md, Cursor and Copilot rules), [] (none), or a list "
        "of paths.",
    )
    language: str = Field(
        "English",
        min_length=1,
        max_length=40,
        description="Language the bot writes in (summary, findings, answers); the fixed text "
        "of reports stays English.",
    )
    path_instructions: dict[str, str] = Field(
        default_factory=dict, description="Glob -> instructions for matching changed files."
    )
    min_severity: Severity = Field(Severity.INFO, description="Findings below are suppressed.")
    max_findings: int = Field(50, ge=0, description="Findings over this are suppressed.")
    fail_on: FailOn = Field("none", description="Exit 1 when a finding is at or above this.")
    dismiss_by: Literal["writers", "anyone"] = Field(
        "writers",
        description="Who may dismiss a finding on GitHub (resolve its thread, react -1, reply "
        '"won\'t fix"): "writers" (write, maintain or admin permission) or "anyone".',
    )

    # Budgets of the agent loop.
    # Each holds for the whole review, every part of a split review spending from it.
    max_turns: int = Field(
        40, ge=1, description="Model requests in the whole review, all parts together."
    )
    max_tool_calls: int = Field(
        120, ge=0, description="Tool calls in the whole review, all parts together."
    )
    max_tokens: int = Field(
        2_000_000,
        ge=1_000,
        description="Prompt+completion tokens in the whole review, all parts together.",
    )
    max_seconds: float = Field(900.0, gt=0, description="Wall time of the whole review, seconds.")
    max_cost: float | None = Field(
        None,
        gt=0,
        description="USD the whole review may cost, all parts together; needs the model's price.",
    )
    concurrency: int = Field(
        4, ge=1, le=32, description="Batches of a large change reviewed at the same time."
    )

    # Verification (reviewer/checks/verify.py): each finding checked by a short loop that tries to
    # refute it, spending the review's budgets.
    verify: VerifyLevel = Field(
        "all",
        description='Check each finding before it is posted: "all", "off", or a severity '
        "(only findings at or above it are checked).",
    )
    verify_model: str | None = Field(
        None, description="Model that checks findings; the review's model if unset."
    )
    verify_tool_calls: int = Field(
        4, ge=0, le=50, description="Tool calls the check of one finding may make."
    )
    min_confidence: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Findings the model rates below this confidence (0..1) are discarded.",
    )

    # Questions in the pull request's threads (the GitHub Action's comment triggers).
    mention: str = Field(
        "@reviewer",
        description="How people call the bot in a comment (a mention, `@` and a login); a "
        "comment that says it outside code and quotes is a question for the bot.",
    )
    answer_to: Literal["author-and-writers", "anyone"] = Field(
        "author-and-writers",
        description="Who may ask the bot a question or `/review`: the pull request's author "
        "and people with write access, or anyone (every answer is a paid model request).",
    )

    # What the model costs, when the shipped table does not know it (or is out of date).
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="Model -> USD per million tokens (input, cached_input, output); "
        "overrides the shipped prices.",
    )

    @field_validator("include", "exclude", mode="before")
    @classmethod
    def _one_glob_is_a_list(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @field_validator("rule_files", mode="before")
    @classmethod
    def _rule_files(cls, value: Any) -> Any:
        if value == "none":
            return ()
        if isinstance(value, str) and value != "auto":
            value = (value,)
        if isinstance(value, list | tuple):
            paths = tuple(str(item).strip().removeprefix("./") for item in value)
            if any(not path or path.startswith("/") for path in paths):
                raise ValueError("each rule file is a path from the repository root")
            return paths
        return value

    @field_validator("language")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = value.strip()
        if not value or any(not char.isprintable() for char in value):
            raise ValueError("a language is a name on one line, e.g. English or Deutsch")
        return value

    @field_validator("mention")
    @classmethod
    def _a_mention(cls, value: str) -> str:
        value = value.strip()
        if not _MENTION.fullmatch(value):
            raise ValueError(
                "a mention is `@` and a GitHub login (letters, digits, hyphens), e.g. @reviewer"
            )
        return value

    def fails(self, severity: Severity) -> bool:
        return self.fail_on != "none" and severity.at_least(Severity(self.fail_on))

    def verifies(self, severity: Severity) -> bool:
        """Whether a finding of this severity is checked by the verification pass."""
        if self.verify == "off":
            return False
        return self.verify == "all" or severity.at_least(Severity(self.verify))


_ENV_ALIASES = {"OPENAI_BASE_URL": "base_url", "OPENAI_API_KEY": "api_key"}


@dataclass(frozen=True)
class Layer:
    """One source of settings and where it came from, for error messages."""

    source: str
    values: Mapping[str, Any]
    # Where a key came from when the layer's name is not precise enough (the variable).
    key_sources: Mapping[str, str] = field(default_factory=dict)

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
    if key in ("include", "exclude") or (key == "rule_files" and value not in ("auto", "none")):
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
    return Layer(where, data)


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
                    f"{', '.join(sorted(known))}"
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


def require_model_settings(settings: Settings) -> None:
    """The one-line error a user sees when the model is not configured."""
    missing = []
    if not settings.model:
        missing.append("the model name (--model, REVIEWER_MODEL, or model in the settings file)")
    if settings.api_key is None:
        missing.append("the API key (OPENAI_API_KEY; any value works for a local server)")
    if missing:
        endpoint = (
            "" if settings.base_url else "; for a server other than OpenAI set OPENAI_BASE_URL"
        )
        raise ReviewerError("missing " + " and ".join(missing) + endpoint)
