"""Python helpers that build fake-LLM script steps.

Each helper returns the same plain dict a JSON script would hold, so a test can print a
step, store it in a file, or tweak it with `{**step, "delay": 2}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from reviewer.testing._llm_wire import JsonObject


class _Unset(Enum):
    UNSET = "unset"


# "Not given" differs from None for content, call ids and usage: None is sent as JSON null.
UNSET = _Unset.UNSET


def tool_call(
    name: str, arguments: Any = None, *, call_id: str | _Unset | None = UNSET
) -> JsonObject:
    """A tool call in a reply.

    `arguments`: a dict (or any JSON value) is encoded to a JSON string as OpenAI does; a str
    is sent as it is, to simulate invalid or truncated JSON. `call_id`: omitted -> `call_<n>`
    numbered by the server; None -> `"id": null` on the wire.
    """
    call: JsonObject = {"name": name, "arguments": {} if arguments is None else arguments}
    if call_id is not UNSET:
        call["id"] = call_id
    return call


def reply(
    content: str | _Unset | None = UNSET,
    *,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    finish_reason: str | None = None,
    usage: Mapping[str, Any] | _Unset | None = UNSET,
    omit_tool_call_ids: bool = False,
    stream_tool_calls: str | None = None,
    delay: float | None = None,
    expect: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JsonObject:
    """An assistant reply. Defaults: content null with tool calls, else ""; finish_reason
    `tool_calls` or `stop`; usage estimated from the sizes (about 4 characters a token).
    A given usage is sent as it is, nested details included (OpenAI's
    `prompt_tokens_details.cached_tokens`); `total_tokens` is added when missing."""
    step: JsonObject = {}
    if content is not UNSET:
        step["content"] = content
    if tool_calls:
        step["tool_calls"] = [dict(call) for call in tool_calls]
    if finish_reason is not None:
        step["finish_reason"] = finish_reason
    if usage is not UNSET:
        step["usage"] = None if usage is None else dict(usage)
    if omit_tool_call_ids:
        step["omit_tool_call_ids"] = True
    if stream_tool_calls is not None:
        step["stream_tool_calls"] = stream_tool_calls
    return _with_common(step, delay=delay, expect=expect, headers=headers)


def _with_common(
    step: JsonObject,
    *,
    delay: float | None = None,
    expect: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JsonObject:
    if delay is not None:
        step["delay"] = delay
    if expect is not None:
        step["expect"] = dict(expect)
    if headers is not None:
        step["headers"] = dict(headers)
    return step


def delay(seconds: float, step: Mapping[str, Any] | None = None) -> JsonObject:
    """Wait `seconds` before answering `step` (an empty reply when none is given)."""
    return {**(step or {}), "delay": seconds}


def expect(step: Mapping[str, Any], **checks: Any) -> JsonObject:
    """`step`, answered only if the request passes `checks` (see the module docs for keys)."""
    return {**step, "expect": {**step.get("expect", {}), **checks}}


def error(
    status: int,
    message: str,
    *,
    error_type: str | None = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JsonObject:
    """Any OpenAI-shaped error: `{"error": {"message", "type", "param", "code"}}`."""
    body = {"message": message, "type": error_type, "param": param, "code": code}
    return _with_common({"status": status, "error": body}, headers=headers)


def raw(
    body: str | Mapping[str, Any] | list[Any],
    *,
    status: int = 200,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JsonObject:
    """An answer sent verbatim: a str as text, anything else as JSON (e.g. a bare-bones body)."""
    step: JsonObject = {"status": status, "body": body}
    if content_type is not None:
        step["content_type"] = content_type
    return _with_common(step, headers=headers)


def rate_limit_exceeded(
    *,
    retry_after: float | None = 1,
    retry_after_ms: float | None = None,
    limit: str = "requests",
) -> JsonObject:
    """429 `rate_limit_exceeded` with `retry-after` (and `retry-after-ms`, which the openai
    client prefers: `retry_after_ms=1` keeps retry tests fast)."""
    step: JsonObject = {"error": "rate_limit_exceeded", "retry_after": retry_after, "limit": limit}
    if retry_after_ms is not None:
        step["retry_after_ms"] = retry_after_ms
    return step


def insufficient_quota() -> JsonObject:
    """429 `insufficient_quota`: permanent, though the openai client retries it like any 429."""
    return {"error": "insufficient_quota"}


def server_error(status: int = 500) -> JsonObject:
    """A 5xx with OpenAI's `server_error` body."""
    return {"error": "server_error", "status": status}


def bad_gateway(*, html: bool = True) -> JsonObject:
    """502 from a proxy in front of the model: an HTML page, not JSON, by default."""
    return {"error": "bad_gateway", "html": html}


def service_unavailable() -> JsonObject:
    """503 "overloaded"."""
    return {"error": "service_unavailable"}


def invalid_api_key() -> JsonObject:
    """401 `invalid_api_key`, echoing the request's key masked as OpenAI does."""
    return {"error": "invalid_api_key"}


def model_not_found(model: str | None = None) -> JsonObject:
    """404 `model_not_found` for `model` (default: the model the request named)."""
    step: JsonObject = {"error": "model_not_found"}
    if model is not None:
        step["model"] = model
    return step


def context_length_exceeded(max_tokens: int = 8192, prompt_tokens: int | None = None) -> JsonObject:
    """400 `context_length_exceeded` with OpenAI's text; `prompt_tokens` defaults to the
    request's estimated size, at least `max_tokens + 1`."""
    step: JsonObject = {"error": "context_length_exceeded", "max_tokens": max_tokens}
    if prompt_tokens is not None:
        step["prompt_tokens"] = prompt_tokens
    return step
