"""A model's reply, normalized from whatever the server sent, and sent back as the server
needs it on the next request.

The assistant message is kept as the server sent it, unknown fields included: Gemini wants its
tool calls' `extra_content.google.thought_signature` back, DeepSeek's thinking mode its
`reasoning_content`. Only what we must change is changed: a missing tool-call id is made up,
arguments that came as an object are sent as the JSON string the API defines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reviewer.findings import Usage
from reviewer.llm.text_calls import FinalShape, calls_in_text

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
    # Why a reply that is wholly a call written as text could not be read ('' otherwise):
    # said to the model (loop/steering.py).
    text_call_problem: str = ""
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
    final: FinalShape | None = None,
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
    from_text, problem = False, ""
    if not calls and content:
        read = calls_in_text(content, tool_names, final)
        calls = [
            ToolCall(f"call_{call_number}_text{index}", name, arguments)
            for index, (name, arguments) in enumerate(read.calls)
        ]
        from_text, problem = bool(calls), read.problem
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
            replies_read_from_text=int(from_text),
        ),
        calls_from_text=from_text,
        text_call_problem=problem,
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


def _cached_tokens(usage: dict[str, Any]) -> int:
    """Prompt tokens served from the server's cache (OpenAI: `prompt_tokens_details.
    cached_tokens`); 0 when the server does not say (Ollama sends no details)."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and cached > 0 else 0
