"""Real OpenAI-compatible servers' quirks, each imitated by a scripted server over real HTTP
with the real `openai` client, answering with the real server's wire shapes and texts (the
source of each is cited at the step).

Each quirk either completes (the request is adapted, retried or re-sent as the server wants)
or ends cleanly with the server's own reason in one line.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from reviewer.errors import ReviewerError
from reviewer.llm import ChatModel, ContextLengthError, ModelError, ServerProfile, check_base_url
from reviewer.settings.config import Settings
from reviewer.testing import FakeLLM, raw, reply, tool_call
from reviewer.testing.fake_llm import error

MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "review"}]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "parameters": {"type": "object", "properties": {}}},
    }
]


def model(llm: FakeLLM, profile: ServerProfile | None = None, **settings: Any) -> ChatModel:
    notes: list[str] = []
    values = {"model": "m", "api_key": "k", "base_url": llm.base_url, "max_retries": 2}
    chat = ChatModel(
        Settings(**{**values, **settings}),
        profile=profile or ServerProfile(),
        sleep=lambda seconds: None,
        on_note=notes.append,
    )
    chat.notes = notes  # type: ignore[attr-defined]
    return chat


def ask(chat: ChatModel, messages: list[dict[str, Any]] | None = None) -> Any:
    return chat.complete(messages or MESSAGES, TOOLS, time.monotonic() + 60)


def completion(message: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion body with a message of our choosing (fields the helpers lack)."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


# --- 1. reply fields kept when the conversation is sent back --------------------------------


def test_gemini_thought_signatures_and_deepseek_reasoning_go_back() -> None:
    # Gemini's OpenAI endpoint puts `extra_content.google.thought_signature` on tool calls and
    # answers 400 when a later request lacks it (ai.google.dev/gemini-api/docs/openai,
    # "Thought signatures"); DeepSeek's thinking mode needs the assistant message's
    # reasoning_content back in tool loops (api-docs.deepseek.com/guides/thinking_mode).
    signed = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "I should read the file.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                "extra_content": {"google": {"thought_signature": "c2lnbmF0dXJl"}},
            }
        ],
    }

    def second(request: dict[str, Any]) -> dict[str, Any]:
        sent = request["messages"][2]
        call = sent["tool_calls"][0]
        if call.get("extra_content", {}).get("google", {}).get("thought_signature") is None:
            return raw(
                [
                    {
                        "error": {
                            "code": 400,
                            "message": "Function call is missing a "
                            "thought_signature in functionCall parts.",
                            "status": "INVALID_ARGUMENT",
                        }
                    }
                ],
                status=400,
            )
        if sent.get("reasoning_content") != "I should read the file.":
            return error(400, "Missing `reasoning_content` field in the assistant message")
        return reply("done")

    with FakeLLM([raw(completion(signed)), second]) as llm:
        chat = model(llm)
        first = ask(chat)
        messages = [
            *MESSAGES,
            first.assistant_message(),
            {"role": "tool", "tool_call_id": "call_1", "content": "x = 1"},
        ]
        assert ask(chat, messages).content == "done"
        llm.assert_no_failures()


# --- 2. the server's text, whatever the shape of its error ----------------------------------


@pytest.mark.parametrize(
    ("body", "text"),
    [
        # LM Studio: {"error": "<string>"} (shared/research/protocols.md 4.7, llm-git#13).
        ({"error": "Invalid tool_choice type: 'object'"}, "Invalid tool_choice type"),
        # Gemini's OpenAI endpoint: a JSON list of Google errors.
        (
            [
                {
                    "error": {
                        "code": 400,
                        "message": "API key not valid. Please pass a valid API key.",
                        "status": "INVALID_ARGUMENT",
                    }
                }
            ],
            "API key not valid",
        ),
        # A bare text body from a proxy.
        ("upstream connect error or disconnect/reset before headers", "upstream connect error"),
    ],
)
def test_the_servers_own_text_is_in_the_error(body: Any, text: str) -> None:
    with FakeLLM([raw(body, status=400)]) as llm, pytest.raises(ModelError) as caught:
        ask(model(llm))
    assert text in str(caught.value) and "\n" not in str(caught.value)


# --- 3. context overflow in each server's words ---------------------------------------------


@pytest.mark.parametrize(
    ("status", "body"),
    [
        # llama.cpp server (tools/server/server.cpp, ERROR_TYPE_EXCEED_CONTEXT_SIZE).
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 9000,
                    "n_ctx": 8192,
                }
            },
        ),
        # Anthropic's OpenAI-compatible endpoint.
        (
            400,
            {
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 208497 tokens > 200000 maximum",
                }
            },
        ),
        # Gemini.
        (
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "message": "The input token count (1200000) exceeds the "
                        "maximum number of tokens allowed (1048576).",
                        "status": "INVALID_ARGUMENT",
                    }
                }
            ],
        ),
        # LM Studio.
        (
            400,
            {
                "error": "Trying to keep the first 9120 tokens when context the overflows. "
                "However, the model is loaded with context length of only 8192 tokens, which "
                "is not enough. Try to load the model with a larger context length, or provide "
                "a shorter input"
            },
        ),
        # vLLM (newer texts).
        (
            400,
            {
                "object": "error",
                "message": "This model's maximum context length is 8192 "
                "tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the "
                "completion). Please reduce the length of the messages or completion.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
        ),
    ],
)
def test_context_overflow_is_recognised(status: int, body: Any) -> None:
    with FakeLLM([raw(body, status=status)]) as llm, pytest.raises(ContextLengthError):
        ask(model(llm))


# --- 4. max_completion_tokens and temperature -----------------------------------------------


def o_series(request: dict[str, Any]) -> dict[str, Any]:
    # OpenAI reasoning models validate the request (texts as the API returns them).
    if "max_tokens" in request:
        return error(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this "
            "model. Use 'max_completion_tokens' instead.",
            param="max_tokens",
            code="unsupported_parameter",
        )
    if "temperature" in request and request["temperature"] != 1:
        return error(
            400,
            "Unsupported value: 'temperature' does not support 0.2 with this "
            "model. Only the default (1) value is supported.",
            param="temperature",
            code="unsupported_value",
        )
    return reply("ok")


def test_o_series_parameters_are_adapted_once_per_review() -> None:
    profile = ServerProfile()
    with FakeLLM([o_series], on_exhausted="repeat_last") as llm:
        first = model(llm, profile, max_output_tokens=500, temperature=0.2)
        assert ask(first).content == "ok"
        assert len(llm.bodies) == 3  # max_tokens refused, temperature refused, then ok
        assert llm.bodies[-1]["max_completion_tokens"] == 500
        assert "temperature" not in llm.bodies[-1]
        assert any("max_completion_tokens" in note for note in first.notes)  # type: ignore[attr-defined]
        # Another loop of the same review asks right the first time.
        second = model(llm, profile, max_output_tokens=500, temperature=0.2)
        ask(second)
        assert len(llm.bodies) == 4


# --- 6. one tool call per message -------------------------------------------------------------


def test_parallel_calls_are_sent_one_per_message_when_the_server_says_so() -> None:
    # vLLM with a Llama 3.x template raises "This model only supports single tool-calls at
    # once!" from the chat template (vllm examples/tool_chat_template_llama3.1_json.jinja).
    def llama(request: dict[str, Any]) -> dict[str, Any]:
        for message in request["messages"]:
            if len(message.get("tool_calls") or []) > 1:
                return error(400, "This model only supports single tool-calls at once!")
        return reply("ok")

    two = [
        {"id": f"c{n}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        for n in (1, 2)
    ]
    messages = [
        *MESSAGES,
        {"role": "assistant", "content": "", "tool_calls": two},
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
    ]
    with FakeLLM([llama], on_exhausted="repeat_last") as llm:
        assert ask(model(llm), messages).content == "ok"
        sent = llm.bodies[-1]["messages"]
    assert [m["role"] for m in sent[2:]] == ["assistant", "tool", "assistant", "tool"]
    assert [m.get("tool_call_id") for m in sent[2:]] == [None, "c1", None, "c2"]
    assert llm.bodies[-1]["parallel_tool_calls"] is False


# --- 8. transient 400s ------------------------------------------------------------------------


def test_groq_tool_use_failed_is_retried() -> None:
    # Groq: 400 with code tool_use_failed when the model's output does not parse as a call
    # (console.groq.com/docs/errors); the same request usually succeeds the next time.
    failed = raw(
        {
            "error": {
                "message": "Failed to call a function. Please adjust your prompt. "
                "See 'failed_generation' for more details.",
                "type": "invalid_request_error",
                "code": "tool_use_failed",
                "failed_generation": "<function=read_file{}>",
            }
        },
        status=400,
    )
    with FakeLLM([failed, reply(tool_calls=[tool_call("read_file", {})])]) as llm:
        assert ask(model(llm, max_retries=0)).tool_calls[0].name == "read_file"


# --- 9. an error inside a 200 -----------------------------------------------------------------


def test_an_error_in_a_200_body_is_an_error_with_its_reason() -> None:
    # OpenRouter sends errors met after the response started with status 200 and a body
    # {"error": {"code", "message"}} and no choices (openrouter.ai/docs/api-reference/errors).
    body = {"error": {"code": 502, "message": "Provider returned error", "metadata": {}}}
    with FakeLLM([raw(body)], on_exhausted="repeat_last") as llm:
        with pytest.raises(ModelError) as caught:
            ask(model(llm, max_retries=2))
        assert len(llm.bodies) == 3  # retried with backoff, then given up
    assert "Provider returned error" in str(caught.value)


# --- 10. stream-only models -------------------------------------------------------------------


def test_a_stream_only_model_is_streamed_with_tool_calls_assembled() -> None:
    # DashScope: 400 "This model only support stream mode, please enable the stream parameter
    # to access the model." (code invalid_parameter_error) for some Qwen models.
    def dashscope(request: dict[str, Any]) -> dict[str, Any]:
        if not request.get("stream"):
            return error(
                400,
                "This model only support stream mode, please enable the stream "
                "parameter to access the model.",
                code="invalid_parameter_error",
            )
        return reply(tool_calls=[tool_call("read_file", {"path": "a.py"})])

    with FakeLLM([dashscope], on_exhausted="repeat_last") as llm:
        chat = model(llm)
        got = ask(chat)
        assert got.tool_calls[0].name == "read_file"
        assert got.tool_calls[0].arguments_json() == '{"path": "a.py"}'
        assert got.usage.prompt_tokens > 0
        ask(chat)  # remembered: the second request streams at once
        assert [bool(b.get("stream")) for b in llm.bodies] == [False, True, True]


# --- 12. permanent failures, said at once -----------------------------------------------------


def test_a_server_without_tool_support_is_not_retried() -> None:
    # llama.cpp without --jinja: 500 "tools param requires --jinja flag" (server.cpp).
    body = {
        "error": {
            "code": 500,
            "message": "tools param requires --jinja flag",
            "type": "server_error",
        }
    }
    with FakeLLM([raw(body, status=500)], on_exhausted="repeat_last") as llm:
        with pytest.raises(ModelError) as caught:
            ask(model(llm, max_retries=4))
        assert len(llm.bodies) == 1
    assert "--jinja" in str(caught.value)


@pytest.mark.parametrize(
    ("path", "said"),
    [
        # The fake's own 404 for a path outside /v1, OpenAI's "Invalid URL (...)".
        ("", "answered 404 (Invalid URL (POST /chat/completions)): the base URL may lack its "
             "API path: most servers want {url}/v1 (set OPENAI_BASE_URL to it)"),
        ("/v1/chat/completions", "answered 404 (Invalid URL (POST /v1/chat/completions/chat/"
         "completions)): the base URL names the endpoint itself, and the client adds "
         "/chat/completions to it; set OPENAI_BASE_URL to {url}/v1"),
        ("/openai/deployments/gpt-4o", "an Azure deployment URL needs ?api-version="),
    ],
)  # fmt: skip
def test_a_404_for_the_url_names_the_likely_cause(path: str, said: str) -> None:
    with FakeLLM([reply("never played")]) as llm:
        with pytest.raises(ModelError) as caught:
            ask(model(llm, base_url=llm.url + path))
        assert llm.steps_used == 0
    assert said.format(url=llm.url) in str(caught.value)
    assert "for model" not in str(caught.value)  # the model is not what is missing


def test_a_404_for_the_model_says_to_set_the_model() -> None:
    missing = error(404, "The model `m` does not exist", code="model_not_found")
    with FakeLLM([missing], on_exhausted="repeat_last") as llm, pytest.raises(ModelError) as e:
        ask(model(llm))
    assert "answered 404 for model 'm' (The model `m` does not exist); set --model or " in str(
        e.value
    )


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://x/v1", "http:///v1"])
def test_a_base_url_without_a_scheme_is_refused_at_once(url: str) -> None:
    with pytest.raises(ReviewerError) as caught:
        check_base_url(url)
    assert "http" in str(caught.value)


# --- 7. tool calls written as text ------------------------------------------------------------

QWEN3_CODER = (
    # vLLM without the qwen3_coder tool parser leaves the model's own format in content
    # (vllm-project/vllm vllm/entrypoints/openai/tool_parsers/qwen3coder_tool_parser.py).
    "<tool_call>\n<function=read_file_lines>\n<parameter=path>\n"
    "src/app.py\n</parameter>\n<parameter=startLine>\n10\n</parameter>\n<parameter=endLine>\n"
    "20\n</parameter>\n</function>\n</tool_call>"
)
LLAMA4 = (
    # Llama 4 (vllm llama4_pythonic_tool_parser): pythonic calls between python tags.
    '<|python_start|>[read_file(path="src/app.py"), search_text(pattern="def main")]<|python_end|>'
)
HERMES = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
MISTRAL = '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.py"}}]'
LLAMA31 = '<|python_tag|>{"name": "read_file", "parameters": {"path": "a.py"}}'


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            QWEN3_CODER,
            [("read_file_lines", {"path": "src/app.py", "startLine": 10, "endLine": 20})],
        ),
        (LLAMA4, [("read_file", {"path": "src/app.py"}), ("search_text", {"pattern": "def main"})]),
        (HERMES, [("read_file", {"path": "a.py"})]),
        (MISTRAL, [("read_file", {"path": "a.py"})]),
        (LLAMA31, [("read_file", {"path": "a.py"})]),
        ('Here is JSON: {"name": "not_a_tool", "arguments": {}}', []),
        # A sentence before the block: prose that holds a call is prose (issue 32), whether
        # the model wrote the block or quoted it from a file.
        ("I will look at the file.\n" + QWEN3_CODER, []),
    ],
)
def test_tool_calls_written_as_text_are_recovered(content: str, expected: list[Any]) -> None:
    names = frozenset({"read_file", "read_file_lines", "search_text"})
    with FakeLLM([reply(content)]) as llm:
        chat = model(llm)
        chat.tool_names = names
        got = ask(chat)
    calls = [(c.name, c.arguments) for c in got.tool_calls]
    assert calls == expected and got.calls_from_text == bool(expected)


def test_hostile_text_does_not_stall_the_recovery() -> None:
    # A recovery that backtracks (quadratic or worse) on a megabyte of openers would run for
    # hours; a linear one takes milliseconds. It runs in a child process: a backtracking
    # regex holds the interpreter's lock for the whole match, so no thread of this process
    # could stop it. The timeout is a guard against that hang, not a measure of speed.
    script = """
from reviewer.llm.replies import normalize
texts = ("<tool_call>" * 100_000, "<function=x>" * 80_000, "[TOOL_CALLS][" * 80_000)
for text in texts:
    normalize({"content": text}, "stop", None, 1, tool_names=frozenset({"x"}))
    print(text[:12], flush=True)
"""
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired as stalled:
        pytest.fail(f"the recovery stalled after: {stalled.stdout!r}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["<tool_call><", "<function=x>", "[TOOL_CALLS]"]


def test_an_overflow_reported_inside_a_200_is_a_context_error() -> None:
    # LM Studio 0.4.21+ reports overflow inside a 200 answer (goose#11318,
    # lmstudio-bug-tracker#2322): "Input does not fit in context length. ...".
    text = (
        "Input does not fit in context length. The input has 31430 tokens, but the context "
        "length only supports 30000 tokens."
    )
    with FakeLLM([raw({"error": {"message": text}, "message": text})]) as llm:
        with pytest.raises(ContextLengthError):
            ask(model(llm, max_retries=3))
        assert len(llm.bodies) == 1  # not retried as a server failure
