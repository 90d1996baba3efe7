"""The settings model: every setting, its default, its description and its validation, in one
frozen `Settings` (whose fields `reviewer init` writes out as the commented settings file).

Where the values come from (flags, the environment, the repository's config file read at the
*base* revision, defaults) is `reviewer.settings.layers`. Unknown keys are an error that names
the key and where it came from."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from reviewer.errors import ReviewerError
from reviewer.findings import Severity
from reviewer.settings.pricing import Price

CONFIG_FILE = ".reviewer.toml"
PYPROJECT = "pyproject.toml"
ENV_PREFIX = "REVIEWER_"
# A GitHub login (letters, digits, single hyphens) or a GitLab username (also `_` and `.`).
_MENTION = re.compile(r"@[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,253}[A-Za-z0-9_])?")
# A Jira project key (PAY), and Jira's address: no credentials in it (the token is a secret).
_JIRA_PROJECT = re.compile(r"[A-Z][A-Z0-9_]{0,49}")
_JIRA_URL = re.compile(r"https?://[^\s/@?#]+(/[^\s?#]*)?")
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
    structured_answer: Literal["auto", "off"] = Field(
        "auto",
        description="auto: after two replies in a row with no usable tool call, ask for the "
        "final call's arguments as JSON held to its schema (response_format), once per "
        "reply; off: never.",
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
        "(AGENTS.md, CLAUDE.md, REVIEW.md, Cursor, Bugbot, Copilot and Gemini rules), [] "
        "(none), or a list of paths.",
    )
    learnings: Literal["auto", "off"] = Field(
        "auto",
        description="auto: the team's learnings in .reviewer/learnings.md (read at the base "
        "revision) reach the review and the verification of each finding; off: not read.",
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
    # The tickets the change names (reviewer/context/tickets/): what the change is for.
    tickets: Literal["auto", "off"] = Field(
        "auto",
        description='"auto": read the tickets the change names (#12, owner/repo#12, issue URLs '
        'of the forge, Jira keys) and show the model what the change is for; "off": none.',
    )
    max_tickets: int = Field(
        3, ge=0, le=20, description="Tickets read for one review, at most (each cut to 4,000 "
        "characters)."
    )
    jira_url: str | None = Field(
        None,
        description="Your Jira's address (https://acme.atlassian.net); its token comes from "
        "REVIEWER_JIRA_TOKEN (or JIRA_API_TOKEN), never from a file.",
    )
    jira_projects: tuple[str, ...] = Field(
        (),
        description='Jira project keys whose issue keys count as tickets in the change\'s text '
        '(["PAY"]: PAY-42); none: only --ticket and {jira_url}/browse/KEY links.',
    )
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
        "comment that says it outside code and quotes is a question for the bot. Unset on "
        "GitLab: the bot's own username.",
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

    @field_validator("jira_projects", mode="before")
    @classmethod
    def _project_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = (value,)
        if isinstance(value, list | tuple):
            keys = tuple(str(item).strip().upper() for item in value)
            if any(not _JIRA_PROJECT.fullmatch(key) for key in keys):
                raise ValueError("each is a Jira project key: a letter, then letters, digits or _")
            return keys
        return value

    @field_validator("jira_url")
    @classmethod
    def _jira_address(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip().rstrip("/")
        if not _JIRA_URL.fullmatch(value):
            raise ValueError("an http(s) address without credentials, e.g. https://acme.atlassian.net")
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
                "a mention is `@` and a login (letters, digits, `-`, `_`, `.`), e.g. @reviewer"
            )
        return value

    def fails(self, severity: Severity) -> bool:
        return self.fail_on != "none" and severity.at_least(Severity(self.fail_on))

    def verifies(self, severity: Severity) -> bool:
        """Whether a finding of this severity is checked by the verification pass."""
        if self.verify == "off":
            return False
        return self.verify == "all" or severity.at_least(Severity(self.verify))


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
