"""Small local models finish their reviews (issue 24): final answers written as text are read
as calls and checked like calls, `tool_choice` is asked for only when set (and dropped once
a server refuses it), a reply cut off is asked again, and a model that keeps calling a tool
this loop does not offer is given up on early. Each shape is replayed by the scripted server
over real HTTP with the real openai client; each was seen with llama.cpp `llama-server
--jinja` and Qwen2.5-Coder-1.5B-Instruct Q4_K_M."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.llm import ChatModel
from reviewer.loop.agent import Agent
from reviewer.review.submission import SUBMIT_ANSWER, AnswerSubmission
from reviewer.safety.redact import Redactor
from reviewer.settings.config import Settings
from reviewer.testing import FakeLLM, error, reply, tool_call
from tests.conftest import GitRepo
from tests.test_review import env, feature, finding, run, submit

__all__ = ["env", "feature"]  # fixtures, used by name

SUBMISSION = {"summary": "Adds `average`.", "findings": [finding()]}


def fenced(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2) + "\n```"


# --- 1. final answers written as text ----------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        # The model's own submission in a json fence, no tool call (llama.cpp, Qwen2.5-Coder).
        pytest.param(fenced(SUBMISSION), id="fenced-submission"),
        # Asked with tool_choice required, the same server wrote the wrapper in a fence.
        pytest.param(
            fenced({"name": "submit_review", "arguments": SUBMISSION}), id="name-arguments"
        ),
        pytest.param("  " + json.dumps(SUBMISSION) + "\n", id="bare-object"),
        pytest.param(
            json.dumps({"function": {"name": "submit_review", "arguments": SUBMISSION}}),
            id="function-wrapper",
        ),
    ],
)
def test_a_final_answer_written_as_text_completes_the_review(
    content: str, feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    with FakeLLM([reply(content)]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch, "--transcript", str(transcript))
        llm.assert_no_failures()
    assert code == 0 and report["status"] == "complete"
    assert [f["title"] for f in report["findings"]] == ["Division by zero on an empty list"]
    assert report["usage"]["replies_read_from_text"] == 1
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    recovered = [e for e in entries if "recovered_from_text" in e]
    assert len(recovered) == 1 and recovered[0]["recovered_from_text"] == content


def test_an_invalid_object_in_text_is_answered_with_the_validation_error(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every field of submit_review is there, but the finding lacks severity, title and body:
    # it is a call, checked like one, and never a clean review.
    invalid = {"summary": "Looks fine.", "findings": [{"path": "app.py", "line": 9}]}
    with FakeLLM([reply(fenced(invalid)), submit(findings=[finding()])]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        second = llm.bodies[1]["messages"]
    assert code == 0 and len(report["findings"]) == 1
    answer = next(m["content"] for m in second if m["role"] == "tool")
    assert answer.startswith("Error: submit_review arguments are invalid")
    assert "severity" in answer


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(
            "Here is my review: " + json.dumps(SUBMISSION) + " and the fix: "
            + json.dumps({"path": "app.py"}),
            id="prose-with-two-objects",
        ),
        pytest.param(json.dumps(SUBMISSION) + "\n" + json.dumps(SUBMISSION), id="two-objects"),
        pytest.param("Done.\n" + fenced(SUBMISSION), id="prose-then-fence"),
    ],
)
def test_text_that_is_not_one_json_value_is_not_read(
    content: str, feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM([reply(content), submit()]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        second = llm.bodies[1]["messages"]
    # The text was not taken as the review: the model was asked again, and its real call
    # (no findings) is the review.
    assert code == 0 and report["findings"] == []
    assert report["usage"]["replies_read_from_text"] == 0
    assert not any(m["role"] == "tool" for m in second)
    assert "plain text is not read" in second[-1]["content"]


def test_a_reply_in_prose_is_shown_the_final_call_as_one_json_object_it_may_write(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Qwen2.5-Coder-1.5B under llama.cpp answered in Markdown; told only "plain text is not
    # read" it wrote Markdown again, shown the example it answered with the object, in a
    # fence: read as the call.
    markdown = "### Findings\n1. **Division by zero** - `average([])` raises."
    with FakeLLM([reply(markdown), reply(fenced(SUBMISSION))]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        note = llm.bodies[1]["messages"][-1]["content"]
    assert code == 0 and report["status"] == "complete"
    assert [f["title"] for f in report["findings"]] == ["Division by zero on an empty list"]
    example = json.loads(note[note.index("{"):])
    assert example["name"] == "submit_review"
    shown = example["arguments"]["findings"][0]
    assert set(shown) == {"path", "line", "severity", "title", "body", "quote", "confidence"}
    assert shown["severity"] == "<one of: critical, high, medium, low, info>"


def test_the_example_copied_as_it_is_is_refused_never_a_finding(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def copy_the_example(request: dict[str, Any]) -> dict[str, Any]:
        note = request["messages"][-1]["content"]
        return reply(note[note.index("{"):])

    with FakeLLM([reply("Looks risky."), copy_the_example, submit()]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        answer = next(m for m in llm.bodies[2]["messages"] if m["role"] == "tool")
    assert answer["content"].startswith("Error: submit_review")
    assert code == 0 and report["findings"] == [] and report["status"] == "complete"


# --- 2. tool_choice ------------------------------------------------------------------------------


def _investigate_then_submit() -> list[dict[str, Any]]:
    return [reply(tool_calls=[tool_call("read_file", {"path": "app.py"})]), submit()]


@pytest.mark.parametrize("choice", ["required", "auto"])
def test_tool_choice_required_is_sent_on_every_request_and_auto_never(
    choice: str, feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_TOOL_CHOICE", choice)
    with FakeLLM(_investigate_then_submit()) as llm:
        code, _ = run(feature, llm, tmp_path, monkeypatch)
        sent = [body.get("tool_choice") for body in llm.bodies]
    assert code == 0 and len(sent) == 2
    assert sent == (["required", "required"] if choice == "required" else [None, None])


def test_a_server_that_refuses_tool_choice_is_asked_without_it_once_per_run(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_TOOL_CHOICE", "required")
    # DeepSeek's thinking mode (deepseek-ai/DeepSeek-V3#1376).
    refused = error(400, "Thinking mode does not support this tool_choice", param="tool_choice")
    with FakeLLM([refused, *_investigate_then_submit()]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        sent = [body.get("tool_choice") for body in llm.bodies]
    assert code == 0 and report["status"] == "complete"
    assert sent == ["required", None, None]


# --- 3. replies cut off -----------------------------------------------------------------------


def test_a_reply_cut_at_the_output_limit_is_asked_again_and_never_accepted(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A complete-looking submission in a reply cut at the limit: not taken (a cut reply's
    # last call is cut), the model is told and asked again.
    cut = reply(
        tool_calls=[tool_call("submit_review", {"summary": "Fine.", "findings": []})],
        finish_reason="length",
    )
    with FakeLLM([cut, submit(findings=[finding()])]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        second = llm.bodies[1]["messages"]
        caps = [body.get("max_tokens") for body in llm.bodies]
        llm.assert_no_failures()
    assert report["status"] == "complete" and len(report["findings"]) == 1 and code == 0
    assert "too long" in second[-1]["content"] and "max_output_tokens" in second[-1]["content"]
    assert caps == [8192, 8192]  # every reply is capped, by default for a large submission


def test_a_reply_that_times_out_is_asked_again_shorter(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_REQUEST_TIMEOUT", "1")
    runaway = reply(content="x" * 100, delay=3)
    with FakeLLM([runaway, submit()]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        second = llm.bodies[1]["messages"]
    assert code == 0 and report["status"] == "complete"
    assert report["turns"] == 2
    assert "too long" in second[-1]["content"] and "request_timeout" in second[-1]["content"]


def test_a_model_that_keeps_running_away_is_given_up_on(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut = reply(content="{\"summary\": \"" + "a" * 200, finish_reason="length")
    with FakeLLM([cut], on_exhausted="repeat_last") as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        requests = len(llm.bodies)
    assert code == 2 and requests == 3
    assert "cut off 3 times in a row" in report["incomplete_reason"]


# --- 4. the wrong final tool ---------------------------------------------------------------------


def test_the_wrong_final_tool_repeated_is_stopped_early_with_the_reason(repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit("first")
    review = reply(tool_calls=[tool_call("submit_review", {"summary": "Fine.", "findings": []})])
    with FakeLLM([review], on_exhausted="repeat_last") as llm:
        settings = Settings.model_validate(
            {"model": "fake-model", "api_key": "x", "base_url": llm.base_url, "max_retries": 0}
        )
        agent = Agent(
            model=ChatModel(settings),
            workspace=repo.revision(),
            settings=settings,
            final=AnswerSubmission(),
            redactor=Redactor(),
        )
        outcome = agent.run("You answer questions.", "Is this fine?")
        answers = [m["content"] for m in llm.bodies[1]["messages"] if m["role"] == "tool"]
        requests = len(llm.bodies)
    assert outcome.submission is None and requests == 3
    assert "ends only with submit_answer" in answers[0]
    reason = outcome.stop_reason
    assert "'submit_review', a tool this loop does not offer" in reason
    assert SUBMIT_ANSWER in reason and "max_turns" not in reason
