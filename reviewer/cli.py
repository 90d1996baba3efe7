"""Command line: argument parsing, and the one place errors become exit codes.

Heavy modules (pydantic, the HTTP clients) are imported inside the commands, so that
`reviewer --help` and `reviewer --version` start fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from reviewer import __version__
from reviewer.errors import ExitCode, ReviewerError


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

    tool = commands.add_parser(
        "tool",
        help="run one sandboxed tool and print exactly what the model would see",
        description=(
            "Run one sandboxed tool and print exactly what the model would see. "
            "Exit 0 on success, 1 when the tool answered with an error."
        ),
    )
    tool.add_argument("name", help="tool name (see `reviewer tools`)")
    tool.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments")
    _add_revision_options(tool)
    tool.set_defaults(handler=_run_tool_command)

    tools = commands.add_parser(
        "tools",
        help="list the tools and their parameters",
        description="List the tools the model may call, with their parameters.",
    )
    tools.add_argument("--json", action="store_true", help="print the OpenAI `tools` schemas")
    tools.set_defaults(handler=_list_tools_command)
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


def _run_tool_command(args: argparse.Namespace) -> int:
    from reviewer.tools import TOOLS, run_tool
    from reviewer.workspace import open_workspace

    if args.name not in TOOLS:
        raise ReviewerError(
            f"unknown tool '{args.name}'; available: {', '.join(TOOLS)} (see `reviewer tools`)"
        )
    workspace = open_workspace(args.repo, revision=args.rev, uncommitted=args.uncommitted)
    result = run_tool(args.name, args.arguments, workspace)
    _write(result.text)
    return 1 if result.is_error else 0


def _list_tools_command(args: argparse.Namespace) -> int:
    from reviewer.tools import TOOLS, tool_schemas

    if args.json:
        _write(json.dumps(tool_schemas(), indent=2))
        return 0
    for tool in TOOLS.values():
        _write(f"{tool.signature()}\n    {tool.description()}\n")
    return 0


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return int(ExitCode.INCOMPLETE)
    try:
        return int(args.handler(args))
    except ReviewerError as exc:
        print(f"reviewer: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("reviewer: interrupted", file=sys.stderr)
        return int(ExitCode.INCOMPLETE)
    except BrokenPipeError:
        return int(ExitCode.OK)
