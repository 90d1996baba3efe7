"""Tool calls a model wrote as text instead of as calls, read back as calls: the one place that
reads text as calls, with one rule.

The rule: a reply is a call written as text only when the whole reply is that call: one JSON
value, or the blocks of one tagged format below, bare or in one code fence, with nothing else
but whitespace. Prose that holds a call (quoted in a code block or in inline code, before or
after a sentence, an unclosed tag) is prose: the text of a file under review, quoted by the
model, must never end a review, refute a finding or write an answer (issue 32). Only calls of
the tools the loop offers are read, and a call read from text is checked exactly like a real
one. A reply that is wholly a call but cannot be read (nested too deep, a number too long, a
key given twice: safety/model_json.py) says why, and the model is told (loop/steering.py).

Formats (the table `_FORMATS`), each with where it was seen:
- Hermes / Qwen2.5 tags, `<tool_call>{"name": N, "arguments": {...}}</tool_call>`, one block
  per call: vLLM without a tool parser, Ollama.
- Qwen3-Coder XML, `<function=N><parameter=P>v</parameter></function>`, alone or inside
  `<tool_call>`: vLLM without its qwen3_coder parser.
- Llama 4 pythonic, `<|python_start|>[N(p="v")]<|python_end|>`: vLLM without its
  llama4_pythonic parser.
- Mistral, `[TOOL_CALLS][{"name": N, "arguments": {...}}]`: vLLM, Ollama.
- Llama 3.1, `<|python_tag|>{"name": N, "parameters": {...}}`: vLLM, Ollama.
- A name/arguments wrapper, `{"name": N, "arguments": {...}}`: llama.cpp `llama-server
  --jinja` with Qwen2.5-Coder-1.5B-Instruct Q4_K_M, asked with tool_choice "required"
  (issue 24).
- A function wrapper, `{"function": {"name": N, "arguments": ...}}` or `{"function": N,
  "arguments": ...}`: OpenAI's tool-call shape, written out as text.
- The final tool's own arguments, `{"summary": ..., "findings": [...]}`: llama.cpp
  `llama-server --jinja` with Qwen2.5-Coder-1.5B-Instruct Q4_K_M, asked without tool_choice
  (issue 24), and every structured answer (loop/structured_answer.py).

The last closing tag of a reply may be missing (a server that stops at it): what the block
holds must then be read to its end, so nothing can hide after it.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reviewer.safety.model_json import (
    UnreadableJSON,
    check_depth,
    read_json,
    read_json_prefix,
    repeated_key,
)

Found = list[tuple[str, str | dict[str, Any]]]


@dataclass(frozen=True)
class FinalShape:
    """The loop's final tool, recognised by its required fields when the model writes its
    arguments alone (`{"summary": ..., "findings": [...]}` for submit_review)."""

    name: str
    required: frozenset[str]

    @classmethod
    def of(cls, name: str | None, tools: list[dict[str, Any]]) -> FinalShape | None:
        """The shape of the tool `name` among the `tools` a request offers."""
        for tool in tools:
            function = tool.get("function") or {}
            if name and function.get("name") == name:
                required = (function.get("parameters") or {}).get("required") or ()
                return cls(name, frozenset(required)) if required else None
        return None


@dataclass(frozen=True)
class TextCalls:
    """What a reply's text comes to: the calls it is, none (prose), or why a reply that is
    wholly a call could not be read (`problem`, said to the model)."""

    calls: Found = field(default_factory=list)
    problem: str = ""


class _NotACall(Exception):
    """The text is not wholly a call in this format: prose."""


# A reply longer than this is not read as a call (a call's arguments are a few KB).
_MAX_CALL_TEXT = 1_000_000
# One code fence that is the whole text: ```json ... ``` (any info word, or none).
_ONE_FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL)
_TOOL_CALL = ("<tool_call>", "</tool_call>")
_PYTHON = ("<|python_start|>", "<|python_end|>")
_XML_FUNCTION = re.compile(r"<function=([^>\s]{1,200})>")
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]{1,200})>")
_XML_END = ("</function>", "</parameter>")
_SPACE = re.compile(r"\s*")


def calls_in_text(
    content: str, tool_names: frozenset[str] | None, final: FinalShape | None = None
) -> TextCalls:
    """The calls `content` is, when it is wholly calls in a known format; with `tool_names`,
    only calls of known tools."""
    text = _unfenced(content.strip()) if len(content) <= _MAX_CALL_TEXT else ""
    reader = next((read for opener, read in _FORMATS if text.startswith(opener)), None)
    if reader is None:
        return TextCalls()
    try:
        found = reader(text, final)
    except UnreadableJSON as problem:
        return TextCalls(problem=str(problem))
    except (_NotACall, json.JSONDecodeError):
        return TextCalls()
    return TextCalls([call for call in found if tool_names is None or call[0] in tool_names])


def _unfenced(text: str) -> str:
    """The text inside one code fence that is the whole text; else the text as it is."""
    if not text.startswith("```"):
        return text
    fence = _ONE_FENCE.fullmatch(text)
    if fence is None or "```" in fence.group(1):
        return ""
    return fence.group(1).strip()


# --- the formats -------------------------------------------------------------------------------


def _tool_call_blocks(text: str, final: FinalShape | None) -> Found:
    """`<tool_call>...</tool_call>` blocks, one after the other, each a JSON wrapper or
    Qwen3-Coder's XML functions."""
    opener, closer = _TOOL_CALL
    calls: Found = []
    position = 0
    while position < len(text):
        if not text.startswith(opener, position):
            raise _NotACall
        position = _skip_space(text, position + len(opener))
        if text.startswith("<function=", position):
            found, position = _xml_functions(text, position)
        else:
            data, position = read_json_prefix(text, position)
            found = _wrapped_calls(data)
        if not found:
            raise _NotACall
        calls += found
        position = _skip_space(text, position)
        if text.startswith(closer, position):
            position = _skip_space(text, position + len(closer))
        elif position < len(text):
            raise _NotACall
    return calls


