"""Tool calls a model wrote as text instead of as calls, read back as calls.

A server leaves calls in the message text when its tool parser is missing or wrong, and a
small model writes its final answer as JSON in a code fence. Each format below was seen on a
real server; only calls of the tools the loop offers are read (prose that holds JSON is not
a call), and a call read from text is checked exactly like a real one.

Formats, each with where it was seen:
- Hermes / Qwen2.5 tags, `<tool_call>{"name": N, "arguments": {...}}</tool_call>`: vLLM
  without a tool parser, Ollama.
- Qwen3-Coder XML, `<function=N><parameter=P>v</parameter></function>`: vLLM without its
  qwen3_coder parser.
- Llama 4 pythonic, `<|python_start|>[N(p="v")]<|python_end|>`: vLLM without its
  llama4_pythonic parser.
- Mistral, `[TOOL_CALLS][{"name": N, "arguments": {...}}]`: vLLM, Ollama.
- Llama 3.1, `<|python_tag|>{"name": N, "parameters": {...}}`: vLLM, Ollama.
- A name/arguments wrapper as the whole reply, bare or in one fence,
  `{"name": N, "arguments": {...}}`: llama.cpp `llama-server --jinja` with
  Qwen2.5-Coder-1.5B-Instruct Q4_K_M, asked with tool_choice "required" (issue 24).
- A function wrapper as the whole reply, `{"function": {"name": N, "arguments": ...}}` or
  `{"function": N, "arguments": ...}`: OpenAI's tool-call shape, written out as text.
- The final tool's own arguments as the whole reply, bare or in one fence,
  `{"summary": ..., "findings": [...]}`: llama.cpp `llama-server --jinja` with
  Qwen2.5-Coder-1.5B-Instruct Q4_K_M, asked without tool_choice (issue 24).

"Whole reply" means the text is one JSON value, bare or in one code fence, with nothing but
whitespace around it: JSON inside prose, or several objects, is not read.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

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


# Hermes / Qwen2.5: <tool_call>{json}</tool_call>.
_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
# Qwen3-Coder (vLLM qwen3coder_tool_parser): <function=NAME><parameter=P>value</parameter>...
_XML_FUNCTION = re.compile(r"<function=([^>\s]{1,200})>(.*?)(?:</function>|\Z)", re.DOTALL)
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]{1,200})>(.*?)(?:</parameter>|\Z)", re.DOTALL)
# Llama 4 (vLLM llama4_pythonic_tool_parser): <|python_start|>...<|python_end|>.
_PYTHON_TAG = re.compile(r"<\|python_start\|>(.*?)(?:<\|python_end\|>|\Z)", re.DOTALL)
# Mistral: [TOOL_CALLS][{...}] .
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*(\[.*\])", re.DOTALL)
# One code fence that is the whole text: ```json ... ``` (any info word, or none).
_ONE_FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL)
_MAX_TEXT_SCAN = 1_000_000


def calls_in_text(
    content: str, tool_names: frozenset[str] | None, final: FinalShape | None = None
) -> Found:
    """Tool calls written into the text, in the formats servers are known to leak; with
    `tool_names`, only calls of known tools (prose that holds JSON is not a call)."""
    content = content[:_MAX_TEXT_SCAN]
    found: Found = []
    for block in _TAGGED.findall(content):
        found += _xml_calls(block) if "<function=" in block else _json_calls(block)
    if not found and "<function=" in content:
        found = _xml_calls(content)
    if not found:
        for block in _PYTHON_TAG.findall(content):
            found += _json_calls(block) or _pythonic_calls(block)
    if not found and (match := _MISTRAL.search(content)):
        found = _json_calls(match.group(1))
    if not found:
        found = _whole_reply_call(content, final)
    return [call for call in found if tool_names is None or call[0] in tool_names]


def _whole_reply_call(content: str, final: FinalShape | None) -> Found:
    """The reply is one JSON value, bare or in one fence: a wrapper naming a tool, a list of
    them, or (one object with every required field) the final tool's own arguments."""
    text = content.strip()
    if text.startswith("```"):
        fence = _ONE_FENCE.fullmatch(text)
        if fence is None or "```" in fence.group(1):
            return []
        text = fence.group(1).strip()
    text = text.removeprefix("<|python_tag|>").strip()
    if not text.startswith(("{", "[")):
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []
    found = _wrapped_calls(data)
    bare = isinstance(data, dict) and not {"name", "function"} & data.keys()
    if not found and final is not None and bare and final.required <= data.keys():
        found = [(final.name, data)]
    return found


def _json_calls(text: str) -> Found:
    try:
        data = json.loads(text.strip())
    except ValueError:
        return []
    return _wrapped_calls(data)


def _wrapped_calls(data: Any) -> Found:
    """Calls in `{"name", "arguments"|"parameters"}`, `{"function": {...}}` or
    `{"function": NAME, "arguments"}` objects, alone or in a list."""
    items = data if isinstance(data, list) else [data]
    calls: Found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        function = item.get("function") if isinstance(item.get("function"), dict) else item
        name = function.get("name")
        if name is None and isinstance(item.get("function"), str):
            name = item["function"]
        arguments = function.get("arguments", function.get("parameters", {}))
        if isinstance(name, str) and isinstance(arguments, str | dict):
            calls.append((name, arguments))
    return calls


def _xml_calls(text: str) -> Found:
    calls: Found = []
    for name, body in _XML_FUNCTION.findall(text):
        arguments: dict[str, Any] = {}
        for parameter, raw in _XML_PARAMETER.findall(body):
            value = raw.removeprefix("\n").removesuffix("\n")
            try:
                # As vLLM does for typed parameters: numbers, booleans, objects are JSON.
                decoded = json.loads(value)
                arguments[parameter] = decoded if not isinstance(decoded, str) else value
            except ValueError:
                arguments[parameter] = value
        calls.append((name, arguments))
    return calls


def _pythonic_calls(text: str) -> Found:
    """`[read_file(path="a.py")]` as Llama 3.2/4 write it: parsed, never evaluated."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return []
    body = tree.body
    calls_in = body.elts if isinstance(body, ast.List) else [body]
    calls: Found = []
    for node in calls_in:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        try:
            arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        except (ValueError, SyntaxError, RecursionError):
            continue
        calls.append((node.func.id, arguments))
    return calls
