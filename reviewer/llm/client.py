"""The model endpoint: the only importer of `openai`.

One call, `ChatModel.complete`, sends the conversation and returns a normalized reply.
Here live the retries (our own, so they respect the review's deadline and `retry-after`),
the translation of permanent errors into one-line messages that say what to fix, and the
servers' quirks (quirks.py holds them as data; this module carries out what a row says).
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import openai

from reviewer.config import Settings
from reviewer.errors import ReviewerError
from reviewer.llm.quirks import (
    ADAPT_NOTES,
    Action,
    ServerProfile,
    error_code,
    find_quirk,
    server_message,
)
from reviewer.llm.replies import Reply, for_server, normalize
from reviewer.sinks import for_model

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MAX_BACKOFF_SECONDS = 30.0
# A failure the server says is worth retrying (Groq's tool_use_failed) is retried this often.
_QUIRK_RETRIES = 2


class ModelError(ReviewerError):
    """The model endpoint failed in a way retrying will not fix."""


class ContextLengthError(ModelError):
    """The request was larger than the model's context window."""


class ErrorInBody(Exception):
    """A 200 answer that holds an error and no reply (OpenRouter does this)."""

    def __init__(self, body: Any) -> None:
        super().__init__(server_message(body, "an error without a message"))
        self.body = body
        inner = body.get("error") if isinstance(body, dict) else None
        code = inner.get("code") if isinstance(inner, dict) else None
        self.status_code = code if isinstance(code, int) and 400 <= code <= 599 else 502


def check_base_url(url: str) -> None:
    """Before the first request: a URL the client would only time out on says so now."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ReviewerError(
            f"OPENAI_BASE_URL '{url}' is not an http(s) URL; write it in full, e.g. "
            "http://localhost:11434/v1"
        )


class Connection:
    """The one `openai` client of a review, shared by all its loops: a client builds an
    HTTP pool and an SSL context (even for plain http), which cost more than a fast
    model's answer when every batch made its own. httpx clients are thread-safe."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return self.settings.base_url or DEFAULT_BASE_URL

    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                settings = self.settings
                key = settings.api_key.get_secret_value() if settings.api_key else ""
                self._client = openai.OpenAI(
                    api_key=key or "unused",
                    base_url=self.base_url,
                    timeout=settings.request_timeout,
                    max_retries=0,  # retried here, against the review's own deadline
                )
            return self._client


