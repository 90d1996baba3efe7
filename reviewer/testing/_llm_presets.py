"""Error presets of the fake LLM: the statuses, texts and headers real servers send.

The texts are OpenAI's own, so code that inspects `.code` or the message (a context-length
error, a permanent quota error, a 429 with `retry-after`) is tested against the real thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewer.testing._llm_wire import (
    Answer,
    JsonObject,
    bearer_key,
    error_body,
    incorrect_key_message,
    json_answer,
    prompt_tokens,
)

# Preset name -> (HTTP status, parameters it takes beside the common keys).
PRESETS: dict[str, tuple[int, frozenset[str]]] = {
    "rate_limit_exceeded": (429, frozenset({"retry_after", "retry_after_ms", "limit"})),
    "insufficient_quota": (429, frozenset()),
    "server_error": (500, frozenset({"status"})),
    "bad_gateway": (502, frozenset({"html"})),
    "service_unavailable": (503, frozenset()),
    "invalid_api_key": (401, frozenset()),
    "model_not_found": (404, frozenset({"model"})),
    "context_length_exceeded": (400, frozenset({"max_tokens", "prompt_tokens"})),
}
BAD_GATEWAY_HTML = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>cloudflare</center>\r\n"
    "</body>\r\n</html>\r\n"
)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


# Parameter -> (test, what it must be): typos in values fail at load time like typos in keys.
PARAMS: dict[str, tuple[Any, str]] = {
    "retry_after": (lambda v: v is None or _number(v), "a number of seconds or null"),
    "retry_after_ms": (lambda v: v is None or _number(v), "a number of milliseconds or null"),
    "limit": (lambda v: v in ("requests", "tokens"), "'requests' or 'tokens'"),
    "status": (lambda v: isinstance(v, int) and 500 <= v <= 599, "a 5xx status"),
    "html": (lambda v: isinstance(v, bool), "true or false"),
    "model": (lambda v: isinstance(v, str), "a string"),
    "max_tokens": (_count, "a positive integer"),
    "prompt_tokens": (lambda v: v is None or _count(v), "a positive integer or null"),
}


def preset_problem(name: str, step: Mapping[str, Any]) -> str | None:
    """Why the preset's parameters in `step` are wrong, or None."""
    for param in PRESETS[name][1] & set(step):
        test, wanted = PARAMS[param]
        if not test(step[param]):
            return f"{param} of preset {name!r} must be {wanted}, not {step[param]!r}"
    return None


def render_error(
    step: Mapping[str, Any], request: JsonObject, request_headers: Mapping[str, str]
) -> Answer:
    """The answer of an error or raw step; presets fill in OpenAI's real texts and headers."""
    extra = dict(step.get("headers", {}))
    if "body" in step:
        body = step["body"]
        if isinstance(body, str):
            content_type = step.get("content_type", "text/plain; charset=utf-8")
            answer = Answer(step.get("status", 200), body.encode("utf-8"), content_type, extra)
        else:
            answer = json_answer(step.get("status", 200), body, extra)
            answer.content_type = step.get("content_type", answer.content_type)
        return answer
    error = step["error"]
    if isinstance(error, Mapping):
        body = error_body(
            error["message"],
            error_type=error.get("type", "invalid_request_error"),
            param=error.get("param"),
            code=error.get("code"),
        )
        return json_answer(step.get("status", 400), body, extra)
    answer = _render_preset(error, step, request, request_headers)
    answer.headers.update(extra)  # the script's own headers win over the preset's
    return answer


def _render_preset(
    name: str, step: Mapping[str, Any], request: JsonObject, request_headers: Mapping[str, str]
) -> Answer:
    status = PRESETS[name][0]
    model = request.get("model", "")
    if name == "rate_limit_exceeded":
        retry_after = step.get("retry_after", 1)
        retry_after_ms = step.get("retry_after_ms")
        limit = step.get("limit", "requests")
        wait = retry_after_ms / 1000 if retry_after_ms is not None else retry_after or 1
        per = "requests per min (RPM): Limit 3, Used 3, Requested 1"
        if limit == "tokens":
            per = "tokens per min (TPM): Limit 30000, Used 29500, Requested 1200"
        message = (
            f"Rate limit reached for {model} in organization org-fake on {per}. "
            f"Please try again in {wait:g}s. "
            "Visit https://platform.openai.com/account/rate-limits to learn more."
        )
        headers = {
            f"x-ratelimit-limit-{limit}": "3" if limit == "requests" else "30000",
            f"x-ratelimit-remaining-{limit}": "0",
            f"x-ratelimit-reset-{limit}": f"{wait:g}s",
        }
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        body = error_body(message, error_type=limit, code="rate_limit_exceeded")
        return json_answer(status, body, headers)
    if name == "insufficient_quota":
        message = (
            "You exceeded your current quota, please check your plan and billing details. "
            "For more information on this error, read the docs: "
            "https://platform.openai.com/docs/guides/error-codes/api-errors."
        )
        return json_answer(status, error_body(message, error_type=name, code=name))
    if name == "server_error":
        message = "The server had an error while processing your request. Sorry about that!"
        return json_answer(step.get("status", status), error_body(message, error_type=name))
    if name == "bad_gateway":
        if step.get("html", True):
            return Answer(status, BAD_GATEWAY_HTML.encode(), "text/html")
        message = "Bad gateway."
        return json_answer(status, error_body(message, error_type="server_error"))
    if name == "service_unavailable":
        message = "The server is overloaded or not ready yet."
        return json_answer(status, error_body(message, error_type="server_error"))
    if name == "invalid_api_key":
        message = incorrect_key_message(bearer_key(request_headers))
        return json_answer(status, error_body(message, code=name))
    if name == "model_not_found":
        message = (
            f"The model `{step.get('model', model)}` does not exist or you do not have access"
            " to it."
        )
        return json_answer(status, error_body(message, code=name))
    limit_tokens = int(step.get("max_tokens", 8192))
    used = int(step.get("prompt_tokens") or max(prompt_tokens(request), limit_tokens + 1))
    message = (
        f"This model's maximum context length is {limit_tokens} tokens. However, your "
        f"messages resulted in {used} tokens. Please reduce the length of the messages."
    )
    return json_answer(status, error_body(message, param="messages", code=name))