def _xml_reply(text: str, final: FinalShape | None) -> Found:
    """Qwen3-Coder's XML functions, the whole reply."""
    calls, position = _xml_functions(text, 0)
    if position < len(text):
        raise _NotACall
    return calls


def _xml_functions(text: str, position: int) -> tuple[Found, int]:
    """`<function=N><parameter=P>v</parameter>...</function>` blocks from `position`, every
    tag closed (an unclosed one would swallow whatever follows it), and where they end."""
    calls: Found = []
    end_function, end_parameter = _XML_END
    while (function := _XML_FUNCTION.match(text, position)) is not None:
        arguments: dict[str, Any] = {}
        position = _skip_space(text, function.end())
        while not text.startswith(end_function, position):
            parameter = _XML_PARAMETER.match(text, position)
            close = text.find(end_parameter, parameter.end()) if parameter else -1
            if parameter is None or close < 0:
                raise _NotACall
            name = parameter.group(1)
            if name in arguments:
                raise UnreadableJSON(repeated_key(name))
            arguments[name] = _xml_value(text[parameter.end() : close])
            position = _skip_space(text, close + len(end_parameter))
        calls.append((function.group(1), arguments))
        position = _skip_space(text, position + len(end_function))
    if not calls:
        raise _NotACall
    return calls, position


def _xml_value(raw: str) -> Any:
    """A parameter's value: as vLLM does for typed parameters, numbers, booleans, lists and
    objects are JSON; anything else is the text."""
    value = raw.removeprefix("\n").removesuffix("\n")
    try:
        decoded = read_json(value)
    except json.JSONDecodeError:
        return value
    return value if isinstance(decoded, str) else decoded


def _python_block(text: str, final: FinalShape | None) -> Found:
    """`<|python_start|>[...]<|python_end|>`: JSON wrappers, or calls written as Python."""
    opener, closer = _PYTHON
    body = text[len(opener) :]
    end = body.find(closer)
    if end >= 0:
        if body[end + len(closer) :].strip():
            raise _NotACall
        body = body[:end]
    body = body.strip()
    try:
        return _wrapped_calls(read_json(body)) or _no_call()
    except json.JSONDecodeError:
        return _pythonic_calls(body)


def _mistral(text: str, final: FinalShape | None) -> Found:
    return _wrapped_calls(read_json(text.removeprefix("[TOOL_CALLS]"))) or _no_call()


def _python_tag(text: str, final: FinalShape | None) -> Found:
    return _wrapped_calls(read_json(text.removeprefix("<|python_tag|>"))) or _no_call()


def _json_reply(text: str, final: FinalShape | None) -> Found:
    """One JSON value: a wrapper naming a tool, a list of them, or (one object with every
    required field) the final tool's own arguments."""
    data = read_json(text)
    found = _wrapped_calls(data)
    bare = isinstance(data, dict) and not {"name", "function"} & data.keys()
    if not found and final is not None and bare and final.required <= data.keys():
        found = [(final.name, data)]
    return found


_FORMATS: tuple[tuple[str, Callable[[str, FinalShape | None], Found]], ...] = (
    ("<tool_call>", _tool_call_blocks),
    ("<function=", _xml_reply),
    ("<|python_start|>", _python_block),
    ("[TOOL_CALLS]", _mistral),
    ("<|python_tag|>", _python_tag),
    ("{", _json_reply),
    ("[", _json_reply),
)


# --- what the formats hold -----------------------------------------------------------------------


def _wrapped_calls(data: Any) -> Found:
    """Calls in `{"name", "arguments"|"parameters"}`, `{"function": {...}}` or
    `{"function": NAME, "arguments"}` objects, alone or in a list; every item must be one."""
    items = data if isinstance(data, list) else [data]
    calls: Found = []
    for item in items:
        if not isinstance(item, dict):
            return []
        function = item.get("function") if isinstance(item.get("function"), dict) else item
        name = function.get("name")
        if name is None and isinstance(item.get("function"), str):
            name = item["function"]
        arguments = function.get("arguments", function.get("parameters", {}))
        if not (isinstance(name, str) and isinstance(arguments, str | dict)):
            return []
        calls.append((name, arguments))
    return calls


def _pythonic_calls(text: str) -> Found:
    """`[read_file(path="a.py")]` as Llama 3.2/4 write it: parsed, never evaluated; every
    item must be a call with literal keyword arguments."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise _NotACall from None
    body = tree.body
    calls_in = body.elts if isinstance(body, ast.List) else [body]
    calls: Found = []
    for node in calls_in:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise _NotACall
        if node.args or any(k.arg is None for k in node.keywords):  # only name=value
            raise _NotACall
        try:
            arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise _NotACall from None
        if len(arguments) < len(node.keywords):
            names = [str(k.arg) for k in node.keywords]
            raise UnreadableJSON(repeated_key(next(n for n in names if names.count(n) > 1)))
        check_depth(arguments)
        calls.append((node.func.id, arguments))
    return calls or _no_call()


def _no_call() -> Found:
    raise _NotACall


def _skip_space(text: str, position: int) -> int:
    space = _SPACE.match(text, position)
    return space.end() if space else position
