"""One way in per sink for untrusted text (the pull request, the repository's files and
names, everything the model wrote). Each function makes any text safe for its sink; nothing
reaches a sink any other way (tests/test_sinks.py enumerates them and checks the callers).

| sink | function |
|---|---|
| terminal (reports, progress on a TTY) | `clean_text`, `one_line` |
| values in plain lines on stdout (`reviewer stats`'s table) | `plain_cell` |
| whole reports on stdout (the terminal report) | `inert_lines` |
| log lines (stderr; the Actions runner reads commands there) | `log_line` |
| workflow commands (annotations on stdout) | `command_line` |
| GitHub Markdown (comments, review body, job summary, Markdown report) | `report.mdtext` |
| tool output (what the model reads) | `tools.text.quote_path` |
| model requests (every string of every message; the client's one way out) | `for_model` |
| repository names in reports | `printable` with `data_name` or `shown_name` |

JSON and SARIF reports are written by a JSON encoder, which escapes on its own.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

from reviewer.safety.invisible import show_invisible
from reviewer.safety.shapes import map_strings

# Terminal readers see text, so a control character is shown as a marker. Tab and newline
# stay; a carriage return is a newline (Windows line ends, or an attempt to overwrite the
# start of a line in a terminal).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# The runner reads `##[command]` anywhere in a line (the legacy form) and `::command::` at the
# start of one; a zero-width space breaks either without changing what a person reads.
_LEGACY_COMMAND = "##["
_BREAK = "\u200b"


def clean_text(text: str) -> str:
    """Untrusted text made safe to display: no escapes; no invisible reordering (Trojan
    source, CVE-2021-42574) and nothing hidden: bidirectional controls and invisible
    characters (a zero-width space inside a token, tag characters) are shown as `<U+XXXX>`
    (invisible.py)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return show_invisible(_CONTROL.sub("\ufffd", text))


def one_line(text: str) -> str:
    """Text for a place that holds one line (a title, a table cell): whitespace folded."""
    return " ".join(clean_text(text).split())


def plain_cell(text: str) -> str:
    """A value printed inside a line of plain output (a table cell), wherever it lands in
    that line: one line, secrets redacted, controls visible, and neither of the runner's
    command forms (`::` is broken too: a cell may start the line). The breaks are zero-width
    spaces: align cells by `shown_width`."""
    text = one_line(_redacted(text)).replace(_LEGACY_COMMAND, f"##{_BREAK}[")
    return text.replace("::", f":{_BREAK}:")


def inert_lines(text: str) -> str:
    """Lines printed to stdout where a CI runner reads commands (the terminal report under
    Actions): a line that starts with `::` after its indentation, or holds `##[`, gets a
    zero-width space inside the form, so the runner shows it instead of obeying it."""
    lines = []
    for line in text.splitlines(keepends=True):  # every line break a reader may split at
        body = line.lstrip()
        if body.startswith("::"):
            line = line[: len(line) - len(body)] + f":{_BREAK}" + body[1:]
        lines.append(line.replace(_LEGACY_COMMAND, f"##{_BREAK}["))
    return "".join(lines)


def shown_width(text: str) -> int:
    """How many columns a sink's output takes: the breaks it adds take none."""
    return len(text) - text.count(_BREAK)


def log_line(text: str) -> str:
    """One line of the log, prefixed `reviewer: `: the runner finds no command in it, and a
    newline or carriage return in `text` is shown as `\\n`, never obeyed. Secrets are
    redacted: a log line can carry a server's error text, which may echo a key."""
    text = clean_text(_redacted(text)).replace("\n", "\\n").replace("\t", " ")
    return "reviewer: " + text.replace(_LEGACY_COMMAND, f"##{_BREAK}[")


def log(message: str) -> None:
    """One line on stderr that the runner reads no command from (log_line)."""
    print(log_line(message), file=sys.stderr, flush=True)


def command_line(command: str, message: str, **properties: str | int | None) -> str:
    """A workflow command (`::error file=...::message`), its message and properties escaped
    as actions/toolkit escapes them, after secrets are redacted and control and bidi
    characters are made visible."""
    props = ",".join(
        f"{key}={_escape_property(_visible(str(value)))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{command}{' ' + props if props else ''}::{_escape_data(_visible(message))}"


def _visible(text: str) -> str:
    return clean_text(_redacted(text)).replace(_LEGACY_COMMAND, f"##{_BREAK}[")


def _redacted(text: str) -> str:
    """`text` without the secrets of the run's environment and well-known secret formats:
    every line the program writes to the log or the runner passes here, whatever flow wrote
    it (a review, an answer, a dry run, an error), so no caller can forget to."""
    # Imported here: the redactor's tables are loaded only when a line is written.
    from reviewer.safety.redact import environment_redactor

    return environment_redactor()(text)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# --- repository names in reports: NAME_FIELDS (shapes.py) says which fields hold one.


def data_name(name: str) -> str:
    """A repository name for a machine-read report: exact when it is valid Unicode."""
    if name.isascii():
        return name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return shown_name(name)
    return name


def shown_name(name: str) -> str:
    """A repository name for a person: quoted as git quotes names when anything in it would
    not read as what it is (quote_path, the tool-output rule)."""
    # Imported here: the workspace package is not needed by the commands that only log
    # (`reviewer --version` starts without it).
    from reviewer.workspace.paths import quote_path

    return quote_path(name)


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """Text any encoder takes: a lone surrogate (from a name's bad bytes or a model's JSON
    escape) becomes U+FFFD, visibly."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text) if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def for_model(value: Any) -> Any:
    """A model request (its messages, tools and settings) with every string valid UTF-8, the
    shape kept: the one way a request leaves (reviewer/llm/client.py). The producers quote
    every repository name as git does (quote_path), so the model reads one spelling of a
    name everywhere; what none of them could quote (a model's own lone surrogate escape,
    sent back in its message) becomes U+FFFD here, never a request that cannot be sent."""
    return map_strings(value, valid_text)


def printable(value: Any, name: Callable[[str], str] = data_name) -> Any:
    """`value` with every repository name (a field in NAME_FIELDS) passed through `name`,
    and every other string made valid_text: a report that is data (JSON), kept exact."""
    return map_strings(value, valid_text, name)


def displayed(value: Any, name: Callable[[str], str] = data_name) -> Any:
    """As printable, for a format another tool shows to people (SARIF in code scanning,
    rdjson posted by reviewdog, Code Quality in GitLab's widget): every other string also
    has its invisible characters shown as `<U+XXXX>` (Trojan source), as in our own sinks."""
    return map_strings(value, lambda text: show_invisible(valid_text(text)), name)
