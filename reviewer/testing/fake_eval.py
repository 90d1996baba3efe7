"""Scripted models for `reviewer eval`: step functions for the fake LLM (fake_llm.FakeLLM with
`on_exhausted="repeat_last"`), so a reviewer and a judge answer by what they are asked about,
whatever order the cases run in.

    reviewer = FakeLLM([scripted_reviewer({"moving_sum": [...]})], on_exhausted="repeat_last")
    judge = FakeLLM([scripted_judge([JudgeRule("one window early", "Off-by-one")])], ...)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.testing._llm_steps import reply, tool_call

StepFunction = Callable[[dict[str, Any]], dict[str, Any]]
FAIL = "fail"


def _texts(request: Mapping[str, Any]) -> str:
    parts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
    return "\n".join(parts)


def scripted_reviewer(script: Mapping[str, Sequence[Mapping[str, Any]] | str]) -> StepFunction:
    """A reviewer that submits, at its first turn, the findings listed under the first key
    found in the conversation (e.g. a function name the diff shows). `FAIL` answers a 400,
    so the review is incomplete; a change no key matches is a 400 too."""

    def step(request: dict[str, Any]) -> dict[str, Any]:
        text = _texts(request)
        for marker, findings in script.items():
            if marker in text:
                if findings == FAIL:
                    break
                arguments = {"summary": f"Reviewed ({marker}).", "findings": list(findings)}
                return reply(tool_calls=[tool_call("submit_review", arguments)])
        return {
            "status": 400,
            "error": {"message": "scripted failure", "type": "invalid_request_error"},
        }

    return step


@dataclass(frozen=True)
class JudgeRule:
    """When the expected issue's description holds `issue` and the finding's title holds
    `finding`: answer a match (or "garbage", "empty", "no") with this confidence."""

    issue: str
    finding: str
    answer: str = "match"
    confidence: float = 0.9


def scripted_judge(rules: Sequence[JudgeRule]) -> StepFunction:
    """A judge that reads the two JSON texts of `reviewer eval`'s judge prompt and answers
    by the first rule that fits them; no rule: no match."""

    def step(request: dict[str, Any]) -> dict[str, Any]:
        text = request["messages"][-1]["content"]
        issue_text, _, comment_text = text.partition("\n\nReview comment:\n")
        issue = json.loads(issue_text.removeprefix("Known issue:\n"))
        comment = json.loads(comment_text)
        for rule in rules:
            if rule.issue in issue["description"] and rule.finding in comment["title"]:
                if rule.answer == "garbage":
                    return reply("I would say they are probably related.")
                if rule.answer == "empty":
                    return reply("")
                verdict = {
                    "reasoning": f"rule {rule.issue!r} ~ {rule.finding!r}",
                    "match": rule.answer == "match",
                    "confidence": rule.confidence,
                }
                # Fenced, as many models answer: the judge must find the object inside.
                return reply("```json\n" + json.dumps(verdict) + "\n```")
        return reply(json.dumps({"reasoning": "different problems", "match": False,
                                 "confidence": 0.8}))  # fmt: skip

    return step
