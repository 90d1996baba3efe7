"""The commands of the command line, one handler each: options in, an exit code out (errors
are raised as ReviewerError, made an exit code by `reviewer.cli.program.main`).

Heavy modules (pydantic, the HTTP clients) are imported inside the commands, so that
`reviewer --help` and `reviewer --version` start fast.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from reviewer.errors import ExitCode, ReviewerError
from reviewer.safety.sinks import log

if TYPE_CHECKING:  # heavy: imported where a command runs
    from reviewer.review.prepare import ReviewRequest
    from reviewer.review.progress import Progress

T = TypeVar("T")


def review_command(args: argparse.Namespace) -> int:
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
    from reviewer.cli.sites import local_sites
    from reviewer.context.tickets.model import TicketRequest
    from reviewer.review.prepare import ReviewRequest

    return ReviewRequest(
        repo=args.repo,
        base=args.base,
        head=args.head,
        uncommitted=args.uncommitted,
        flags={"model": args.model, "fail_on": args.fail_on},
        config_path=args.config,
        keep_transcript=keep_transcript,
        tickets=TicketRequest(named=tuple(args.ticket), sites=local_sites(os.environ)),
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


def github_command(args: argparse.Namespace) -> int:
    from reviewer.github.run import run_github

    return run_github()


def gitlab_command(args: argparse.Namespace) -> int:
    from reviewer.gitlab.run import run_gitlab

    return run_gitlab()


def _report_outputs(formats: list[str], outputs: list[str]) -> list[tuple[str, str]]:
    """Pair each --format with its file: `FORMAT=FILE`, else the --output at its position; an
    --output with no --format at its position is the report its name says (docs/review.md)."""
    from reviewer.report import FORMATS

    pairs = []
    for index in range(max(len(formats), len(outputs), 1)):
        output = outputs[index] if index < len(outputs) else None
        if index >= len(formats):
            pairs.append((_format_of(output or "-"), output or "-"))
            continue
        name, named, path = formats[index].partition("=")
        if named and output is not None:
            raise ReviewerError(
                f"--format {formats[index]} names its file and --output {output} is in the same "
                f"position; give one of them (--format {name} --output {output}, or "
                f"--format {formats[index]} alone)"
            )
        pairs.append((name, path or output or "-"))
    for name, _ in pairs:
        if name not in FORMATS:
            raise ReviewerError(f"unknown --format '{name}'; choose from {', '.join(FORMATS)}")
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


def run_tool_command(args: argparse.Namespace) -> int:
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


def list_tools_command(args: argparse.Namespace) -> int:
    from reviewer.review.submission import review_tools, submit_review_listing
    from reviewer.tools import TOOLS

    if args.json:
        _write(json.dumps(review_tools(), indent=2))
        return 0
    for tool in TOOLS.values():
        _write(f"{tool.signature()}\n    {tool.description()}\n")
    _write(submit_review_listing())
    return 0


def init_command(args: argparse.Namespace) -> int:
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


def eval_command(args: argparse.Namespace) -> int:
    from reviewer.eval.command import compare_text, eval_command

    if args.compare:
        _write(compare_text(*args.compare))
        return int(ExitCode.OK)
    if args.jobs < 1 or (args.limit is not None and args.limit < 0):
        raise ReviewerError("--jobs is at least 1 and --limit at least 0")
    return eval_command(args)


def stats_command(args: argparse.Namespace) -> int:
    from reviewer.report.learning_stats import learnings_table
    from reviewer.report.stats import read_reports, states_of, stats_table

    reports = read_reports(args.reports)
    _write(stats_table(states_of(reports)))
    learned = learnings_table(reports)
    if learned:
        _write("\n" + learned)
    return int(ExitCode.OK)


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")

