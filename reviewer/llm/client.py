"""The model endpoint: with failures.py, the only importer of `openai`.

One call, `ChatModel.complete`, sends the conversation and returns a normalized reply.
Here live the retries (our own, so they respect the review's deadline and `retry-after`)
and the servers' quirks (quirks.py holds them as data; this module carries out what a row
says). failures.py turns a failure into one line that says what to fix; endpoint.py keeps a
review's loops from each asking an endpoint that cannot answer.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import openai

from reviewer.errors import ReviewerError
from reviewer.llm.endpoint import EndpointGate, lasting_connection_failure
from reviewer.llm.failures import (
    DEFAULT_BASE_URL,
    EndpointError,
    ErrorInBody,
    NotAnAnswer,
    ReplyTimedOut,
    describe,
    facts,
    is_transient,
    permanent_error,
    timed_out_mid_reply,
    whole_review,
)
from reviewer.llm.quirks import ADAPT_NOTES, Action, ServerProfile, find_quirk
from reviewer.llm.replies import Reply, for_server, normalize
from reviewer.llm.reply_size import reply_cap
from reviewer.llm.text_calls import FinalShape
from reviewer.safety.sinks import for_model
from reviewer.settings.config import Settings

_MAX_BACKOFF_SECONDS = 30.0
# A failure the server says is worth retrying (Groq's tool_use_failed) is retried this often.
_QUIRK_RETRIES = 2


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
        # Until the endpoint answers once, one loop asks at a time (endpoint.py).
        self.gate = EndpointGate()

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
    # The loop's final tool: its arguments written alone as the reply are a call of it.
    final_tool: str | None = None
    # Asked of a request without tools (a judge's JSON answer); left out when the server
    # refuses it, and the answer is then parsed from plain text.
    response_format: dict[str, Any] | None = None
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
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        deadline: float,
        answer_format: dict[str, Any] | None = None,
    ) -> Reply:
        """One model reply; transient failures are retried until `deadline` (monotonic), and
        a known quirk is adapted to (once per review) before the request is sent again. A
        failure of the endpoint itself ends every loop of the review (EndpointGate).

        With `answer_format` (a `response_format` naming the final tool), the request offers
        no tools and asks for the final tool's arguments held to that schema; the reply's
        text is read as the call (loop/structured_answer.py)."""
        check_base_url(self.base_url)
        if self.connection is None:
            self.connection = Connection(self.settings)
        gate = self.connection.gate
        first = gate.enter()
        try:
            return self._complete(messages, tools, deadline, gate, answer_format)
        except EndpointError as failure:
            gate.fail(failure)
            raise
        finally:
            if first:
                gate.leave()

    def _complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        deadline: float,
        gate: EndpointGate,
        answer_format: dict[str, Any] | None,
    ) -> Reply:
        attempt = quirk_retries = 0
        while True:
            # What the request about to be sent already adapts to (another loop of the
            # review may learn something while it is under way).
            known = frozenset(self.profile.learnt)
            try:
                reply = self._ask(messages, tools, attempt, answer_format)
                gate.answered()
                return reply
            except Exception as exc:
                if timed_out_mid_reply(exc):
                    raise ReplyTimedOut(str(permanent_error(exc, None, self.settings))) from exc
                status, code, message = facts(exc)
                # An error inside a 200 has no status of its own: any row may match its text.
                in_body = isinstance(exc, ErrorInBody)
                quirk = find_quirk(None if in_body else status, code, message) if status else None
                if (
                    quirk
                    and quirk.action is Action.ADAPT
                    and quirk.detail not in known
                    and self._sent_what_adapting_drops(quirk.detail)
                ):
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
                    error = permanent_error(exc, quirk, self.settings)
                    if whole_review(exc, quirk, error, gate.has_answered, self.base_url):
                        raise EndpointError(str(error)) from exc
                    if status is not None:
                        gate.answered()
                    raise error from exc
                if self.on_retry:
                    self.on_retry(describe(exc), delay)
                self.sleep(delay)
                attempt += 1

    def _ask(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        retries: int,
        answer_format: dict[str, Any] | None = None,
    ) -> Reply:
        profile = self.profile
        final = FinalShape.of(self.final_tool, tools)
        response_format = self.response_format
        if answer_format is not None:
            # The final call's arguments as the whole reply: no tools to call instead.
            tools, response_format = [], answer_format
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": for_server(
                messages,
                one_call_per_message=profile.one_call_per_message,
                strip_reasoning=profile.strip_reasoning,
            ),
        }
        # An empty list is a 400 on OpenAI ("[] is too short"): a plain request has no key.
        if tools:
            request["tools"] = tools
            if self.settings.tool_choice == "required" and not profile.drop_tool_choice:
                request["tool_choice"] = "required"
        if response_format is not None and not profile.drop_response_format:
            request["response_format"] = response_format
        if profile.one_call_per_message:
            request["parallel_tool_calls"] = False
        if self.settings.temperature is not None and not profile.drop_temperature:
            request["temperature"] = self.settings.temperature
        # Always capped: a small model under a grammar can write until the context is full.
        key = "max_completion_tokens" if profile.use_max_completion_tokens else "max_tokens"
        request[key] = reply_cap(self.settings)
        # Every string leaves as valid UTF-8, whoever made it (sinks.for_model).
        request = for_model(request)
        if profile.stream:
            reply = self._streamed(request, retries, final)
        else:
            response = self.client.chat.completions.create(**request)
            data = _completion_data(response)
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
                final=final,
            )
        return reply

    def _streamed(self, request: dict[str, Any], retries: int, final: FinalShape | None) -> Reply:
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
            message,
            finish_reason,
            usage,
            self._calls,
            retries=retries,
            tool_names=self.tool_names,
            final=final,
        )

    def _sent_what_adapting_drops(self, flag: str) -> bool:
        """False when the request never had what `flag` leaves out: a 400 that names
        tool_choice (LM Studio's "Invalid tool_choice type") is then the server's own word."""
        return flag != "drop_tool_choice" or self.settings.tool_choice == "required"

    def _note(self, text: str) -> None:
        if self.on_note:
            self.on_note(text)

    def _retry_delay(
        self, exc: Exception, attempt: int, deadline: float, unknown: bool
    ) -> float | None:
        if attempt >= self.settings.max_retries or not (unknown and is_transient(exc)):
            return None
        if lasting_connection_failure(exc, self.base_url):
            return None  # a closed local port or an unknown host: asking again changes nothing
        delay = _server_delay(exc)
        if delay is None:
            delay = min(_MAX_BACKOFF_SECONDS, 1.0 * 2**attempt) * random.uniform(0.8, 1.2)
        if time.monotonic() + delay >= deadline:
            return None
        return delay


def _completion_data(response: Any) -> dict[str, Any]:
    """The chat completion as JSON data; a 200 that is not one (the client hands back a web
    page as text) is NotAnAnswer."""
    if not hasattr(response, "model_dump"):
        raise NotAnAnswer(response)
    data: dict[str, Any] = response.model_dump(mode="json", exclude_none=True, warnings=False)
    if not isinstance(data.get("choices"), list) and not data.get("error"):
        raise NotAnAnswer(json.dumps(data)[:500])
    return data


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
