"""The fake LLM server: a scripted OpenAI-compatible endpoint on 127.0.0.1, standard library only.

Each chat request that a real server would accept consumes the next script step; requests a
real server would refuse (no key, bad JSON, unanswered tool calls) are refused the same way
and consume nothing, so one agent-loop bug does not shift every later answer.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from reviewer.testing._llm_http import LoopbackFake, LoopbackServer, Plan
from reviewer.testing._llm_presets import render_error
from reviewer.testing._llm_script import (
    ScriptError,
    Step,
    check_expectations,
    check_step,
    render_message,
    step_kind,
)
from reviewer.testing._llm_wire import (
    Answer,
    JsonObject,
    RequestProblem,
    check_auth,
    check_chat_request,
    completion_body,
    error_body,
    json_answer,
    parse_json,
    stream_chunks,
)

HOST = "127.0.0.1"
# Where the API is served, as on api.openai.com/v1 and most OpenAI-compatible servers
# (Ollama, vLLM, llama.cpp, LM Studio): the base URL a client is given ends with it.
API_PREFIX = "/v1"
# The fake's own refusals are final: without this the openai client would retry a 500 twice
# and a test would read three copies of one failure.
NO_RETRY = {"x-should-retry": "false"}


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as received, for assertions."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # the parsed JSON, or None when the body was empty or not JSON


class _StepFailure(Exception):
    """The script could not answer: recorded in `.failures`, answered with this status."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.ends_script = False


