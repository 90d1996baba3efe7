"""Error types shared across the program.

`ToolError` is what a sandboxed tool says back to the model; `ReviewerError` is what stops
the program, and carries the exit code the CLI turns it into (the one exit point).
"""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1
    INCOMPLETE = 2


class ReviewerError(Exception):
    """A failure the user must act on; the message is one line that says what to do."""

    exit_code: ExitCode = ExitCode.INCOMPLETE


class ToolError(Exception):
    """A tool call that cannot be answered; the message goes back to the model as text."""
