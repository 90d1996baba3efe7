"""The fake LLM answers the real openai client over real HTTP as real servers do."""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from reviewer.testing import (
    FakeLLM,
    ScriptError,
    bad_gateway,
    context_length_exceeded,
    delay,
    error,
    expect,
    insufficient_quota,
    invalid_api_key,
    load_script,
    model_not_found,
    rate_limit_exceeded,
    raw,
    reply,
    server_error,
    service_unavailable,
    tool_call,
)

PROJECT = Path(__file__).resolve().parents[1]
USER = [{"role": "user", "content": "Review this change."}]
READ_FILE_TOOL = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy from the environment would swallow loopback requests.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@functools.cache
def _base_client() -> openai.OpenAI:
    return openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="test", max_retries=0)


def client(llm: FakeLLM, **options: Any) -> openai.OpenAI:
    # Copies share one HTTP client: building a client costs ~0.1 s (TLS context), a request 3 ms.
    return _base_client().with_options(base_url=llm.base_url, **options)


def chat(llm: FakeLLM, messages: list[dict[str, Any]] = USER, **options: Any) -> Any:
    return client(llm).chat.completions.create(model="m", messages=messages, **options)  # type: ignore[arg-type]


def http(
    url: str, data: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """A bare request (no openai client) to see exactly what is on the wire."""
    request = urllib.request.Request(url, data=data, headers=headers or {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


AUTH = {"Authorization": "Bearer test", "Content-Type": "application/json"}


def test_a_plain_reply_has_the_openai_wire_shape() -> None:
    with FakeLLM([reply("Looks good."), reply("Again.")]) as llm:
        completion = chat(llm)
        body = json.dumps({"model": "gpt-x", "messages": USER}).encode()
        status, headers, data = http(f"{llm.base_url}/chat/completions", body, AUTH)
    assert completion.choices[0].message.content == "Looks good."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.id == "chatcmpl-1"
    assert completion.model == "m"
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    assert status == 200 and headers["Content-Type"] == "application/json"
    wire = json.loads(data)
    assert set(wire) == {"id", "object", "created", "model", "choices", "usage"}
    assert wire["object"] == "chat.completion" and wire["model"] == "gpt-x"
    assert wire["choices"][0] == {
        "index": 0,
        "finish_reason": "stop",
        "logprobs": None,
        "message": {"role": "assistant", "content": "Again.", "refusal": None},
    }
    usage = wire["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert [r.body["model"] for r in llm.requests] == ["m", "gpt-x"]
    assert llm.requests[0].headers["authorization"] == "Bearer test"
    assert llm.failures == [] and llm.done


@pytest.mark.parametrize("path", ["/chat/completions", "/models", "/v2/chat/completions", "/"])
def test_the_api_is_under_v1_only_and_elsewhere_is_openais_404(path: str) -> None:
    # A base URL without /v1 is the most common mistake; OpenAI answers it 404 "Invalid URL
    # (POST /chat/completions)", an invalid_request_error with param and code null
    # (Chanzhaoyu/chatgpt-web#737, OpenHands/OpenHands#485: both fixed by adding /v1).
    body = json.dumps({"model": "m", "messages": USER}).encode()
    with FakeLLM([reply("never played")]) as llm:
        status, headers, data = http(f"{llm.url}{path}", body, AUTH)
        assert llm.steps_used == 0 and not llm.done
    assert status == 404 and headers["Content-Type"] == "application/json"
    assert json.loads(data) == {
        "error": {
            "message": f"Invalid URL (POST {path})",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    assert llm.failures == [f"request 1 (POST {path}): refused 404: Invalid URL (POST {path})"]


def test_tool_calls_carry_json_string_arguments_and_ids() -> None:
    calls = [
        tool_call("read_file", {"path": "app.py"}),
        tool_call("search_text", '{"pattern": "TODO"', call_id="call_custom"),  # invalid JSON
    ]
    with FakeLLM([reply(tool_calls=calls)]) as llm:
        message = chat(llm).choices[0]
    assert message.finish_reason == "tool_calls"
    assert message.message.content is None
    first, second = message.message.tool_calls
    assert (first.id, first.type, first.function.name) == ("call_1", "function", "read_file")
    assert json.loads(first.function.arguments) == {"path": "app.py"}
    assert (second.id, second.function.arguments) == ("call_custom", '{"pattern": "TODO"')


@pytest.mark.parametrize("mode", ["step", "server", "null"])
def test_tool_call_ids_can_be_missing_as_some_servers_send_them(mode: str) -> None:
    step = reply(tool_calls=[tool_call("read_file", {"path": "a.py"})])
    if mode == "step":
        step = reply(tool_calls=step["tool_calls"], omit_tool_call_ids=True)
    if mode == "null":
        step = reply(tool_calls=[tool_call("read_file", {"path": "a.py"}, call_id=None)])
    with FakeLLM([step], omit_tool_call_ids=mode == "server") as llm:
        body = json.dumps({"model": "m", "messages": USER}).encode()
        _, _, data = http(f"{llm.base_url}/chat/completions", body, AUTH)
    wire_call = json.loads(data)["choices"][0]["message"]["tool_calls"][0]
    assert ("id" in wire_call) is (mode == "null")
    assert wire_call.get("id") is None and wire_call["function"]["name"] == "read_file"


def assistant_calls(*ids: str | None) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def tool_result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "file text"}


@pytest.mark.parametrize(
    ("messages", "text"),
    [
        (
            [*USER, assistant_calls("call_1", "call_2"), tool_result("call_1"), *USER],
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            "response messages: call_2",
        ),
        (
            [*USER, assistant_calls("call_1"), tool_result("call_9")],
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
        ),
        ([*USER, tool_result("call_1")], "messages with role 'tool' must be a response"),
        ([*USER, assistant_calls(None), tool_result("call_1")], "Missing required parameter"),
    ],
    ids=["unanswered", "unknown-id", "no-call", "null-id-echoed"],
)
def test_broken_conversations_get_openais_400(messages: list[dict[str, Any]], text: str) -> None:
    with FakeLLM([reply("fine")]) as llm:
        with pytest.raises(openai.BadRequestError) as caught:
            chat(llm, messages)
        assert text in caught.value.message
        assert llm.steps_used == 0, "a refused request consumes no step"
        assert len(llm.failures) == 1 and text[:30] in llm.failures[0]
        good = [*USER, assistant_calls("call_1"), tool_result("call_1")]
        assert chat(llm, good).choices[0].message.content == "fine"


def test_tool_options_need_tools() -> None:
    with FakeLLM([reply("fine")]) as llm, pytest.raises(openai.BadRequestError) as caught:
        chat(llm, tool_choice="auto")
    assert caught.value.param == "tool_choice"
    assert "'tool_choice' is only allowed when 'tools' are specified" in caught.value.message


def test_lenient_mode_accepts_what_local_servers_accept() -> None:
    with FakeLLM([reply("ok"), reply("ok")], strict=False) as llm:
        assert chat(llm, [*USER, assistant_calls("call_1"), *USER]).choices[0].message.content
        assert chat(llm, tool_choice="auto").choices[0].message.content


PRESETS = [
    (rate_limit_exceeded(), openai.RateLimitError, 429, "rate_limit_exceeded"),
    (insufficient_quota(), openai.RateLimitError, 429, "insufficient_quota"),
    (invalid_api_key(), openai.AuthenticationError, 401, "invalid_api_key"),
    (model_not_found(), openai.NotFoundError, 404, "model_not_found"),
    (context_length_exceeded(), openai.BadRequestError, 400, "context_length_exceeded"),
    (server_error(), openai.InternalServerError, 500, None),
    (service_unavailable(), openai.InternalServerError, 503, None),
    (bad_gateway(), openai.InternalServerError, 502, None),
    (error(418, "teapot", code="teapot"), openai.APIStatusError, 418, "teapot"),
]


@pytest.mark.parametrize(("step", "exc_class", "status", "code"), PRESETS)
def test_error_presets_raise_the_clients_exception(
    step: dict[str, Any], exc_class: type[openai.APIStatusError], status: int, code: str | None
) -> None:
    with FakeLLM([step]) as llm, pytest.raises(exc_class) as caught:
        chat(llm)
    assert caught.value.status_code == status
    assert caught.value.code == code
    assert llm.failures == [], "scripted errors are not failures"


def test_preset_details_match_the_real_services() -> None:
    steps = [
        rate_limit_exceeded(retry_after=2, limit="tokens"),
        context_length_exceeded(8192, 9000),
        model_not_found(),
        bad_gateway(),
        {**server_error(), "headers": {"x-extra": "yes"}},
    ]
    with FakeLLM(steps) as llm:
        caught = []
        for _ in steps:
            with pytest.raises(openai.APIStatusError) as exc_info:
                chat(llm)
            caught.append(exc_info.value)
    limited, too_long, missing, gateway, extra = caught
    assert limited.response.headers["retry-after"] == "2"
    assert limited.type == "tokens" and "Please try again in 2s" in limited.message
    assert too_long.param == "messages"
    assert too_long.body["message"] == (  # type: ignore[index]
        "This model's maximum context length is 8192 tokens. However, your messages "
        "resulted in 9000 tokens. Please reduce the length of the messages."
    )
    assert "The model `m` does not exist" in missing.message
    assert gateway.response.headers["content-type"] == "text/html"
    assert "<title>502 Bad Gateway</title>" in gateway.response.text
    assert extra.response.headers["x-extra"] == "yes"


def test_the_client_retries_a_429_then_succeeds() -> None:
    with FakeLLM([rate_limit_exceeded(retry_after_ms=1), reply("after retry")]) as llm:
        answer = client(llm, max_retries=2).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "after retry"
    assert len(llm.requests) == 2
    assert [r.headers["x-stainless-retry-count"] for r in llm.requests] == ["0", "1"]


def test_a_delay_beyond_the_client_timeout_raises_a_timeout() -> None:
    # Told by outcomes, not the clock: an answer delayed an hour times the client out; a
    # short delay is answered; and close() returns although the hour-long answer is still
    # pending (were it to wait for it, the join below, a guard against a hang, would expire).
    with FakeLLM([delay(3600, reply("too late")), delay(0.2, reply("in time"))]) as llm:
        with pytest.raises(openai.APITimeoutError):
            client(llm, timeout=0.3).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        assert chat(llm).choices[0].message.content == "in time"
        assert len(llm.requests) == 2
        closer = threading.Thread(target=llm.close)
        closer.start()
        closer.join(timeout=60)
        assert not closer.is_alive(), "close() waits for the answer delayed an hour"


def test_expectations_that_hold_leave_no_failures() -> None:
    script = [
        reply(
            tool_calls=[tool_call("read_file", {"path": "app.py"})],
            expect={"model": "m", "tools": ["read_file"], "last_role": "user"},
        ),
        expect(
            reply("Done."),
            tool_result_for="call_1",
            contains=["Review this", "read_file"],
            last_contains="file text",
            message_count=3,
        ),
    ]
    with FakeLLM(script) as llm:
        first = chat(llm, tools=[READ_FILE_TOOL]).choices[0].message
        turn = [*USER, first.model_dump(exclude_none=True), tool_result(first.tool_calls[0].id)]
        assert chat(llm, turn, tools=[READ_FILE_TOOL]).choices[0].message.content == "Done."
        llm.assert_no_failures()


def test_a_failed_expectation_answers_400_and_is_recorded() -> None:
    with FakeLLM([reply("x", expect={"tools": True, "model": "other"})]) as llm:
        with pytest.raises(openai.BadRequestError) as caught:
            chat(llm)
        assert caught.value.code == "fake_expectation_failed"
        (failure,) = llm.failures
        assert "step 1" in failure and "no tools were offered" in failure
        assert "model is 'm', expected 'other'" in failure
        with pytest.raises(AssertionError, match="no tools were offered"):
            llm.assert_no_failures()


def test_an_exhausted_script_answers_500_once_and_records_it() -> None:
    with FakeLLM([reply("only")]) as llm:
        chat(llm)
        with pytest.raises(openai.InternalServerError) as caught:
            client(llm, max_retries=2).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        assert "fake LLM script exhausted" in caught.value.message
        assert len(llm.requests) == 2, "x-should-retry: false stops the client's retries"
        assert len(llm.failures) == 1 and "fake LLM script exhausted" in llm.failures[0]


def test_repeat_last_replays_the_last_step() -> None:
    with FakeLLM([reply("a"), reply("b")], on_exhausted="repeat_last") as llm:
        answers = [chat(llm).choices[0].message.content for _ in range(4)]
    assert answers == ["a", "b", "b", "b"] and llm.failures == []


def test_a_callable_step_answers_from_the_request() -> None:
    def call_first_tool(request: dict[str, Any]) -> dict[str, Any]:
        name = request["tools"][0]["function"]["name"]
        return reply(tool_calls=[tool_call(name, {"path": "x"})])

    def broken(request: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("the prompt lost its diff")

    with FakeLLM([call_first_tool, broken, lambda request: {"contnet": "typo"}]) as llm:
        message = chat(llm, tools=[READ_FILE_TOOL]).choices[0].message
        assert message.tool_calls[0].function.name == "read_file"
        for _ in range(2):
            with pytest.raises(openai.InternalServerError):
                chat(llm)
        first, second = llm.failures
    assert "the step function raised AssertionError('the prompt lost its diff')" in first
    assert "unknown key(s) ['contnet']" in second


def test_usage_and_finish_reason_can_be_scripted() -> None:
    steps = [
        reply("cut", finish_reason="length", usage={"prompt_tokens": 7, "completion_tokens": 3}),
        reply("no usage", usage=None),
        raw({"choices": [{"message": {"content": "bare"}}]}),  # what lenient clients accept
    ]
    with FakeLLM(steps) as llm:
        cut, no_usage, bare = (chat(llm) for _ in steps)
    assert cut.choices[0].finish_reason == "length"
    assert (cut.usage.prompt_tokens, cut.usage.total_tokens) == (7, 10)
    assert no_usage.usage is None
    assert bare.choices[0].message.content == "bare" and bare.usage is None


def test_streaming_sends_openai_style_fragments() -> None:
    step = reply("Let me look.", tool_calls=[tool_call("read_file", {"path": "src/app.py"})])
    with FakeLLM([step]) as llm:
        with client(llm).chat.completions.stream(
            model="m", messages=USER, stream_options={"include_usage": True}
        ) as stream:
            final = stream.get_final_completion()
        body = llm.bodies[0]
    assert body["stream"] is True
    message = final.choices[0].message
    assert message.content == "Let me look."
    assert message.tool_calls[0].id == "call_1"
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "src/app.py"}
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.usage is not None and final.usage.completion_tokens > 0


def test_streaming_can_send_whole_tool_calls_like_ollama() -> None:
    step = reply(tool_calls=[tool_call("read_file", {"path": "a.py"})], stream_tool_calls="whole")
    with FakeLLM([step]) as llm:
        chunks = list(chat(llm, stream=True))
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    (with_call,) = [d for d in deltas if d.tool_calls]
    call = with_call.tool_calls[0]
    assert (call.id, call.function.name, call.function.arguments) == (
        "call_1",
        "read_file",
        '{"path": "a.py"}',
    )
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_models_are_listed(llm: FakeLLM) -> None:
    models = client(llm).models.list()
    assert [m.id for m in models] == ["fake-model"]
    with pytest.raises(openai.NotFoundError) as caught:
        client(llm).models.retrieve("gpt-missing")
    assert caught.value.code == "model_not_found"


def test_requests_without_a_key_or_json_or_known_path_are_refused(llm: FakeLLM) -> None:
    chat_url = f"{llm.base_url}/chat/completions"
    body = json.dumps({"model": "m", "messages": USER}).encode()
    status, _, data = http(chat_url, body, {"Content-Type": "application/json"})
    assert status == 401
    assert json.loads(data)["error"]["message"].startswith("You didn't provide an API key.")
    status, _, data = http(chat_url, b"{not json", AUTH)
    assert status == 400
    assert json.loads(data)["error"]["message"].startswith("We could not parse the JSON body")
    status, _, data = http(f"{llm.base_url}/nope", body, AUTH)
    assert status == 404
    assert json.loads(data) == {
        "error": {
            "message": "Invalid URL (POST /v1/nope)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    assert len(llm.failures) == 3 and llm.steps_used == 0


def test_a_configured_key_refuses_other_keys() -> None:
    with FakeLLM([reply("hi")], api_key="sk-right-key-1234") as llm:
        with pytest.raises(openai.AuthenticationError) as caught:
            chat(llm)  # sends "test"
        assert caught.value.code == "invalid_api_key"
        right = client(llm, api_key="sk-right-key-1234")
        assert right.chat.completions.create(model="m", messages=USER).choices  # type: ignore[arg-type]
        assert llm.requests[0].headers["authorization"] == "Bearer test"


def test_concurrent_requests_each_take_one_step() -> None:
    with FakeLLM([reply(str(n)) for n in range(8)]) as llm:
        answers: list[str] = []
        lock = threading.Lock()

        def ask() -> None:
            content = chat(llm).choices[0].message.content
            with lock:
                answers.append(content)

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert llm.wait_done(1)
    assert sorted(answers) == [str(n) for n in range(8)]


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"contnet": "x"}, "unknown key(s) ['contnet']"),
        ({"error": "rate_limited"}, "unknown error preset 'rate_limited'"),
        ({"error": "rate_limit_exceeded", "limit": "tokenz"}, "limit of preset"),
        ({"content": "x", "expect": {"modle": "m"}}, "unknown expect key(s) ['modle']"),
        ({"tool_calls": [{"arguments": {}}]}, "tool call 1 needs a name"),
        ({"finish_reason": "done"}, "finish_reason is one of"),
        ({"delay": -1}, "delay is a number"),
    ],
)
def test_mistyped_steps_are_refused_up_front(step: dict[str, Any], message: str) -> None:
    with pytest.raises(ScriptError, match="step 1") as caught:
        FakeLLM([step])
    assert message in str(caught.value)


def test_a_json_script_file_plays(tmp_path: Path) -> None:
    script = [
        {
            "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}],
            "expect": {"tools": True},
        },
        {"error": "rate_limit_exceeded", "retry_after": None, "retry_after_ms": 1},
        {"content": "Done.", "expect": {"tool_result_for": "call_1"}},
    ]
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    steps = load_script(path)
    assert steps == script
    with FakeLLM(steps) as llm:
        answer = client(llm, max_retries=1).chat.completions.create(
            model="m",
            messages=[*USER, assistant_calls("call_1"), tool_result("call_1")],  # type: ignore[list-item]
            tools=[READ_FILE_TOOL],  # type: ignore[list-item]
        )
        assert answer.choices[0].message.tool_calls[0].function.name == "read_file"
        retried = client(llm, max_retries=1).chat.completions.create(
            model="m",
            messages=[*USER, assistant_calls("call_1"), tool_result("call_1")],  # type: ignore[list-item]
        )
        assert retried.choices[0].message.content == "Done."
        llm.assert_no_failures()
    path.write_text('[{"content": 3}]', encoding="utf-8")
    with pytest.raises(ScriptError, match=r"step 1: content is a string or null"):
        load_script(path)
    path.write_text("{oops", encoding="utf-8")
    with pytest.raises(ScriptError, match="not valid JSON"):
        load_script(path)


def start_module(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "reviewer.testing.fake_llm", *args],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_module_entry_point_serves_until_terminated(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"content": "from a file"}, {"content": "unused"}]))
    process = start_module(str(path))
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        remote = _base_client().with_options(base_url=base_url)
        answer = remote.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        assert answer.choices[0].message.content == "from a file"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=5)
    assert process.returncode == 0, stderr
    assert stderr == ""  # no runpy double-import warning either