@dataclass
class ChatModel:
    settings: Settings
    # Shared by every loop of a review: what one batch learns, the others use.
    profile: ServerProfile = field(default_factory=ServerProfile)
    # Injected for tests and progress output; `time.sleep` by default.
    sleep: Callable[[float], None] = time.sleep
    on_retry: Callable[[str, float], None] | None = None
    on_note: Callable[[str], None] | None = None
    tool_names: frozenset[str] | None = None
    # The review's client; a model of its own gets one.
    connection: Connection | None = None
    _calls: int = field(default=0, init=False)

    @property
    def base_url(self) -> str:
        return self.settings.base_url or DEFAULT_BASE_URL

    @property
    def client(self) -> openai.OpenAI:
        if self.connection is None:
            self.connection = Connection(self.settings)
        return self.connection.client()

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], deadline: float
    ) -> Reply:
        """One model reply; transient failures are retried until `deadline` (monotonic), and
        a known quirk is adapted to (once per review) before the request is sent again."""
        check_base_url(self.base_url)
        attempt = quirk_retries = 0
        while True:
            # What the request about to be sent already adapts to (another loop of the
            # review may learn something while it is under way).
            known = frozenset(self.profile.learnt)
            try:
                return self._ask(messages, tools, attempt)
            except Exception as exc:
                status, code, message = _facts(exc)
                # An error inside a 200 has no status of its own: any row may match its text.
                in_body = isinstance(exc, ErrorInBody)
                quirk = find_quirk(None if in_body else status, code, message) if status else None
                if quirk and quirk.action is Action.ADAPT and quirk.detail not in known:
                    if self.profile.apply(quirk.detail):
                        note = ADAPT_NOTES[quirk.detail]
                        self._note(f"the server refused a request ({message}); from now on {note}")
                    continue
                if quirk and quirk.action is Action.RETRY and quirk_retries < _QUIRK_RETRIES:
                    quirk_retries += 1
                    if self.on_retry:
                        self.on_retry(f"{quirk.detail}: {message}", 0.5)
                    self.sleep(0.5)
                    continue
                delay = self._retry_delay(exc, attempt, deadline, quirk is None)
                if delay is None:
                    raise self._permanent(exc, quirk) from exc
                if self.on_retry:
                    self.on_retry(_describe(exc), delay)
                self.sleep(delay)
                attempt += 1

    def _ask(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], retries: int
    ) -> Reply:
        profile = self.profile
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": for_server(
                messages,
                one_call_per_message=profile.one_call_per_message,
                strip_reasoning=profile.strip_reasoning,
            ),
            "tools": tools,
        }
        if profile.one_call_per_message:
            request["parallel_tool_calls"] = False
        if self.settings.temperature is not None and not profile.drop_temperature:
            request["temperature"] = self.settings.temperature
        if self.settings.max_output_tokens is not None:
            key = "max_completion_tokens" if profile.use_max_completion_tokens else "max_tokens"
            request[key] = self.settings.max_output_tokens
        # Every string leaves as valid UTF-8, whoever made it (sinks.for_model).
        request = for_model(request)
        if profile.stream:
            reply = self._streamed(request, retries)
        else:
            response = self.client.chat.completions.create(**request)
            data = response.model_dump(mode="json", exclude_none=True, warnings=False)
            if not data.get("choices") and data.get("error"):
                raise ErrorInBody(data)
            choice = (data.get("choices") or [{}])[0]
            self._calls += 1
            reply = normalize(
                choice.get("message"),
                choice.get("finish_reason"),
                data.get("usage"),
                self._calls,
                retries=retries,
                tool_names=self.tool_names,
            )
        return reply

    def _streamed(self, request: dict[str, Any], retries: int) -> Reply:
        """The reply assembled from a stream: content in pieces, tool calls by index (whole in
        one chunk, as Ollama sends them, or in fragments, as OpenAI does)."""
        stream = self.client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True}
        )
        content: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        extra: dict[str, Any] = {}
        finish_reason, usage = None, None
        for chunk in stream:
            data = chunk.model_dump(mode="json", exclude_none=True, warnings=False)
            if data.get("error") and not data.get("choices"):
                raise ErrorInBody(data)
            usage = data.get("usage") or usage
            for choice in data.get("choices") or []:
                finish_reason = choice.get("finish_reason") or finish_reason
                delta = choice.get("delta") or {}
                if isinstance(delta.get("content"), str):
                    content.append(delta["content"])
                for piece in delta.get("tool_calls") or []:
                    call = calls.setdefault(int(piece.get("index", len(calls))), {"function": {}})
                    for key, value in piece.items():
                        if key == "function":
                            function = call["function"]
                            function["name"] = function.get("name", "") + (value.get("name") or "")
                            arguments = value.get("arguments")
                            if isinstance(arguments, str):
                                function["arguments"] = function.get("arguments", "") + arguments
                            elif arguments is not None:
                                function["arguments"] = arguments
                        elif key != "index":
                            call[key] = value
                for key, value in delta.items():
                    if key not in ("content", "tool_calls", "role") and isinstance(value, str):
                        extra[key] = extra.get(key, "") + value
        self._calls += 1
        message = {**extra, "role": "assistant", "content": "".join(content)}
        if calls:
            message["tool_calls"] = [calls[index] for index in sorted(calls)]
        return normalize(
            message, finish_reason, usage, self._calls, retries=retries, tool_names=self.tool_names
        )

    def _note(self, text: str) -> None:
        if self.on_note:
            self.on_note(text)

    def _retry_delay(
        self, exc: Exception, attempt: int, deadline: float, unknown: bool
    ) -> float | None:
        if attempt >= self.settings.max_retries or not (unknown and _is_transient(exc)):
            return None
        delay = _server_delay(exc)
        if delay is None:
            delay = min(_MAX_BACKOFF_SECONDS, 1.0 * 2**attempt) * random.uniform(0.8, 1.2)
        if time.monotonic() + delay >= deadline:
            return None
        return delay

    def _permanent(self, exc: Exception, quirk: Any) -> ModelError:
        where = f"at {self.base_url}"
        model = self.settings.model
        status, _code, message = _facts(exc)
        if quirk is not None and quirk.action is Action.CONTEXT:
            return ContextLengthError(
                f"the request exceeded the model's context window: {message}; "
                "lower context_window to match the model"
            )
        if quirk is not None and quirk.action is Action.STOP:
            return ModelError(f"the model endpoint {where} cannot call tools: {message}; "
                              f"{quirk.detail}")  # fmt: skip
        if quirk is not None:
            return ModelError(f"the model endpoint {where} answered {status}: {message}")
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
                f"the endpoint {where} rejected the API key (401: {message}); check OPENAI_API_KEY"
            )
        if isinstance(exc, openai.PermissionDeniedError):
            return ModelError(f"the endpoint {where} refused access (403): {message}")
        if isinstance(exc, openai.NotFoundError):
            hint = _not_found_hint(self.base_url, model)
            return ModelError(
                f"the endpoint {where} answered 404 for model '{model}' ({message}); {hint}"
            )
        if status and _code == "insufficient_quota":
            return ModelError(f"the account {where} has no quota left: {message}")
        if status:
            return ModelError(
                f"the model endpoint {where} answered {status} "
                f"after {self.settings.max_retries} retries: {message}"
                if _is_transient(exc)
                else f"the model endpoint {where} rejected the request ({status}): {message}"
            )
        return ModelError(f"the model endpoint {where} failed: {_describe(exc)}")


