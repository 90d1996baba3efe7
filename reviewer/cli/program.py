"""The command line's program: `main`, the one place errors become exit codes.

The parser is `reviewer.cli.parser`, the commands `reviewer.cli.commands`.
"""

from __future__ import annotations

import argparse
import os
import traceback
from collections.abc import Sequence
from pathlib import Path

from reviewer.cli.parser import build_parser
from reviewer.errors import ExitCode, ReviewerError, unexpected_error_line
from reviewer.safety.sinks import log
from reviewer.settings.variables import DEBUG_VARIABLE


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
        log(f"error: {unexpected_error_line(exc)}")
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
