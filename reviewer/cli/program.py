"""Command line: argument parsing, and the one place errors become exit codes.

Heavy modules (pydantic, the HTTP clients) are imported inside the commands, so that
`reviewer --help` and `reviewer --version` start fast.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

from reviewer import __version__
from reviewer.errors import ExitCode, ReviewerError
from reviewer.eval.arguments import add_eval_parser
from reviewer.safety.sinks import log
from reviewer.settings.variables import DEBUG_VARIABLE, variables_of

if TYPE_CHECKING:  # heavy: imported where a command runs
    from reviewer.review.pipeline import ReviewRequest
    from reviewer.review.progress import Progress

T = TypeVar("T")


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
            "file for the format given in the same position ('-' for stdout); without "
            "--format, the file's name says the format (.json, .sarif, .md, .rdjson, .txt)"
        ),
    )
    review.add_argument(
        "--fail-on",
        choices=["critical", "high", "medium", "low", "info", "none"],
        help="exit 1 when a finding is at or above this severity (default: none)",
    )
    review.add_argument("--model", help="model name (or REVIEWER_MODEL)")
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
    review.set_defaults(handler=_review_command)

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
    github.set_defaults(handler=_github_command)

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
    tool.set_defaults(handler=_run_tool_command)

    tools = commands.add_parser(
        "tools",
        help="list the tools and their parameters",
        description="List the tools the model may call, with their parameters.",
    )
    tools.add_argument("--json", action="store_true", help="print the OpenAI `tools` schemas")
    tools.set_defaults(handler=_list_tools_command)

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
    init.set_defaults(handler=_init_command)
    add_eval_parser(commands).set_defaults(handler=_eval_command)

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
    stats.set_defaults(handler=_stats_command)
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


def _review_command(args: argparse.Namespace) -> int:
    from reviewer.report import check_writable, write_report, write_transcript
    from reviewer.review.pipeline import run_review

    outputs = _report_outputs(args.format or [], args.output or [])
    if args.dry_run:
        return _dry_run(args, outputs)
    # Every file is checked before the model is asked: a bad path must not cost tokens.
    for _format, path in outputs:
        check_writable(path, "report")
    if args.transcript:
        check_writable(args.transcript, "transcript")
    request = _review_request(args, keep_transcript=args.transcript is not None)
    review = _with_progress(args.quiet, lambda events: run_review(request, events=events))
    result = review.result
    # no-color.org: a non-empty NO_COLOR turns colour off unless asked for explicitly.
    color = args.color == "always" or (
        args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    )
    for report_format, path in outputs:
        to_stdout = path == "-"
        width = shutil.get_terminal_size().columns if to_stdout and sys.stdout.isatty() else 100
        write_report(
            result,
            report_format,
            path,
            color=color and to_stdout,
            width=width,
            path_prefix=_repo_from_here(args.repo) if to_stdout else "",
        )
    if args.transcript:
        write_transcript(review.transcript, args.transcript)
    if not result.complete:
        log(f"error: review incomplete: {result.incomplete_reason}")
        return int(ExitCode.INCOMPLETE)
    failing = [f for f in result.findings if review.settings.fails(f.severity)]
    if failing:
        level = review.settings.fail_on
        noun = "finding is" if len(failing) == 1 else "findings are"
        log(f"{len(failing)} {noun} at or above --fail-on {level}: exit 1")
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)


def _review_request(args: argparse.Namespace, *, keep_transcript: bool) -> ReviewRequest:
    """What `reviewer review` asks for, from its options: a review or its dry run."""
    from reviewer.review.pipeline import ReviewRequest

    return ReviewRequest(
        repo=args.repo,
        base=args.base,
        head=args.head,
        uncommitted=args.uncommitted,
        flags={"model": args.model, "fail_on": args.fail_on},
        config_path=args.config,
        keep_transcript=keep_transcript,
    )


def _with_progress(quiet: bool, work: Callable[[Progress], T]) -> T:
    """`work` with the progress line on stderr; its clock stops when the work does."""
    from reviewer.review.progress import Progress

    progress = Progress(enabled=not quiet)
    try:
        return work(progress)
    finally:
        progress.done()


def _dry_run(args: argparse.Namespace, outputs: list[tuple[str, str]]) -> int:
    """The plan of the review, in the terminal and (with --format json=FILE) as JSON."""
    from reviewer.report import check_writable, write_text
    from reviewer.report.plan import render_plan_json, render_plan_text
    from reviewer.review.dryrun import plan_review

    renderers = {"terminal": render_plan_text, "json": render_plan_json}
    for report_format, path in outputs:
        if report_format not in renderers:
            raise ReviewerError(
                f"--dry-run writes its plan as terminal or json, not {report_format}"
            )
        check_writable(path, "plan")
    request = _review_request(args, keep_transcript=False)
    plan = _with_progress(args.quiet, lambda events: plan_review(request, events=events))
    if not any(path == "-" for _format, path in outputs):
        outputs = [*outputs, ("terminal", "-")]
    for report_format, path in outputs:
        write_text(renderers[report_format](plan), path)
    return int(ExitCode.OK)


def _repo_from_here(repo: Path) -> str:
    """The repository's root as seen from the current folder ('' when it is the current
    folder): paths in the terminal report are relative to the root."""
    from reviewer.workspace import repository_root

    root = repository_root(repo)
    try:
        relative = os.path.relpath(root, Path.cwd())
    except ValueError:  # another drive
        return str(root)
    return "" if relative == "." else Path(relative).as_posix()


def _github_command(args: argparse.Namespace) -> int:
    from reviewer.github.run import run_github

    return run_github()


def _report_outputs(formats: list[str], outputs: list[str]) -> list[tuple[str, str]]:
    """Pair each --format with its file: `FORMAT=FILE`, else the --output at its position."""
    from reviewer.report import FORMATS

    if len(outputs) > max(len(formats), 1):
        raise ReviewerError("more --output than --format options; give one --format per file")
    pairs = []
    for index, item in enumerate(formats or [_format_of(outputs[0] if outputs else "-")]):
        name, _, path = item.partition("=")
        if not path:
            path = outputs[index] if index < len(outputs) else "-"
        if name not in FORMATS:
            raise ReviewerError(f"unknown --format '{name}'; choose from {', '.join(FORMATS)}")
        pairs.append((name, path))
    if sum(1 for _, path in pairs if path == "-") > 1:
        raise ReviewerError("only one report can go to stdout; give the others a file")
    return pairs


# `--output FILE` without `--format`: the report its name says (`a.json` is never terminal text).
_FORMAT_OF_SUFFIX = {
    ".json": "json",
    ".sarif": "sarif",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rdjson": "rdjson",
    ".txt": "terminal",
    ".log": "terminal",
}


def _format_of(output: str) -> str:
    if output == "-":
        return "terminal"
    suffix = Path(output).suffix.lower()
    if suffix not in _FORMAT_OF_SUFFIX:
        raise ReviewerError(
            f"--output {output}: say which report it is with --format (e.g. --format json "
            f"--output {output}); without one, the name must end in "
            f"{', '.join(_FORMAT_OF_SUFFIX)}"
        )
    return _FORMAT_OF_SUFFIX[suffix]


def _run_tool_command(args: argparse.Namespace) -> int:
    from reviewer.tools import TOOLS, run_tool
    from reviewer.workspace import open_workspace

    if args.name not in TOOLS:
        # Only here: the submission module (and the diff it checks against) is not loaded
        # for a tool that runs.
        from reviewer.review.submission import SUBMIT_REVIEW

        if args.name == SUBMIT_REVIEW:
            raise ReviewerError(
                f"{SUBMIT_REVIEW} is the model's final answer, not a tool to run; "
                "`reviewer tools` shows its fields"
            )
        raise ReviewerError(
            f"unknown tool '{args.name}'; available: {', '.join(TOOLS)} (see `reviewer tools`)"
        )
    workspace = open_workspace(args.repo, revision=args.rev, uncommitted=args.uncommitted)
    if args.base is not None:
        # The base a review would give its tools: the merge base, with HEAD for the disk.
        from reviewer.change import merge_base
        from reviewer.workspace import RevisionWorkspace

        base_point = merge_base(workspace.root, args.base, args.rev or "HEAD")
        workspace.base = RevisionWorkspace(workspace.root, base_point)
    result = run_tool(args.name, args.arguments, workspace)
    _write(result.text)
    return 1 if result.is_error else 0


def _list_tools_command(args: argparse.Namespace) -> int:
    from reviewer.review.submission import offered_tools, submit_review_listing
    from reviewer.tools import TOOLS

    if args.json:
        _write(json.dumps(offered_tools(), indent=2))
        return 0
    for tool in TOOLS.values():
        _write(f"{tool.signature()}\n    {tool.description()}\n")
    _write(submit_review_listing())
    return 0


def _init_command(args: argparse.Namespace) -> int:
    from reviewer.cli.init import write_init
    from reviewer.workspace import repository_root

    root = repository_root(args.repo)
    for written in write_init(root, github=args.github, force=args.force, action=args.action):
        if written.kept:
            log(f"{written.path}: {written.note}")
            continue
        log(f"wrote {written.path}")
        if written.note:
            log(f"next: {written.note}")
    return int(ExitCode.OK)


def _eval_command(args: argparse.Namespace) -> int:
    from reviewer.eval.command import compare_text, eval_command

    if args.compare:
        _write(compare_text(*args.compare))
        return int(ExitCode.OK)
    if args.jobs < 1 or (args.limit is not None and args.limit < 0):
        raise ReviewerError("--jobs is at least 1 and --limit at least 0")
    return eval_command(args)


def _stats_command(args: argparse.Namespace) -> int:
    from reviewer.report.stats import read_states, stats_table

    _write(stats_table(read_states(args.reports)))
    return int(ExitCode.OK)


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return int(ExitCode.INCOMPLETE)
    try:
        _refuse_nul(args)
        return int(args.handler(args))
    except ReviewerError as exc:
        log(f"error: {exc}")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        log("interrupted")
        return int(ExitCode.INCOMPLETE)
    except BrokenPipeError:
        return int(ExitCode.OK)
    except Exception as exc:
        # A defect, not bad input; still exit 2 (could not complete), because exit 1 means
        # "findings" to a gate and Python's own exit for an uncaught error is 1.
        from reviewer.safety.redact import environment_redactor

        said = environment_redactor()(str(exc)).strip().splitlines()
        log(
            f"error: unexpected {type(exc).__name__}: {said[0][:300] if said else ''} "
            f"(a defect in reviewer; {DEBUG_VARIABLE}=1 shows the traceback)"
        )
        if os.environ.get(DEBUG_VARIABLE):
            traceback.print_exc()
        return int(ExitCode.INCOMPLETE)


def _refuse_nul(args: argparse.Namespace) -> None:
    """A NUL byte cannot be in a path, revision or name (the OS refuses it with a ValueError
    deep inside); said in one line naming the option."""
    for name, value in vars(args).items():
        values = value if isinstance(value, list | tuple) else [value]
        if any(isinstance(item, str | Path) and "\0" in str(item) for item in values):
            option = "--" + name.replace("_", "-")
            raise ReviewerError(f"{option} holds a NUL byte, which no path, revision or name can")
