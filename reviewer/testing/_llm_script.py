"""The script format of the fake LLM: checking steps, loading them, and turning one into an answer.

A step is a plain JSON object so scripts can live in JSON files; its keys say its kind:
`body` makes a raw answer, `error` an error, anything else an assistant reply. Every step
may also carry `delay` (seconds), `expect` (checks on the request) and `headers`.
Mistyped keys are refused when the script is loaded: a silent typo would make a test pass
for the wrong reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reviewer.testing._llm_presets import PRESETS, preset_problem
from reviewer.testing._llm_wire import JsonObject, completion_tokens, prompt_tokens

Step = Mapping[str, Any] | Callable[[JsonObject], Any]
"""A step object, or (Python only) a function of the request body that returns one."""

COMMON_KEYS = frozenset({"delay", "expect", "headers"})
REPLY_KEYS = frozenset(
    {"content", "tool_calls", "finish_reason", "usage", "omit_tool_call_ids", "stream_tool_calls"}
)
RAW_KEYS = frozenset({"body", "status", "content_type"})
TOOL_CALL_KEYS = frozenset({"name", "arguments", "id"})
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")
EXPECT_KEYS = frozenset(
    {
        "model",
        "tools",
        "tool_choice",
        "stream",
        "last_role",
        "tool_result_for",
        "contains",
        "last_contains",
        "message_count",
    }
)


class ScriptError(ValueError):
    """A script step that cannot be played; the message names the step and the key."""


def load_script(path: str | Path) -> list[JsonObject]:
    """Read a JSON file holding a list of steps, and check every step."""
    try:
        steps = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ScriptError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(steps, list):
        raise ScriptError(f"{path}: a script is a JSON list of steps")
    for number, step in enumerate(steps, start=1):
        check_step(step, f"{path}: step {number}")
    return steps


def step_kind(step: Mapping[str, Any]) -> str:
    if "body" in step:
        return "raw"
    if "error" in step:
        return "error"
    return "reply"


def check_step(step: Any, where: str) -> None:
    """Raise ScriptError unless `step` is a playable step (callables are checked when called)."""
    if callable(step):
        return
    if not isinstance(step, Mapping):
        raise ScriptError(f"{where}: a step is an object, not {type(step).__name__}")
    kind = step_kind(step)
    if kind == "raw":
        allowed = COMMON_KEYS | RAW_KEYS
    elif kind == "error":
        allowed = COMMON_KEYS | _error_keys(step, where)
    else:
        allowed = COMMON_KEYS | REPLY_KEYS
    unknown = sorted(set(step) - allowed)
    if unknown:
        raise ScriptError(
            f"{where}: unknown key(s) {unknown} for a {kind} step; known: {sorted(allowed)}"
        )
    _check_common(step, where)
    if kind == "reply":
        _check_reply(step, where)
    elif not isinstance(step.get("content_type", ""), str):
        raise ScriptError(f"{where}: content_type is a string")
    elif "status" in step and not _is_status(step["status"]):
        raise ScriptError(f"{where}: status must be an HTTP status code (100-599)")


def _is_status(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599


def _error_keys(step: Mapping[str, Any], where: str) -> frozenset[str]:
    error = step["error"]
    if isinstance(error, str):
        if error not in PRESETS:
            raise ScriptError(f"{where}: unknown error preset {error!r}; known: {sorted(PRESETS)}")
        problem = preset_problem(error, step)
        if problem:
            raise ScriptError(f"{where}: {problem}")
        return frozenset({"error"}) | PRESETS[error][1]
    if not isinstance(error, Mapping) or not isinstance(error.get("message"), str):
        raise ScriptError(f"{where}: error is a preset name or an object with a message")
    extra = set(error) - {"message", "type", "param", "code"}
    if extra:
        raise ScriptError(f"{where}: unknown error field(s) {sorted(extra)}")
    return frozenset({"error", "status"})


def _check_common(step: Mapping[str, Any], where: str) -> None:
    delay = step.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
        raise ScriptError(f"{where}: delay is a number of seconds >= 0")
    headers = step.get("headers", {})
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise ScriptError(f"{where}: headers map names to string values")
    expect = step.get("expect", {})
    if not isinstance(expect, Mapping):
        raise ScriptError(f"{where}: expect is an object")
    unknown = sorted(set(expect) - EXPECT_KEYS)
    if unknown:
        raise ScriptError(f"{where}: unknown expect key(s) {unknown}; known: {sorted(EXPECT_KEYS)}")


def _check_reply(step: Mapping[str, Any], where: str) -> None:
    content = step.get("content")
    if content is not None and not isinstance(content, str):
        raise ScriptError(f"{where}: content is a string or null")
    calls = step.get("tool_calls", [])
    if not isinstance(calls, list):
        raise ScriptError(f"{where}: tool_calls is a list")
    for number, call in enumerate(calls, start=1):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ScriptError(f"{where}: tool call {number} needs a name")
        unknown = sorted(set(call) - TOOL_CALL_KEYS)
        if unknown:
            raise ScriptError(f"{where}: tool call {number}: unknown key(s) {unknown}")
        if call.get("id") is not None and not isinstance(call["id"], str):
            raise ScriptError(f"{where}: tool call {number}: id is a string or null")
    if step.get("finish_reason", "stop") not in FINISH_REASONS:
        raise ScriptError(f"{where}: finish_reason is one of {list(FINISH_REASONS)}")
    usage = step.get("usage")
    if usage is not None and not isinstance(usage, Mapping):
        raise ScriptError(f"{where}: usage is an object or null")
    if step.get("stream_tool_calls", "fragments") not in ("fragments", "whole"):
        raise ScriptError(f"{where}: stream_tool_calls is 'fragments' or 'whole'")


def check_expectations(expect: Mapping[str, Any], request: JsonObject) -> list[str]:
    """What in the request differs from the step's `expect`; empty when all holds."""
    problems: list[str] = []
    messages: list[JsonObject] = request.get("messages") or []
    last = messages[-1] if messages else {}
    offered = [
        tool["function"].get("name")
        for tool in request.get("tools") or []
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
    ]
    if "model" in expect and request.get("model") != expect["model"]:
        problems.append(f"model is {request.get('model')!r}, expected {expect['model']!r}")
    if "tools" in expect:
        wanted = expect["tools"]
        if wanted is True and not offered:
            problems.append("no tools were offered")
        elif wanted is False and offered:
            problems.append(f"tools were offered: {offered}")
        elif isinstance(wanted, list):
            missing = [name for name in wanted if name not in offered]
            if missing:
                problems.append(f"tools {missing} were not offered (offered: {offered})")
    for key in ("tool_choice", "stream"):
        if key in expect and request.get(key) != expect[key]:
            problems.append(f"{key} is {request.get(key)!r}, expected {expect[key]!r}")
    if "last_role" in expect and last.get("role") != expect["last_role"]:
        problems.append(
            f"last message role is {last.get('role')!r}, expected {expect['last_role']!r}"
        )
    if "message_count" in expect and len(messages) != expect["message_count"]:
        problems.append(f"{len(messages)} messages, expected {expect['message_count']}")
    if "tool_result_for" in expect:
        answered = _trailing_tool_results(messages)
        for call_id in _as_list(expect["tool_result_for"]):
            if call_id not in answered:
                problems.append(
                    f"the request does not end with a tool result for {call_id!r}"
                    f" (trailing tool results: {answered})"
                )
    everything = "\n".join(message_text(message) for message in messages)
    problems.extend(
        f"no message contains {text!r}"
        for text in _as_list(expect.get("contains", []))
        if text not in everything
    )
    problems.extend(
        f"the last message does not contain {text!r}"
        for text in _as_list(expect.get("last_contains", []))
        if text not in message_text(last)
    )
    return problems


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _trailing_tool_results(messages: list[JsonObject]) -> list[str]:
    answered: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        answered.insert(0, message.get("tool_call_id"))
    return answered


