"""Reporters: one module per output format, all fed the same `ReviewResult`.

Each format is a pure function `render_<format>(result, **options) -> str`; `write_report` is
the one place a report reaches a file (or stdout). Options a format does not take are ignored
by `render`/`write_report`, so a caller can pass one set (say `color=`) to every format.
"""

from __future__ import annotations

import inspect
import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewerError
from reviewer.findings import ReviewResult
from reviewer.report.codequality import render_codequality
from reviewer.report.json_report import parse_json, render_json
from reviewer.report.json_schema import report_schema
from reviewer.report.markdown import render_markdown
from reviewer.report.mdtext import fence, inline_code, neutralize
from reviewer.report.rdjson import render_rdjson
from reviewer.report.sarif import render_sarif
from reviewer.report.terminal import render_terminal
from reviewer.safety.redact import Redactor, redact_values
from reviewer.safety.sinks import printable

Renderer = Callable[..., str]

FORMATS: dict[str, Renderer] = {
    "terminal": render_terminal,
    "markdown": render_markdown,
    "json": render_json,
    "sarif": render_sarif,
    "rdjson": render_rdjson,
    "codequality": render_codequality,
}

# The usual file name ending of each format, for callers that pick file names.
EXTENSIONS = {
    "terminal": ".txt",
    "markdown": ".md",
    "json": ".json",
    "sarif": ".sarif",
    "rdjson": ".rdjson",
    "codequality": ".codequality.json",
}


def render(result: ReviewResult, format: str, **options: Any) -> str:
    """The report in `format`; options that format does not take are left out."""
    renderer = FORMATS.get(format)
    if renderer is None:
        raise ReviewerError(f"unknown report format '{format}'; choose from {', '.join(FORMATS)}")
    accepted = _options_of(renderer)
    # Every report is redacted here, its one way out: a secret from a file of the change can
    # sit in a code excerpt, a path or the model's words. Enum members are not strings.
    # Formats that decode text (Markdown's character references and escapes) redact again
    # what they decoded: they take the same redactor.
    redactor = Redactor()
    safe = redact_values(result, redactor)
    options = {k: v for k, v in options.items() if k in accepted}
    if "redact" in accepted:
        options.setdefault("redact", redactor)
    return renderer(safe, **options)


def write_report(result: ReviewResult, format: str, path: str | Path, **options: Any) -> None:
    """Render `format` and write it to `path` (`-` for stdout), creating folders as needed."""
    write_text(render(result, format, **options), path)


def write_transcript(transcript: Iterable[Mapping[str, Any]], path: str | Path) -> None:
    """The agent's messages and tool calls, one JSON object a line (JSON Lines)."""
    redact = Redactor()
    lines = (
        json.dumps(
            printable(redact_values(dict(entry), redact)), ensure_ascii=False, sort_keys=True
        )
        for entry in transcript
    )
    write_text("".join(line + "\n" for line in lines), path, what="transcript")


# What a path that is not a regular file is, for the error that refuses it.
_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_writable(path: str | Path, what: str = "report") -> None:
    """A one-line error, before any work is done, when `write_text` could not write `path`:
    `what` (report, transcript) names the file in it. Missing folders are fine (they are
    created) as long as the nearest existing one is a writable folder."""
    if str(path) == "-":
        return
    target = Path(path)

    def refuse(reason: str) -> ReviewerError:
        return ReviewerError(f"cannot write the {what} to {target}: {reason}")

    try:
        mode: int | None = target.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:
        raise refuse(f"{exc.strerror or exc}") from exc
    if mode is not None and stat.S_ISDIR(mode):
        raise refuse("it is a directory; give the path of a file (in it, or elsewhere)")
    kind = next((name for test, name in _SPECIAL_FILES if mode is not None and test(mode)), None)
    if kind:
        # It would be replaced by a regular file (see write_text), not written into.
        raise refuse(f"it is {kind}, not a regular file; give a file path, or - for stdout")
    folder = existing = target.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise refuse(f"{existing} is a file, not a directory; choose a path in a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        created = "" if existing == folder else f"the directory {folder} cannot be created: "
        raise refuse(f"{created}{existing} is not writable; choose a directory you can write to")


def write_text(text: str, path: str | Path, *, what: str = "report") -> None:
    """Write `text` as UTF-8 to `path`, or to stdout for `-`; `what` names it in errors.

    A file is replaced in one step (written beside it, then renamed), so a reader such as a CI
    upload step never sees half a report.
    """
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
                out.write(text)
            # mkstemp makes the file private (0600); a report is meant to be read by others.
            os.chmod(temp, 0o644)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ReviewerError(f"cannot write the {what} to {target}: {exc.strerror or exc}") from exc


@cache
def _options_of(renderer: Renderer) -> frozenset[str]:
    parameters = inspect.signature(renderer).parameters.values()
    return frozenset(p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY)


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "check_writable",
    "fence",
    "inline_code",
    "neutralize",
    "parse_json",
    "render",
    "render_codequality",
    "render_json",
    "render_markdown",
    "render_rdjson",
    "render_sarif",
    "render_terminal",
    "report_schema",
    "write_report",
    "write_text",
    "write_transcript",
]
