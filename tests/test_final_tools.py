"""The agent loop ends with its final tool, whichever it is: `submit_review` for a review,
`submit_answer` for an answer in a thread. Real client, real HTTP, the scripted server."""

from __future__ import annotations

import json

from reviewer.llm import ChatModel
from reviewer.loop.agent import Agent
from reviewer.review.submission import SUBMIT_ANSWER, AnswerSubmission, SubmitAnswer
from reviewer.safety.redact import Redactor
from reviewer.settings.config import Settings
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo


def _answer_loop(repo: GitRepo, llm: FakeLLM) -> Agent[SubmitAnswer]:
    settings = Settings.model_validate(
        {"model": "fake-model", "api_key": "x", "base_url": llm.base_url, "max_retries": 0}
    )
    return Agent(
        model=ChatModel(settings),
        workspace=repo.revision(),
        settings=settings,
        final=AnswerSubmission(),
        redactor=Redactor(),
    )


def test_an_answer_loop_investigates_then_ends_with_submit_answer(repo: GitRepo) -> None:
    repo.write("app.py", "def total(cents):\n    return cents / 100\n")
    repo.commit("first")
    script = [
        reply(tool_calls=[tool_call("read_file", {"path": "app.py"})]),
        reply(tool_calls=[tool_call(SUBMIT_ANSWER, {"answer": "   "})]),
        reply(tool_calls=[tool_call(SUBMIT_ANSWER, {"answer": "It divides: use `//`."})]),
    ]
    with FakeLLM(script) as llm:
        outcome = _answer_loop(repo, llm).run("You answer questions.", "Why is this wrong?")
        bodies = llm.bodies
        llm.assert_no_failures()
    assert outcome.submission is not None
    assert outcome.submission.answer == "It divides: use `//`."
    assert outcome.stop_reason == "" and outcome.turns == 3
    # The model is offered the seven tools and submit_answer, never submit_review.
    names = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert names[-1] == SUBMIT_ANSWER and "submit_review" not in names and len(names) == 8
    # The tool answered, and the empty answer went back as an error to fix.
    results = [m["content"] for m in bodies[2]["messages"] if m["role"] == "tool"]
    assert results[0] == "def total(cents):\n    return cents / 100"
    assert results[1].startswith("Error: submit_answer needs a non-empty answer")


def test_an_answer_loop_reminds_the_model_of_its_own_final_tool(repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit("first")
    script = [
        reply(content="I think it is fine."),
        reply(tool_calls=[tool_call(SUBMIT_ANSWER, {"text": "Fine as it is."})]),
    ]
    with FakeLLM(script) as llm:
        outcome = _answer_loop(repo, llm).run("You answer questions.", "Is this fine?")
        nudge = llm.bodies[1]["messages"][-1]
    assert outcome.submission is not None and outcome.submission.answer == "Fine as it is."
    assert nudge["role"] == "user"
    assert "call submit_answer with your answer" in nudge["content"]
    assert "submit_review" not in json.dumps(llm.bodies[1]["messages"])
