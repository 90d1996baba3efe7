"""The command line's parser: every command, its options and its help text, each command
pointing at its handler in `reviewer.cli.commands`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from reviewer import __version__
from reviewer.cli.commands import (
    eval_command,
    github_command,
    gitlab_command,
    init_command,
    list_tools_command,
    review_command,
    run_tool_command,
    stats_command,
)
from reviewer.errors import ExitCode
from reviewer.eval.arguments import add_eval_parser
from reviewer.settings.variables import variables_of


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line that says where help is."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            int(ExitCode.INCOMPLETE),
            f"{self.prog}: error: {message} (see `{self.prog} --help`)\n",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="reviewer",
        description="A read-only AI code-review bot.",
    )
    parser.add_argument("--version", action="version", version=f"reviewer {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    review = commands.add_parser(
        "review",
        help="review a branch against its base (or uncommitted changes) with the model",
        description=(
            "Review the change merge-base(BASE, HEAD)..HEAD with the model and print or write "
            "reports. Exit 0: complete, nothing at or above --fail-on; 1: findings at or above "
            "--fail-on; 2: the review could not be completed."
        ),
        epilog=(
            "The model is set by REVIEWER_MODEL (or --model), OPENAI_API_KEY (any value for a "
            "local server) and OPENAI_BASE_URL (the endpoint with /v1; OpenAI when unset). "
            "Every setting of the settings file can also be given as REVIEWER_<NAME>, such as "
            "REVIEWER_FAIL_ON=high."
        ),
    )
    review.add_argument(
        "--repo", type=Path, default=Path("."), help="repository folder (default: current)"
    )
    review.add_argument(
        "--base", help="base revision (default: origin/HEAD, else main, else master)"
    )
    review.add_argument("--head", help="head revision to review (default: HEAD)")
    review.add_argument(
        "--uncommitted",
        action="store_true",
        help="review the working tree against HEAD (or --base) instead of a commit",
    )
    review.add_argument(
        "--format",
        action="append",
        metavar="FORMAT[=FILE]",
        help=(
            "terminal, markdown, json, sarif, rdjson or codequality; repeat for several "
            "(default: terminal); FORMAT=FILE writes that report to FILE (else to the --output "
            "in the same position, else to stdout)"
        ),
    )
    review.add_argument(
        "--output",
        action="append",
        metavar="FILE",
        help=(
            "file for the format given in the same position ('-' for stdout); with no "
            "--format there, the file's name says the format (.json, .sarif, .md, .rdjson, "
            ".txt)"
        ),
    )
    review.add_argument(
        "--fail-on",
        choices=["critical", "high", "medium", "low", "info", "none"],
        help="exit 1 when a finding is at or above this severity (default: none)",
    )
    review.add_argument("--model", help="model name (or REVIEWER_MODEL)")
    review.add_argument(
        "--ticket",
        action="append",
        default=[],
        metavar="KEY|URL",
        help="a ticket the change is for, besides those its commits name: a Jira key (PAY-42, "
        "read from jira_url) or an issue URL of GitHub or GitLab (read with GITHUB_TOKEN or "
        "GITLAB_TOKEN, on their own host only); repeat for several",
    )
    review.add_argument(
        "--config", type=Path, help="settings file to use instead of the repository's"
    )
    review.add_argument(
        "--dry-run",
        action="store_true",
        help="do everything up to the first model request and print the plan (files, parts, "
        "settings and where they come from, estimated tokens and cost); asks no model; "
        "--format json=FILE writes the plan as JSON",
    )
    review.add_argument("--transcript", type=Path, help="write every message and tool call here")
    review.add_argument("--quiet", action="store_true", help="no progress on stderr")
    review.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour in the terminal report (default: auto)",
    )
    review.set_defaults(handler=review_command)

    github = commands.add_parser(
        "github",
        help="the GitHub Action's entry: review the pull request and post the results",
        description=(
            "Review the pull request of this GitHub Actions run and post one review and one "
            "summary comment, or answer the comment that triggered it. Reads GITHUB_EVENT_PATH, "
            "GITHUB_REPOSITORY, GITHUB_API_URL and GITHUB_TOKEN, the model settings of "
            "`reviewer review`, and these (the action's inputs): "
            + "; ".join(f"{name}: {what}" for name, what in variables_of("github").items())
            + "."
        ),
    )
    github.set_defaults(handler=github_command)

    gitlab = commands.add_parser(
        "gitlab",
        help="the GitLab CI job's entry: review the merge request and post the results",
        description=(
            "Review the merge request of this GitLab merge request pipeline, post its inline "
            "discussions and one summary note, and answer the questions asked since the last "
            "run. Reads GitLab's predefined CI_* variables, the token in REVIEWER_GITLAB_TOKEN "
            "(or GITLAB_TOKEN), the model settings of `reviewer review`, and these: "
            + "; ".join(f"{name}: {what}" for name, what in variables_of("gitlab").items())
            + ". Without a token, or in a fork's pipeline, it writes the reports and posts "
            "nothing. Exit 0 clean, 1 findings at or above fail-on, 2 not reviewed."
        ),
    )
    gitlab.set_defaults(handler=gitlab_command)

    tool = commands.add_parser(
        "tool",
        help="run one sandboxed tool and print exactly what the model would see",
        description=(
            "Run one sandboxed tool and print exactly what the model would see. "
            "Exit 0 on success, 1 when the tool answered with an error, 2 for bad input to "
            "the command itself (an unknown tool or revision, a folder that is not a "
            "repository)."
        ),
    )
    tool.add_argument("name", help="tool name (see `reviewer tools`)")
    tool.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments")
    _add_revision_options(tool)
    tool.add_argument(
        "--base",
        metavar="REV",
        help="base of the change, as in `reviewer review`: read_file_lines with side LEFT "
        "reads merge-base(REV, the revision read)",
    )
    tool.set_defaults(handler=run_tool_command)

    tools = commands.add_parser(
        "tools",
        help="list the tools and their parameters",
        description="List the tools the model may call, with their parameters.",
    )
    tools.add_argument("--json", action="store_true", help="print the OpenAI `tools` schemas")
    tools.set_defaults(handler=list_tools_command)

    init = commands.add_parser(
        "init",
        help="write a commented .reviewer.toml (and, with --github, the workflow)",
        description=(
            "Write a commented .reviewer.toml at the repository's root: every setting, its "
            "default and what it does, all commented out. With --github, the workflow "
            ".github/workflows/review.yml too (a settings file already there is kept). An "
            "existing file is never overwritten without --force, which overwrites only what "
            "was asked for (with --github, the workflow). Exit 0 when written, 2 when a file "
            "exists or cannot be written."
        ),
    )
    init.add_argument(
        "--repo", type=Path, default=Path("."), help="repository folder (default: current)"
    )
    init.add_argument(
        "--github", action="store_true", help="also write .github/workflows/review.yml"
    )
    init.add_argument(
        "--action",
        metavar="OWNER/REPO@REF",
        help="the action the workflow uses (default: a placeholder to edit)",
    )
    init.add_argument(
        "--force",
        action="store_true",
        help="overwrite the file asked for (with --github, only the workflow)",
    )
    init.set_defaults(handler=init_command)
    add_eval_parser(commands).set_defaults(handler=eval_command)

    stats = commands.add_parser(
        "stats",
        help="how the findings of JSON reports fared: posted, fixed, dismissed, open",
        description=(
            "Read reviewer's JSON reports (of `reviewer github` runs, in order) and print, per "
            "rule and severity, how many findings were posted, fixed, dismissed and are still "
            "open: each finding once, in the state of the last report that names it. Exit 0, "
            "or 2 with one line when a file is not a report."
        ),
    )
    stats.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json")
    stats.set_defaults(handler=stats_command)
    return parser


def _add_revision_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo", type=Path, default=Path("."), help="repository folder (default: current)"
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--rev", default=None, help="commit, branch or tag to read (default: HEAD)")
    source.add_argument(
        "--uncommitted",
        action="store_true",
        help="read the working tree as it is on disk, uncommitted changes included",
    )
