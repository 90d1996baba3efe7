"""The final call asked for as JSON held to its schema (issue 24): after two replies in a row
with no usable call, the next request offers no tools and sends the final tool's arguments as
`response_format` (json_schema), every string and list bounded; the reply is read as the call
and checked like one. Seen on llama.cpp `llama-server --jinja` with Qwen2.5-Coder-1.5B-Instruct
Q4_K_M: Markdown first, then the example call written as JSON but broken (bench/README.md).
`response_format` json_schema is OpenAI's structured outputs (../shared/research/protocols.md
4.1); llama.cpp turns the schema into a grammar, Ollama uses it as `format` (4.7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.loop.structured_answer import structured_answer_format
from reviewer.review.submission import submit_review_schema
from reviewer.testing import FakeLLM, error, reply, tool_call
from tests.conftest import GitRepo
from tests.test_review import env, feature, finding, run, submit

__all__ = ["env", "feature"]  # fixtures, used by name

MARKDOWN = "### Review\n1. **Division by zero**: `average([])` raises."
# The fenced object Qwen wrote when shown the example: the summary string never closed.
BROKEN = '```json\n{"name": "submit_review", "arguments": {"summary": "Adds average.\n```'
SUBMISSION = {"summary": "Adds `average`.", "findings": [finding()]}


def _transcript(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_after_two_replies_without_a_call_the_final_call_is_asked_for_held_to_its_schema(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    transcript = tmp_path / "transcript.jsonl"
    script = [reply(MARKDOWN), reply(BROKEN), reply(json.dumps(SUBMISSION))]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch, "--transcript", str(transcript))
        bodies = llm.bodies
        llm.assert_no_failures()
    assert code == 0 and report["status"] == "complete"
    assert [f["title"] for f in report["findings"]] == ["Division by zero on an empty list"]
    # The first two requests are ordinary; the third offers no tools and asks for the
    # arguments of submit_review held to their (bounded) schema.
    assert [("tools" in b, "response_format" in b) for b in bodies] == [
        (True, False),
        (True, False),
        (False, True),
    ]
    sent = bodies[2]["response_format"]
    assert sent == structured_answer_format(submit_review_schema())
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "submit_review"
    assert "No tools this time" in bodies[2]["messages"][-1]["content"]
    # After the first reply the model was shown the example call, as before.
    assert "plain text is not read" in bodies[1]["messages"][-1]["content"]
    marked = [e for e in _transcript(transcript) if e.get("structured_answer")]
    assert len(marked) == 1 and marked[0]["recovered_from_text"] == json.dumps(SUBMISSION)
    assert report["usage"]["replies_read_from_text"] == 1


def test_every_string_and_list_of_the_schema_is_bounded() -> None:
    # A small model under a grammar can write without end; the schema holds it.
    schema = structured_answer_format(submit_review_schema())["json_schema"]["schema"]
    item = schema["properties"]["findings"]["items"]
    assert schema["properties"]["summary"]["maxLength"] > 0
    assert schema["properties"]["findings"]["maxItems"] > 0
    strings = [k for k, v in item["properties"].items() if v.get("type") == "string"]
    assert strings and all(
        "maxLength" in item["properties"][k] or "enum" in item["properties"][k] for k in strings
    )
    assert item["properties"]["title"]["maxLength"] == 300  # the tool's own bound is kept
    assert schema["additionalProperties"] is False and item["additionalProperties"] is False
    # The tool's declaration itself is not changed.
    assert "maxLength" not in submit_review_schema()["function"]["parameters"]["properties"][
        "summary"
    ]


def test_a_structured_reply_is_checked_like_any_call_and_its_fix_asked_for_the_same_way(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    invalid = {"summary": "Fine.", "findings": [{"path": "app.py", "line": 9}]}
    fixed = {"summary": "Fine.", "findings": []}
    script = [reply(MARKDOWN), reply(MARKDOWN), *(reply(json.dumps(v)) for v in (invalid, fixed))]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        answer = next(m for m in llm.bodies[3]["messages"] if m["role"] == "tool")
        structured = ["response_format" in b and "tools" not in b for b in llm.bodies]
    # Refused with the validation error, like any call: never a clean review by itself.
    assert answer["content"].startswith("Error: submit_review arguments are invalid")
    # A model that writes no calls is asked for the fix held to the schema again, rather
    # than given two more replies in prose first.
    assert structured == [False, False, True, True]
    assert code == 0 and report["status"] == "complete" and report["findings"] == []


def test_structured_answer_off_never_sends_a_response_format(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_STRUCTURED_ANSWER", "off")
    with FakeLLM([reply(MARKDOWN)], on_exhausted="repeat_last") as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        bodies = llm.bodies
    assert code == 2 and report["status"] == "incomplete"
    assert len(bodies) == 4 and all("tools" in b and "response_format" not in b for b in bodies)
    assert "4 times in a row without calling a tool" in report["incomplete_reason"]


def test_a_model_that_writes_no_call_even_when_held_to_the_schema_is_given_up_on_early(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server that ignores response_format and a model that only writes prose: the same
    # four replies as before, then the advice.
    with FakeLLM([reply(MARKDOWN)], on_exhausted="repeat_last") as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        structured = ["response_format" in b for b in llm.bodies]
    assert code == 2 and report["status"] == "incomplete"
    assert structured == [False, False, True, True]
    assert "--jinja" in report["incomplete_reason"]


def test_a_server_that_refuses_response_format_is_asked_without_it_from_then_on(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    # OpenAI's older models (quirks table row no_response_format).
    refused = error(
        400,
        "Invalid parameter: 'response_format' of type 'json_schema' is not supported with "
        "this model.",
        param="response_format",
    )
    script = [reply(MARKDOWN), reply(MARKDOWN), refused, reply(json.dumps(SUBMISSION))]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        bodies = llm.bodies
    assert code == 0 and report["status"] == "complete" and len(report["findings"]) == 1
    # The same structured request again, without response_format (no tools either): the
    # model is asked in words only.
    assert [("tools" in b, "response_format" in b) for b in bodies] == [
        (True, False),
        (True, False),
        (False, True),
        (False, False),
    ]


def test_a_server_that_refuses_the_structured_request_otherwise_gets_ordinary_ones(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    # A server that wants the tools declared while the conversation holds tool calls.
    refused = error(400, "tools must be provided when messages contain tool calls")
    script = [reply(MARKDOWN), reply(MARKDOWN), refused, reply(MARKDOWN), submit()]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        structured = ["response_format" in b for b in llm.bodies]
    assert code == 0 and report["status"] == "complete"
    assert structured == [False, False, True, False, False]


@pytest.mark.verification
def test_a_verifier_that_answers_in_prose_is_asked_for_its_verdict_held_to_the_schema(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The verification pass is the same loop with submit_verdict as its final tool: a small
    # model that argues in prose gives its verdict under the schema.
    refuted = {"verdict": "refuted", "reason": "items is never empty here."}
    script = [
        reply(tool_calls=[tool_call("submit_review", SUBMISSION)]),
        reply("The finding looks wrong to me."),
        reply("I think it is refuted."),
        reply(json.dumps(refuted)),
    ]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        bodies = llm.bodies
        llm.assert_no_failures()
    sent = bodies[3]["response_format"]["json_schema"]
    assert sent["name"] == "submit_verdict" and "tools" not in bodies[3]
    assert sent["schema"]["properties"]["verdict"]["enum"] == ["confirmed", "refuted", "uncertain"]
    assert code == 0 and report["status"] == "complete" and report["findings"] == []
    (discarded,) = report["discarded"]
    assert discarded["reason"] == "refuted by verification: items is never empty here."