def message_text(message: JsonObject) -> str:
    """A message's text, tool calls included, for substring expectations."""
    content = message.get("content")
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    parts = [content if isinstance(content, str) else ""]
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        parts.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(parts)


def render_message(
    step: Mapping[str, Any], request: JsonObject, new_call_id: Callable[[], str], omit_ids: bool
) -> tuple[JsonObject, str, JsonObject | None]:
    """The assistant message, finish reason and usage a reply step stands for."""
    calls: list[JsonObject] = []
    for call in step.get("tool_calls", []):
        arguments = call.get("arguments", {})
        # A string goes out untouched so a script can send invalid or truncated JSON.
        encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
        wire: JsonObject = {"id": call["id"] if "id" in call else new_call_id()}
        if omit_ids or step.get("omit_tool_call_ids", False):
            del wire["id"]
        wire.update({"type": "function", "function": {"name": call["name"], "arguments": encoded}})
        calls.append(wire)
    content = step.get("content", None if calls else "")
    message: JsonObject = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    finish_reason = step.get("finish_reason", "tool_calls" if calls else "stop")
    if "usage" in step:
        usage = None if step["usage"] is None else dict(step["usage"])
        if usage is not None and "total_tokens" not in usage:
            usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get(
                "completion_tokens", 0
            )
    else:
        prompt, completion = prompt_tokens(request), completion_tokens(message)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return message, finish_reason, usage
