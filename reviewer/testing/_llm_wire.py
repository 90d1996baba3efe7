"""What the fake OpenAI-compatible server puts on the wire, and what it refuses.

Response bodies follow OpenAI's chat completions format field for field, and the request
checks reproduce OpenAI's own 400/401 answers (with their real texts): an agent loop that
forgets a tool answer or an `Authorization` header fails in its tests, not in production.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]

JSON_PARSE_MESSAGE = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please contact "
    "us through our help center at help.openai.com.)"
)
NO_KEY_MESSAGE = (
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field "
    "(with blank username) if you're accessing the API from your browser and are prompted for "
    "a username and password. You can obtain an API key from "
    "https://platform.openai.com/account/api-keys."
)
UNANSWERED_TOOL_CALLS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
TOOL_WITHOUT_CALL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
ROLES = ("system", "assistant", "user", "function", "tool", "developer")


def error_body(
    message: str,
    *,
    error_type: str | None = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> JsonObject:
    """OpenAI's error envelope; the client exposes these four fields on its exceptions."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


class RequestProblem(Exception):
    """A request that a real server refuses before any model sees it."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        error_type: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = error_body(message, error_type=error_type, param=param, code=code)


def bearer_key(headers: Mapping[str, str]) -> str:
    scheme, _, key = headers.get("authorization", "").partition(" ")
    return key.strip() if scheme.lower() == "bearer" else ""


def masked_key(key: str) -> str:
    # OpenAI echoes a bad key with its middle starred out; never the whole key.
    if len(key) <= 8:
        return "*" * len(key)
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


def incorrect_key_message(key: str) -> str:
    return (
        f"Incorrect API key provided: {masked_key(key)}. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    )


def check_auth(headers: Mapping[str, str], api_key: str | None) -> None:
    key = bearer_key(headers)
    if not key:
        raise RequestProblem(401, NO_KEY_MESSAGE)
    if api_key is not None and key != api_key:
        raise RequestProblem(401, incorrect_key_message(key), code="invalid_api_key")


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise RequestProblem(400, JSON_PARSE_MESSAGE) from None


def check_chat_request(body: Any, *, strict: bool) -> None:
    """The cheap checks OpenAI makes on every chat request, with its own error texts.

    `strict` adds what OpenAI refuses but lenient local servers let through: unanswered or
    unknown tool calls, and tool options without tools.
    """
    if not isinstance(body, dict):
        raise RequestProblem(400, JSON_PARSE_MESSAGE)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestProblem(400, "you must provide a model parameter")
    messages = body.get("messages")
    if messages is None:
        raise RequestProblem(
            400,
            "Missing required parameter: 'messages'.",
            param="messages",
            code="missing_required_parameter",
        )
    if not isinstance(messages, list) or not messages:
        raise RequestProblem(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            param="messages",
            code="empty_array",
        )
    for index, message in enumerate(messages):
        _check_message_shape(index, message)
    if strict:
        check_tool_answers(messages)
        for option in ("tool_choice", "parallel_tool_calls"):
            if body.get(option) is not None and not body.get("tools"):
                raise RequestProblem(
                    400,
                    f"Invalid value for '{option}': '{option}' is only allowed when 'tools' "
                    "are specified.",
                    param=option,
                )


def _check_message_shape(index: int, message: Any) -> None:
    if not isinstance(message, dict):
        raise RequestProblem(
            400,
            f"Invalid type for 'messages[{index}]': expected an object, but got "
            f"{type(message).__name__} instead.",
            param=f"messages[{index}]",
            code="invalid_type",
        )
    role = message.get("role")
    if role is None:
        raise RequestProblem(
            400,
            f"Missing required parameter: 'messages[{index}].role'.",
            param=f"messages[{index}].role",
            code="missing_required_parameter",
        )
    if role not in ROLES:
        supported = ", ".join(f"'{r}'" for r in ROLES[:-1]) + f", and '{ROLES[-1]}'"
        raise RequestProblem(
            400,
            f"Invalid value: '{role}'. Supported values are: {supported}.",
            param=f"messages[{index}].role",
            code="invalid_value",
        )


def check_tool_answers(messages: list[JsonObject]) -> None:
    """Every tool call is answered by a tool message right after it, and only those are."""
    pending: list[str] = []
    opened_at: int | None = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                raise RequestProblem(
                    400,
                    f"Missing required parameter: 'messages.[{index}].tool_call_id'.",
                    param=f"messages.[{index}].tool_call_id",
                    code="missing_required_parameter",
                )
            if opened_at is None or call_id not in pending:
                raise RequestProblem(400, TOOL_WITHOUT_CALL, param=f"messages.[{index}].role")
            pending.remove(call_id)
            continue
        if pending:
            raise RequestProblem(
                400,
                UNANSWERED_TOOL_CALLS.format(ids=", ".join(pending)),
                param=f"messages.[{index}].role",
            )
        opened_at = None
        if role == "assistant" and message.get("tool_calls"):
            pending = _tool_call_ids(index, message["tool_calls"])
            opened_at = index
    if pending:
        raise RequestProblem(
            400, UNANSWERED_TOOL_CALLS.format(ids=", ".join(pending)), param="messages"
        )


def _tool_call_ids(index: int, calls: Any) -> list[str]:
    ids: list[str] = []
    for number, call in enumerate(calls if isinstance(calls, list) else []):
        call_id = call.get("id") if isinstance(call, dict) else None
        if not isinstance(call_id, str) or not call_id:
            # The usual bug with servers that send no ids: echoing `id: null` back.
            where = f"messages.[{index}].tool_calls.[{number}].id"
            raise RequestProblem(
                400,
                f"Missing required parameter: '{where}'.",
                param=where,
                code="missing_required_parameter",
            )
        ids.append(call_id)
    return ids


@dataclass
class Answer:
    """An HTTP answer about to be sent; `events` set means a server-sent event stream."""

    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    events: list[JsonObject] | None = None


def json_answer(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Answer:
    return Answer(status, json.dumps(body).encode("utf-8"), headers=dict(headers or {}))


def estimate_tokens(text: str) -> int:
    """About four characters a token: enough for budgets to move like they do for real."""
    return max(1, math.ceil(len(text) / 4))


def prompt_tokens(request: JsonObject) -> int:
    return estimate_tokens(json.dumps([request.get("messages"), request.get("tools")]))


def completion_tokens(message: JsonObject) -> int:
    text = message.get("content") or ""
    for call in message.get("tool_calls") or []:
        text += call["function"]["name"] + call["function"]["arguments"]
    return estimate_tokens(text)


def completion_body(
    *, number: int, model: str, message: JsonObject, finish_reason: str, usage: JsonObject | None
) -> JsonObject:
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": usage,
    }


def stream_chunks(
    completion: JsonObject, *, include_usage: bool, whole_tool_calls: bool, piece: int = 8
) -> Iterator[JsonObject]:
    """The completion cut into `chat.completion.chunk`s, as OpenAI streams it.

    OpenAI sends each tool call's id/type/name first and its arguments in later fragments;
    Ollama sends each call whole in one chunk (`whole_tool_calls`). Clients must take both.
    """
    base = {key: completion[key] for key in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: JsonObject, finish_reason: str | None = None) -> JsonObject:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        out: JsonObject = {**base, "choices": [choice]}
        if include_usage:
            out["usage"] = None  # OpenAI sends usage: null on every chunk but the last
        return out

    choice = completion["choices"][0]
    message = choice["message"]
    content = message.get("content")
    yield chunk({"role": "assistant", "content": None if content is None else "", "refusal": None})
    for start in range(0, len(content or ""), piece):
        yield chunk({"content": content[start : start + piece]})
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {key: value for key, value in call.items() if key != "function"}
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        if whole_tool_calls:
            whole = {"index": index, **head, "function": {"name": name, "arguments": arguments}}
            yield chunk({"tool_calls": [whole]})
            continue
        first = {"index": index, **head, "function": {"name": name, "arguments": ""}}
        yield chunk({"tool_calls": [first]})
        for start in range(0, len(arguments), piece):
            fragment = {"index": index, "function": {"arguments": arguments[start : start + piece]}}
            yield chunk({"tool_calls": [fragment]})
    yield chunk({}, choice["finish_reason"])
    if include_usage and completion.get("usage") is not None:
        yield {**base, "choices": [], "usage": completion["usage"]}
