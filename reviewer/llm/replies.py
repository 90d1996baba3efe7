"""A model's reply, normalized from whatever the server sent, and sent back as the server
needs it on the next request.

The assistant message is kept as the server sent it, unknown fields included: Gemini wants its
tool calls' `extra_content.google.thought_signature` back, DeepSeek's thinking mode its
`reasoning_content`. Only what we must change is changed: a missing tool-call id is made up,
arguments that came as an object are sent as the JSON string the API defines.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from reviewer.findings import Usage

# Fields of a reply message that are about the reply, not part of the conversation.
_NOT_SENT_BACK = frozenset({"audio", "annotations", "function_call"})


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    # As the server sent it: usually a JSON string; some servers send an object.
    arguments: str | dict[str, Any]
    # The call as the server sent it (extra fields such as Gemini's thought signature).
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class Reply:
    content: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str
    usage: Usage
    # True when the tool calls were recovered from the message text.
    calls_from_text: bool = False
    retries: int = 0
    # The message as the server sent it, for sending back.
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    def assistant_message(self) -> dict[str, Any]:
        """The message to append to the conversation: the server's own, with ids every
        server accepts and arguments as JSON strings."""
        message = {k: v for k, v in self.raw.items() if k not in _NOT_SENT_BACK}
        message["role"] = "assistant"
        message["content"] = self.content or ""
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    **call.raw,
                    "id": call.id,
                    "type": "function",
                    "function": {
                        **(call.raw.get("function") or {}),
                        "name": call.name,
                        "arguments": call.arguments_json(),
                    },
                }
                for call in self.tool_calls
            ]
            if self.calls_from_text:
                # The calls were written as text: the text itself is not sent back twice.
                message["content"] = ""
        else:
            message.pop("tool_calls", None)
        return message


def normalize(
    message: dict[str, Any] | None,
    finish_reason: str | None,
    usage: dict[str, Any] | None,
    call_number: int,
    *,
    retries: int = 0,
    tool_names: frozenset[str] | None = None,
) -> Reply:
    """A Reply from a message dict (from a response or assembled from a stream)."""
    message = message or {}
    content = message.get("content") or ""
    if not isinstance(content, str):  # a list of parts, from some servers
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    calls: list[ToolCall] = []
    for index, raw in enumerate(message.get("tool_calls") or []):
        if not isinstance(raw, dict):
            continue
        function = raw.get("function") or {}
        arguments = function.get("arguments")
        calls.append(
            ToolCall(
                raw.get("id") or f"call_{call_number}_{index}",
                str(function.get("name") or ""),
                "" if arguments is None else arguments,
                raw,
            )
        )
    from_text = False
    if not calls and content:
        found = _calls_in_text(content, tool_names)
        calls = [
            ToolCall(f"call_{call_number}_text{index}", name, arguments)
            for index, (name, arguments) in enumerate(found)
        ]
        from_text = bool(calls)
    usage = usage or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    return Reply(
        content=content,
        tool_calls=tuple(calls),
        finish_reason=finish_reason or "stop",
        usage=Usage(
            prompt_tokens=prompt,
            completion_tokens=int(usage.get("completion_tokens") or 0),
            requests=1,
            cached_prompt_tokens=min(_cached_tokens(usage), prompt),
        ),
        calls_from_text=from_text,
        retries=retries,
        raw=message,
    )


def for_server(
    messages: list[dict[str, Any]], *, one_call_per_message: bool, strip_reasoning: bool
) -> list[dict[str, Any]]:
    """The conversation as this server takes it. The agent's own history is not changed."""
    if not (one_call_per_message or strip_reasoning):
        return messages
    out: list[dict[str, Any]] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if strip_reasoning and message.get("role") == "assistant":
            message = {k: v for k, v in message.items() if k != "reasoning_content"}
        calls = message.get("tool_calls") or []
        if one_call_per_message and message.get("role") == "assistant" and len(calls) > 1:
            # Each call in its own assistant message, followed by its own result.
            results = {
                m.get("tool_call_id"): m
                for m in messages[index + 1 : index + 1 + len(calls)]
                if m.get("role") == "tool"
            }
            for number, call in enumerate(calls):
                content = message.get("content", "") if number == 0 else ""
                out.append({**message, "content": content, "tool_calls": [call]})
                if call.get("id") in results:
                    out.append(results[call["id"]])
            index += 1 + len(results)
            continue
        out.append(message)
        index += 1
    return out


# Tool calls a server left in the message text, by format (each seen on vLLM or Ollama with
# a missing or wrong tool parser). Hermes / Qwen2.5: <tool_call>{json}</tool_call>.
_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
# Qwen3-Coder (vLLM qwen3coder_tool_parser): <function=NAME><parameter=P>value</parameter>...
_XML_FUNCTION = re.compile(r"<function=([^>\s]{1,200})>(.*?)(?:</function>|\Z)", re.DOTALL)
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]{1,200})>(.*?)(?:</parameter>|\Z)", re.DOTALL)
# Llama 4 (vLLM llama4_pythonic_tool_parser): <|python_start|>...<|python_end|>.
_PYTHON_TAG = re.compile(r"<\|python_start\|>(.*?)(?:<\|python_end\|>|\Z)", re.DOTALL)
# Mistral: [TOOL_CALLS][{...}] .
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*(\[.*\])", re.DOTALL)
_MAX_TEXT_SCAN = 1_000_000

Found = list[tuple[str, str | dict[str, Any]]]


def _calls_in_text(content: str, tool_names: frozenset[str] | None) -> Found:
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
        stripped = content.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
        stripped = stripped.strip().removeprefix("<|python_tag|>").strip()
        if stripped.startswith(("{", "[")):
            found = _json_calls(stripped)
    return [call for call in found if tool_names is None or call[0] in tool_names]


def _json_calls(text: str) -> Found:
    try:
        data = json.loads(text.strip())
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data]
    calls: Found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        function = item.get("function") if isinstance(item.get("function"), dict) else item
        name = function.get("name")
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


def _cached_tokens(usage: dict[str, Any]) -> int:
    """Prompt tokens served from the server's cache (OpenAI: `prompt_tokens_details.
    cached_tokens`); 0 when the server does not say (Ollama sends no details)."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and cached > 0 else 0