def _not_found_hint(base_url: str, model: str | None) -> str:
    """The likely cause of a 404, from the URL's shape."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if "/openai/deployments/" in path and "api-version" not in parts.query:
        return (
            "an Azure deployment URL needs ?api-version=...; or use the v1 API: "
            f"{parts.scheme}://{parts.netloc}/openai/v1 with the deployment name as the model"
        )
    if not path.endswith(("/v1", "/openai", "/v1beta/openai")) and "/v" not in path:
        return (
            f"the base URL may lack its API path: most servers want {base_url.rstrip('/')}/v1; "
            "else set --model or REVIEWER_MODEL to a model this server serves"
        )
    return "set --model or REVIEWER_MODEL to a model this server serves"


def _facts(exc: Exception) -> tuple[int | None, str | None, str]:
    """(status, code, the server's own message) of any failure."""
    if isinstance(exc, ErrorInBody):
        return exc.status_code, error_code(exc.body), str(exc)
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        if body is None:
            try:
                body = exc.response.text
            except Exception:  # a streamed response may not be readable any more
                body = None
        code = getattr(exc, "code", None) or error_code(body)
        return exc.status_code, str(code) if code else None, server_message(body, str(exc))
    return None, None, _cause(exc)


def _is_transient(exc: Exception) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    status, code, _message = _facts(exc)
    if status is None or code == "insufficient_quota":
        return False
    return status in (408, 409, 429) or status >= 500


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


def _cause(exc: Exception) -> str:
    cause = exc.__cause__ or exc.__context__
    return " ".join(str(cause or exc).split())[:200] or type(exc).__name__


def _describe(exc: Exception) -> str:
    status, _code, message = _facts(exc)
    return f"{status} {message}" if status else f"{type(exc).__name__}: {_cause(exc)}"
