"""The REVIEWER_* environment variables that are not settings, in one table: the Action's
inputs that `reviewer github` reads itself, and what steers a command. Every other REVIEWER_*
variable is a setting (a field of `config.Settings`), and an unknown one is an error. A module
of its own, without imports, so `reviewer github --help` can list them without loading the
settings model.
"""

from __future__ import annotations

from collections.abc import Mapping

# Set (to anything) to see the traceback of an unexpected error after its one line.
DEBUG_VARIABLE = "REVIEWER_DEBUG"

# Name -> (the commands that read it, comma-separated; what it is).
COMMAND_VARIABLES: Mapping[str, tuple[str, str]] = {
    "REVIEWER_CONFIG": (
        "github",
        "settings file read at the base revision (the Action's `config`)",
    ),
    "REVIEWER_FULL_REVIEW": (
        "github",
        "review the whole pull request (the Action's `full-review`)",
    ),
    "REVIEWER_STATE_KEY": (
        "github",
        "secret that signs the bot's memory (the Action's `state-key`)",
    ),
    "REVIEWER_BOT_LOGIN": ("github", "login the token posts as (the Action's `bot-login`)"),
    "REVIEWER_DRY_RUN": (
        "github",
        "show the plan, ask no model, post nothing (the Action's `dry-run`)",
    ),
    "REVIEWER_PR": ("github", "pull request number of a workflow_dispatch run"),
    "REVIEWER_REPORT": ("github", "path of the JSON report of `reviewer github`"),
    "REVIEWER_GITLAB_TOKEN": (
        "gitlab",
        "project access token (api scope) `reviewer gitlab` posts with, a masked CI/CD variable",
    ),
    "REVIEWER_REPORTS_DIR": (
        "gitlab",
        "folder of the reports and the job summary (default: reviewer-reports in the checkout)",
    ),
    "REVIEWER_CODEQUALITY": ("gitlab", "path of the Code Quality report `reviewer gitlab` writes"),
    "REVIEWER_DOTENV": ("gitlab", "path of a dotenv file of the outputs (AI_REVIEW_STATUS=...)"),
    "REVIEWER_JUDGE_MODEL": ("eval", "the model `reviewer eval` judges with (`--judge-model`)"),
    "REVIEWER_JUDGE_BASE_URL": ("eval", "the endpoint of `reviewer eval`'s judge"),
    "REVIEWER_JUDGE_API_KEY": ("eval", "the API key of `reviewer eval`'s judge"),
    "REVIEWER_EVAL_GIT_BASE": ("eval", "where `reviewer eval` clones benchmark repositories from"),
    "REVIEWER_JIRA_TOKEN": (
        "review, github, gitlab",
        "Jira API token (Cloud) or personal access token (Data Center) the tickets are read "
        "with; also JIRA_API_TOKEN",
    ),
    "REVIEWER_JIRA_EMAIL": (
        "review, github, gitlab",
        "the Atlassian account's email: with it, Basic email:token (Jira Cloud); without, "
        "Bearer token (Data Center); also JIRA_EMAIL",
    ),
    DEBUG_VARIABLE: ("every command", "show the traceback of an unexpected error"),
}


def variables_of(command: str) -> dict[str, str]:
    """The variables `command` reads itself, with what each is."""
    return {
        name: what
        for name, (readers, what) in COMMAND_VARIABLES.items()
        if command in readers.split(", ")
    }
