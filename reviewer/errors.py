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


def json_problem(exc: BaseException) -> str:
    """Why a JSON document could not be read, in a few words. Python's reader recurses once
    per level, so a document nested past the recursion limit raises RecursionError (not the
    ValueError of other bad JSON); a number past int's digit limit raises a plain ValueError."""
    if isinstance(exc, RecursionError):
        return "nested too deep"
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def unexpected_error_line(exc: BaseException) -> str:
    """The one line that says an exception nobody expected (a defect, not bad input) ended the
    run, its text redacted: what the log and every not-reviewed summary say."""
    from reviewer.safety.redact import environment_redactor
    from reviewer.settings.variables import DEBUG_VARIABLE

    said = environment_redactor()(str(exc)).strip().splitlines()
    return (
        f"unexpected {type(exc).__name__}: {said[0][:300] if said else ''} "
        f"(a defect in reviewer; {DEBUG_VARIABLE}=1 shows the traceback)"
    )