class FakeLLM(LoopbackFake):
    """A scripted OpenAI-compatible chat server on 127.0.0.1 (an ephemeral port by default).

    It serves from a daemon thread as soon as it is built; use it as a context manager or call
    `close()`. Point a client at `base_url`. Streaming (`stream: true`) is supported: chunks
    as OpenAI sends them, `stream_options.include_usage` honoured.

    `on_exhausted`: "error" (default) answers 500 "fake LLM script exhausted" and records a
    failure; "repeat_last" plays the last step again. `omit_tool_call_ids` drops every tool
    call id, as some compatible servers do. `strict=False` accepts what lenient local servers
    accept (unanswered tool calls, `tool_choice` without tools). `api_key`: when set, any
    other key gets a 401; the `Authorization: Bearer` header is always required.
    """

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        model: str = "fake-model",
        api_key: str | None = None,
        on_exhausted: Literal["error", "repeat_last"] = "error",
        omit_tool_call_ids: bool = False,
        strict: bool = True,
        port: int = 0,
    ) -> None:
        if on_exhausted not in ("error", "repeat_last"):
            raise ValueError("on_exhausted is 'error' or 'repeat_last'")
        self.model = model
        self._api_key = api_key
        self._on_exhausted = on_exhausted
        self._omit_ids = omit_tool_call_ids
        self._strict = strict
        self._lock = threading.Lock()
        self._steps: list[Step] = []
        self._used = 0
        self._completions = 0
        self._calls = 0
        self._requests: list[RecordedRequest] = []
        self._failures: list[str] = []
        self._done = threading.Event()
        self._closing = threading.Event()
        self._created = int(time.time())
        self.add(*script)
        if not self._steps:
            self._done.set()
        self._server = LoopbackServer(
            HOST, port, answer=self._plan, closing=self._closing, done=self._done
        )
        self.port: int = self._server.server_address[1]
        self._thread = self._server.serve_in_background(f"fake-llm-{self.port}")

    @property
    def url(self) -> str:
        """The server's root, without /v1: a client given it gets 404s (use `base_url`)."""
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give the client: `OpenAI(base_url=llm.base_url, api_key="test")`. The API is
        served under /v1 only: `url` alone answers 404, as a real server does."""
        return f"{self.url}{API_PREFIX}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every HTTP request received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat completion requests, in order."""
        return [r.body for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    @property
    def failures(self) -> list[str]:
        """What went wrong on the fake's side: unmet expectations, an exhausted script, and
        requests it refused on its own (scripted errors are not failures)."""
        with self._lock:
            return list(self._failures)

    @property
    def steps_used(self) -> int:
        with self._lock:
            return self._used

    @property
    def done(self) -> bool:
        """True once every step has been answered."""
        return self._done.is_set()

    def wait_done(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def add(self, *steps: Step) -> None:
        """Append steps to the script (checked now, not when played)."""
        with self._lock:
            start = len(self._steps)
            for offset, step in enumerate(steps):
                check_step(step, f"step {start + offset + 1}")
            self._steps.extend(steps)
            if steps:
                self._done.clear()

    def assert_no_failures(self) -> None:
        failures = self.failures
        assert not failures, "fake LLM failures:\n" + "\n".join(failures)

    def __repr__(self) -> str:
        return f"FakeLLM({self.base_url!r}, steps_used={self.steps_used}/{len(self._steps)})"

    def _fail(self, message: str) -> None:
        with self._lock:
            self._failures.append(message)

    def _plan(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Plan:
        """The answer to one HTTP request (called from the handler threads)."""
        path = urlsplit(target).path
        # Served under /v1 only, as OpenAI and the servers that copy it are: a base URL without
        # /v1 gets OpenAI's own 404, `Invalid URL (POST /chat/completions)` (an
        # invalid_request_error, param and code null; as users met it:
        # Chanzhaoyu/chatgpt-web#737, OpenHands/OpenHands#485, both fixed by adding /v1).
        route = path.rstrip("/")
        route = route.removeprefix(API_PREFIX) if route.startswith(API_PREFIX + "/") else ""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self._requests.append(RecordedRequest(method, path, headers, body))
            number = len(self._requests)
        try:
            if route == "/chat/completions" and method == "POST":
                plan = self._chat(headers, raw, number)
            elif route == "/models" and method == "GET":
                check_auth(headers, self._api_key)
                plan = Plan(json_answer(200, {"object": "list", "data": [self._model_object()]}))
            elif route.startswith("/models/") and method == "GET":
                check_auth(headers, self._api_key)
                plan = Plan(self._one_model(route.removeprefix("/models/")))
            else:
                raise RequestProblem(404, f"Invalid URL ({method} {path})")
        except RequestProblem as problem:
            self._fail(f"request {number} ({method} {path}): refused {problem.status}: {problem}")
            plan = Plan(json_answer(problem.status, problem.body))
        except _StepFailure as failure:
            self._fail(f"request {number}: {failure}")
            body = error_body(str(failure), error_type="fake_llm_error", code=failure.code)
            plan = Plan(
                json_answer(failure.status, body, NO_RETRY), ends_script=failure.ends_script
            )
        plan.answer.headers.setdefault("x-request-id", f"req_{number}")
        return plan

    def _model_object(self) -> JsonObject:
        return {"id": self.model, "object": "model", "created": self._created, "owned_by": "fake"}

    def _one_model(self, name: str) -> Answer:
        if name == self.model:
            return json_answer(200, self._model_object())
        message = f"The model `{name}` does not exist or you do not have access to it."
        raise RequestProblem(404, message, code="model_not_found")

    def _chat(self, headers: dict[str, str], raw: bytes, number: int) -> Plan:
        check_auth(headers, self._api_key)
        request = parse_json(raw)
        check_chat_request(request, strict=self._strict)
        if request.get("stream") and not isinstance(request.get("stream"), bool):
            raise RequestProblem(400, "Invalid type for 'stream': expected a boolean.")
        step, where, ends_script = self._next_step(number)
        try:
            step = self._resolve(step, request, where)
            problems = check_expectations(step.get("expect", {}), request)
            if problems:
                message = f"fake LLM expectation failed at {where}: " + "; ".join(problems)
                raise _StepFailure(400, message, "fake_expectation_failed")
        except _StepFailure as failure:
            failure.ends_script = ends_script  # a failed step is still a used step
            raise
        if step_kind(step) == "reply":
            answer = self._completion(step, request)
        else:
            answer = render_error(step, request, headers)
        answer.headers.update(step.get("headers", {}))
        return Plan(answer, float(step.get("delay", 0)), ends_script)

    def _next_step(self, number: int) -> tuple[Step, str, bool]:
        with self._lock:
            if self._used < len(self._steps):
                self._used += 1
                ends_script = self._used == len(self._steps)
                return self._steps[self._used - 1], f"step {self._used}", ends_script
            if self._on_exhausted == "repeat_last" and self._steps:
                return self._steps[-1], f"step {len(self._steps)} (repeated)", False
            total = len(self._steps)
        message = (
            f"fake LLM script exhausted: request {number} arrived after all {total} step(s) "
            "were used"
        )
        raise _StepFailure(500, message, "fake_script_exhausted")

    def _resolve(self, step: Step, request: JsonObject, where: str) -> Mapping[str, Any]:
        if not callable(step):
            return step
        try:
            # A copy: the function may mutate what it is given without changing the record.
            produced = step(copy.deepcopy(request))
        except Exception as exc:
            message = f"{where}: the step function raised {exc!r}"
            raise _StepFailure(500, message, "fake_step_error") from exc
        try:
            if callable(produced):
                raise ScriptError(f"{where}: a step function must return a step, not a function")
            check_step(produced, f"{where} (returned by the step function)")
        except ScriptError as exc:
            raise _StepFailure(500, str(exc), "fake_step_error") from None
        return produced

    def _completion(self, step: Mapping[str, Any], request: JsonObject) -> Answer:
        message, finish_reason, usage = render_message(
            step, request, self._new_call_id, self._omit_ids
        )
        with self._lock:
            self._completions += 1
            number = self._completions
        body = completion_body(
            number=number,
            model=request["model"],
            message=message,
            finish_reason=finish_reason,
            usage=usage,
        )
        if not request.get("stream"):
            return json_answer(200, body)
        options = request.get("stream_options") or {}
        events = stream_chunks(
            body,
            include_usage=bool(options.get("include_usage")),
            whole_tool_calls=step.get("stream_tool_calls") == "whole",
        )
        return Answer(200, content_type="text/event-stream; charset=utf-8", events=list(events))

    def _new_call_id(self) -> str:
        with self._lock:
            self._calls += 1
            return f"call_{self._calls}"