def test_the_module_entry_point_can_exit_when_done(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"content": "only", "expect": {"model": "other"}}]))
    process = start_module(str(path), "--exit-when-done")
    assert process.stdout is not None
    remote = _base_client().with_options(base_url=process.stdout.readline().strip())
    with pytest.raises(openai.BadRequestError):
        remote.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    _, stderr = process.communicate(timeout=5)
    assert process.returncode == 1, "a recorded failure makes the exit code 1"
    assert "expectation failed at step 1" in stderr


def test_the_program_on_a_busy_port_says_so_in_one_line(tmp_path, capsys) -> None:
    import socket

    from reviewer.testing.fake_llm import main as fake_main

    script = tmp_path / "script.json"
    script.write_text("[]")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = fake_main([str(script), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert f"cannot listen on 127.0.0.1:{port}" in err


def test_background_returns_once_the_server_listens_and_prints_its_pid(tmp_path: Path) -> None:
    # The README's recipe starts the server and reviews at once: a connection refused on this
    # machine is not retried, so the command must not return before the server listens.
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"content": "up"}]))
    # As a shell's $(...) runs it: stdout captured; stderr a file (the server keeps it).
    with (tmp_path / "err").open("w") as stderr:
        started = subprocess.run(
            [sys.executable, "-m", "reviewer.testing.fake_llm", str(path), "--background"],
            cwd=PROJECT,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=30,
            check=True,
        )
    pid = int(started.stdout.strip())
    try:
        base_url = (tmp_path / "err").read_text().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        remote = _base_client().with_options(base_url=base_url, max_retries=0)
        answer = remote.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        assert answer.choices[0].message.content == "up"
    finally:
        os.kill(pid, signal.SIGTERM)
    # Stopped: its port refuses connections (its process may linger as a zombie of init's).
    # It is not our child, so there is nothing to wait on: poll. The sleep only paces the
    # poll, and the 1,200 tries (a minute or more) are a guard that only a server that
    # never stops reaches; how soon it stops is not asserted.
    port = int(base_url.rsplit(":", 1)[1].split("/")[0])
    for _ in range(1200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except ConnectionRefusedError:
            break
        except ConnectionResetError:
            pass  # accepted while it was shutting down
        time.sleep(0.05)
    else:
        raise AssertionError("the background server did not stop")


def test_background_that_cannot_listen_says_why_and_fails(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"content": "up"}]))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failed = subprocess.run(
            [sys.executable, "-m", "reviewer.testing.fake_llm", str(path), "--background",
             "--port", str(port)],
            cwd=PROJECT, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
    assert failed.returncode == 2 and failed.stdout == ""
    assert "choose another --port" in failed.stderr
