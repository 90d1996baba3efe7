"""The model endpoint: the only importer of `openai`.

One call, `ChatModel.complete`, sends the conversation and returns a normalized reply.
Here live the retries (our own, so they respect the review's deadline and `retry-after`),
the translation of permanent errors into one-line messages that say what to fix, and the
quirks of OpenAI-compatible servers: missing tool-call ids, arguments that are objects or
invalid JSON, tool calls written into the message text, missing usage.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from reviewer.config import Settings
from reviewer.errors import ReviewerError
from reviewer.findings import Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MAX_BACKOFF_SECONDS = 30.0
_TEXT_TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


class ModelError(ReviewerError):
    """The model endpoint failed in a way retrying will not fix."""


class ContextLengthError(ModelError):
    """The request was larger than the model's context window."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    # As the server sent it: usually a JSON string; some servers send an object.
    arguments: str | dict[str, Any]

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

    def assistant_message(self) -> dict[str, Any]:
        """The message to append to the conversation, with ids every server accepts."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for call in self.tool_calls
            ]
        return message


@dataclass
class ChatModel:
    settings: Settings
    # Injected for tests and progress output; `time.sleep` by default.
    sleep: Callable[[float], None] = time.sleep
    on_retry: Callable[[str, float], None] | None = None
    _client: openai.OpenAI | None = field(default=None, init=False, repr=False)
    _calls: int = field(default=0, init=False)

    @property
    def base_url(self) -> str:
        return self.settings.base_url or DEFAULT_BASE_URL

    @property
    def client(self) -> openai.OpenAI:
        if self._client is None:
            key = self.settings.api_key.get_secret_value() if self.settings.api_key else ""
            self._client = openai.OpenAI(
                api_key=key or "unused",
                base_url=self.base_url,
                timeout=self.settings.request_timeout,
                max_retries=0,  # retried here, against the review's own deadline
            )
        return self._client

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], deadline: float
    ) -> Reply:
        """One model reply; transient failures are retried until `deadline` (monotonic)."""
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "tools": tools,
        }
        if self.settings.temperature is not None:
            request["temperature"] = self.settings.temperature
        if self.settings.max_output_tokens is not None:
            request["max_tokens"] = self.settings.max_output_tokens
        attempt = 0
        while True:
            try:
                response = self.client.chat.completions.create(**request)
                self._calls += 1
                return _normalize(response, self._calls, retries=attempt)
            except Exception as exc:
                delay = self._retry_delay(exc, attempt, deadline)
                if delay is None:
                    raise self._permanent(exc) from exc
                if self.on_retry:
                    self.on_retry(_describe(exc), delay)
                self.sleep(delay)
                attempt += 1

    def _retry_delay(self, exc: Exception, attempt: int, deadline: float) -> float | None:
        if attempt >= self.settings.max_retries or not _is_transient(exc):
            return None
        delay = _server_delay(exc)
        if delay is None:
            delay = min(_MAX_BACKOFF_SECONDS, 1.0 * 2**attempt) * random.uniform(0.8, 1.2)
        if time.monotonic() + delay >= deadline:
            return None
        return delay

    def _permanent(self, exc: Exception) -> ModelError:
        where = f"at {self.base_url}"
        model = self.settings.model
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(
                f"the model {where} did not answer within {self.settings.request_timeout:.0f} s; "
                "raise request_timeout or check the server"
            )
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(
                f"cannot reach the model endpoint {where}: {_cause(exc)}; check OPENAI_BASE_URL "
                "and that the server is running"
            )
        if isinstance(exc, openai.AuthenticationError):
            return ModelError(
                f"the endpoint {where} rejected the API key (401); check OPENAI_API_KEY"
            )
        if isinstance(exc, openai.PermissionDeniedError):
            return ModelError(f"the endpoint {where} refused access (403): {_message(exc)}")
        if isinstance(exc, openai.NotFoundError):
            return ModelError(
                f"model '{model}' not found {where} (404); set --model or REVIEWER_MODEL to a "
                "model this server serves"
            )
        if isinstance(exc, openai.APIStatusError):
            code = _error_code(exc)
            if code == "context_length_exceeded" or "context length" in _message(exc).lower():
                return ContextLengthError(
                    f"the request exceeded the model's context window: {_message(exc)}; "
                    "lower context_window to match the model"
                )
            if code == "insufficient_quota":
                return ModelError(f"the account {where} has no quota left: {_message(exc)}")
            return ModelError(
                f"the model endpoint {where} answered {exc.status_code} "
                f"after {self.settings.max_retries} retries: {_message(exc)}"
                if _is_transient(exc)
                else f"the model endpoint {where} rejected the request "
                f"({exc.status_code}): {_message(exc)}"
            )
        return ModelError(f"the model endpoint {where} failed: {_describe(exc)}")


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        if _error_code(exc) == "insufficient_quota":
            return False
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def _server_delay(exc: Exception) -> float | None:
    """The wait a server asked for, from `retry-after-ms` or `retry-after` (seconds or date)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    if value := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _error_code(exc: openai.APIStatusError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body) if isinstance(body, dict) else {}
    code = getattr(exc, "code", None) or (inner.get("code") if isinstance(inner, dict) else None)
    return str(code) if code else None


def _message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return " ".join(str(inner["message"]).split())[:300]
        if isinstance(inner, str):
            return " ".join(inner.split())[:300]
    return " ".join(str(exc).split())[:300]


def _cause(exc: Exception) -> str:
    cause = exc.__cause__ or exc.__context__
    return " ".join(str(cause or exc).split())[:200] or type(exc).__name__


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    return f"{status} {_message(exc)}" if status else f"{type(exc).__name__}: {_cause(exc)}"


def _normalize(response: Any, call_number: int, *, retries: int) -> Reply:
    """A Reply from whatever the server sent, tolerating the known quirks."""
    choices = getattr(response, "choices", None) or []
    message = choices[0].message if choices else None
    finish_reason = (choices[0].finish_reason if choices else None) or "stop"
    content = (getattr(message, "content", None) or "") if message else ""
    calls: list[ToolCall] = []
    for index, raw in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(raw, "function", None)
        name = getattr(function, "name", None) or ""
        arguments = getattr(function, "arguments", None)
        if arguments is None:
            arguments = ""
        call_id = getattr(raw, "id", None) or f"call_{call_number}_{index}"
        calls.append(ToolCall(call_id, name, arguments))
    from_text = False
    if not calls and content:
        calls = _calls_in_text(content, call_number)
        from_text = bool(calls)
    usage = getattr(response, "usage", None)
    return Reply(
        content=content,
        tool_calls=tuple(calls),
        finish_reason=finish_reason,
        usage=Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            requests=1,
        ),
        calls_from_text=from_text,
        retries=retries,
    )


def _calls_in_text(content: str, call_number: int) -> list[ToolCall]:
    """Tool calls some servers leave in the text: `<tool_call>{...}</tool_call>` or bare JSON."""
    candidates = _TEXT_TOOL_CALL.findall(content)
    if not candidates:
        stripped = content.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
        candidates = [stripped.strip()] if stripped.strip().startswith("{") else []
    calls = []
    for index, candidate in enumerate(candidates):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            continue
        arguments = data.get("arguments", data.get("parameters", {}))
        if not isinstance(arguments, str | dict):
            continue
        calls.append(ToolCall(f"call_{call_number}_text{index}", data["name"], arguments))
    return calls
