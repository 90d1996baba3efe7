"""The model's final answers: `submit_review` ends a review, `submit_answer` an answer to a
question in a thread. Each is declared once and checked when called.

The pydantic model gives the schema the model is shown and parses the call. `check_findings`
then holds each finding to the facts (the file exists at the reviewed revision, the line is
inside it, a LEFT finding points at a removed line), and its errors go back to the model to
fix, within budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from reviewer.change.lines import LineCounter
from reviewer.checks.finding_in import FindingIn
from reviewer.errors import ToolError
from reviewer.findings import CATEGORIES, Severity
from reviewer.loop.final import Verdict, offered_tools, parse_call
from reviewer.tools.base import schema_signature
from reviewer.wording import plural
from reviewer.workspace.paths import quote_path

SUBMIT_REVIEW = "submit_review"
SUBMIT_ANSWER = "submit_answer"
FINAL_TOOLS = (SUBMIT_REVIEW, SUBMIT_ANSWER)
class SubmitReview(BaseModel):
    """Finish the review: give a Markdown summary of the change and your verdict, and every
    finding (an empty list when the change is fine). Call it once, at the end."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(description="Markdown overview of the change and the verdict.")
    findings: list[FindingIn] = Field(
        default_factory=list, description="Problems found; empty when there are none."
    )


@cache
def submit_review_schema() -> dict[str, Any]:
    """The `submit_review` entry of the OpenAI `tools` list."""
    schema = SubmitReview.model_json_schema()
    finding = schema["$defs"]["FindingIn"]
    finding["properties"]["severity"] = {
        "type": "string",
        "enum": [s.value for s in Severity],
        "description": "critical, high, medium, low or info.",
    }
    for prop in finding["properties"].values():
        prop.pop("title", None)
        options = prop.pop("anyOf", None)
        if options:
            prop.update(next(o for o in options if o.get("type") != "null"))
        if prop.get("default", 0) is None:
            del prop["default"]
    finding["properties"]["category"]["enum"] = list(CATEGORIES)
    finding.pop("title", None)
    return {
        "type": "function",
        "function": {
            "name": SUBMIT_REVIEW,
            "description": " ".join((SubmitReview.__doc__ or "").split()),
            "parameters": {
                "type": "object",
                "properties": {
                    "summary": {"type": "string", "description": "Markdown overview and verdict."},
                    "findings": {
                        "type": "array",
                        "description": "Problems found; empty when there are none.",
                        "items": finding,
                    },
                },
                "required": ["summary", "findings"],
            },
        },
    }


# Checks a submission against the repository: {finding number (1-based): problem}, and
# 0 for a problem with the submission as a whole.
Validator = Callable[[SubmitReview], dict[int, str]]


@dataclass(frozen=True)
class ReviewSubmission:
    """`submit_review` as the final tool of a review loop (loop.final.FinalTool)."""

    validate: Validator
    name: str = SUBMIT_REVIEW
    purpose: str = "your summary and findings"

    def schema(self) -> dict[str, Any]:
        return submit_review_schema()

    def accept(self, arguments: str) -> Verdict[SubmitReview]:
        submission = parse_call(SubmitReview, SUBMIT_REVIEW, arguments)
        if isinstance(submission, str):
            return Verdict(submission)
        problems = self.validate(submission)
        if not problems:
            return Verdict("Review received.", submission)
        listed = "; ".join(
            f"finding {n} ({_where(submission.findings[n - 1])}): {text}" if n else text
            for n, text in sorted(problems.items())
        )
        return Verdict(
            f"Error: submit_review was not accepted: {listed}. Fix these findings (or drop "
            "them) and call submit_review again with the complete list.",
            unverified=[
                f for index, f in enumerate(submission.findings, 1) if index not in problems
            ],
            text=submission.summary,
        )


class SubmitAnswer(BaseModel):
    """Finish: give your answer to the question in the thread, in Markdown. Call it once, at
    the end."""

    model_config = ConfigDict(extra="ignore")

    answer: str = Field(
        description="Markdown answer to the question, for the person who asked.",
        validation_alias=AliasChoices("answer", "text", "body", "reply"),
    )


@cache
def submit_answer_schema() -> dict[str, Any]:
    """The `submit_answer` entry of the OpenAI `tools` list."""
    return {
        "type": "function",
        "function": {
            "name": SUBMIT_ANSWER,
            "description": " ".join((SubmitAnswer.__doc__ or "").split()),
            "parameters": {
                "type": "object",
                "properties": {
                    "answer": {
                        "type": "string",
                        "description": SubmitAnswer.model_fields["answer"].description,
                    }
                },
                "required": ["answer"],
            },
        },
    }


@dataclass(frozen=True)
class AnswerSubmission:
    """`submit_answer` as the final tool of an answer loop (loop.final.FinalTool)."""

    name: str = SUBMIT_ANSWER
    purpose: str = "your answer"

    def schema(self) -> dict[str, Any]:
        return submit_answer_schema()

    def accept(self, arguments: str) -> Verdict[SubmitAnswer]:
        submission = parse_call(SubmitAnswer, SUBMIT_ANSWER, arguments)
        if isinstance(submission, str):
            return Verdict(submission)
        if not submission.answer.strip():
            return Verdict(
                "Error: submit_answer needs a non-empty answer. Call it again with your answer."
            )
        return Verdict("Answer received.", submission)


def _where(finding: FindingIn) -> str:
    # The path was checked (Workspace.normalize): the name itself, quoted as the tools print it.
    return f"{quote_path(finding.path)}:{finding.line}"


def review_tools() -> list[dict[str, Any]]:
    """The `tools` list of a review loop: the seven tools, then submit_review."""
    return offered_tools(submit_review_schema())


def submit_review_listing() -> str:
    """How `reviewer tools` shows submit_review: its signature, and a finding's fields."""
    function = submit_review_schema()["function"]
    finding = function["parameters"]["properties"]["findings"]["items"]
    return (
        f"{schema_signature(SUBMIT_REVIEW, function['parameters'])}"
        "  [the model's final answer; `reviewer tool` does not run it]\n"
        f"    {function['description']}\n"
        f"    each of findings: {schema_signature('', finding)[1:-1]}\n"
    )


def check_finding(
    finding: FindingIn,
    counter: LineCounter,
    removed_line_exists: Any,
) -> str | None:
    """What is wrong with a finding, or None. `removed_line_exists(path, line)` knows the diff."""
    end = finding.end_line or finding.line
    if end < finding.line:
        return f"end_line {end} is before line {finding.line}"
    shown = quote_path(finding.path)  # as the tools print it
    if finding.side == "LEFT":
        if not removed_line_exists(finding.path, finding.line):
            return (
                f"side LEFT needs a line the diff removes (or shows as context) in "
                f"'{shown}'; line {finding.line} is not one. Use side RIGHT for the new file."
            )
        return None
    try:
        lines = counter.lines(finding.path)
    except ToolError as exc:
        return str(exc)
    if finding.line > len(lines) or end > len(lines):
        return (
            f"line {max(finding.line, end)} is past the end of '{shown}', which has "
            f"{plural(len(lines), 'line')} at the reviewed revision"
        )
    return None
