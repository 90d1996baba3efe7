"""The seven read-only tools the model investigates with, and the one way to run them.

`run_tool` never raises: bad JSON, bad arguments, refused paths and internal failures all
come back as a one-line `Error: ...` the model can act on. Every result passes through the
redactor and a size cap before anyone sees it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import ValidationError

from reviewer.errors import ReviewerError, ToolError
from reviewer.safety.model_json import UnreadableJSON, check_depth, read_json
from reviewer.safety.redact import Redactor
from reviewer.safety.sinks import valid_text
from reviewer.tools.base import Tool
from reviewer.tools.files import GetFileStructure, ListFiles, ReadFile, ReadFileLines
from reviewer.tools.git import GetGitBlame, GetGitLog
from reviewer.tools.search import SearchText
from reviewer.tools.text import quote_path, visible
from reviewer.workspace import Workspace

TOOLS: dict[str, type[Tool]] = {
    tool.name: tool
    for tool in (
        ReadFile,
        ReadFileLines,
        ListFiles,
        SearchText,
        GetFileStructure,
        GetGitBlame,
        GetGitLog,
    )
}

# The last line of defence: no single tool result may be larger than this.
MAX_RESULT_CHARS = 60_000


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool


def tool_schemas() -> list[dict[str, Any]]:
    """The `tools` list for an OpenAI chat completion request (a new list; the schemas
    inside are built once per process, and nobody edits them)."""
    return list(_schemas())


@cache
def _schemas() -> tuple[dict[str, Any], ...]:
    # pydantic builds a JSON schema in about 2 ms: for every loop of a 200-part review, the
    # same eight schemas would cost more than the review's own work.
    return tuple(tool.openai_schema() for tool in TOOLS.values())


def parse_arguments(raw: object) -> dict[str, Any]:
    """Tool arguments as sent by a model: a JSON object string, an object, or nothing. Read
    within bounds (safety/model_json.py): nested too deep, a number too long or a key given
    twice is a ToolError the model gets back, like JSON that is not JSON."""
    if raw is None or raw == "":
        return {}
    try:
        value = read_json(raw) if isinstance(raw, str) else raw
        check_depth(value)  # an object sent by the server was read by the client, unbounded
    except UnreadableJSON as exc:
        raise ToolError(f"{exc}.") from exc
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"arguments are not valid JSON ({exc.msg} at character {exc.pos}); "
            'send an object such as {"path": "src/app.py"}.'
        ) from exc
    if isinstance(raw, str) and isinstance(value, str):  # double-encoded, from some servers
        return parse_arguments(value)
    if isinstance(value, dict):
        return value
    raise ToolError("arguments must be a JSON object.")


def run_tool(
    name: str, arguments: object, workspace: Workspace, redactor: Redactor | None = None
) -> ToolResult:
    redact = redactor or Redactor()
    try:
        text = _run(name, arguments, workspace)
        is_error = False
    except ToolError as exc:
        text, is_error = f"Error: {_one_line(str(exc))}", True
    except ReviewerError as exc:
        text, is_error = f"Error: {_one_line(' '.join(str(exc).split()))}", True
    except Exception as exc:  # a tool must never take the review down
        shown = quote_path(str(name))
        text, is_error = f"Error: {shown} failed unexpectedly ({type(exc).__name__}).", True
    # Names are quoted where they are printed; a stray lone surrogate is shown as U+FFFD.
    text = valid_text(redact(text))
    if len(text) > MAX_RESULT_CHARS:
        text = (
            text[:MAX_RESULT_CHARS]
            + f"\n\n[Output cut at {MAX_RESULT_CHARS:,} characters; ask for less at a time.]"
        )
    return ToolResult(text, is_error)


def _one_line(message: str) -> str:
    """An error as one line. Ours are built so (names quoted, the model's paths echoed only
    once checked); the words of git or of the regex engine are not ours, and a control
    character left in any message is shown as a symbol, not obeyed."""
    if any((char < " " and char != "\t") or "\x7f" <= char <= "\x9f" for char in message):
        return visible(message)
    return message


def _run(name: str, arguments: object, workspace: Workspace) -> str:
    tool_class = TOOLS.get(name)
    if tool_class is None:
        # The name is the model's, echoed: quoted like a file name, so it stays one line.
        raise ToolError(
            f"unknown tool '{quote_path(str(name))}'. Available tools: {', '.join(TOOLS)}."
        )
    args = parse_arguments(arguments)
    try:
        tool = tool_class.model_validate(args)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ToolError(
            f"invalid arguments for {name}: {problems}. Expected {tool_class.signature()}."
        ) from exc
    output = tool.run(workspace)
    ignored = sorted(set(args) - tool_class.accepted_keys())
    if ignored:
        shown = ", ".join(quote_path(key) for key in ignored)
        output = f"[Ignored unknown argument(s): {shown}.]\n" + output
    return output
