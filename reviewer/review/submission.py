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
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
)

from reviewer.change import SUBMODULE_MODE, SYMLINK_MODE, Change
from reviewer.errors import ToolError
from reviewer.findings import CATEGORIES, Severity
from reviewer.tools import tool_schemas
from reviewer.tools.base import schema_signature
from reviewer.tools.files import MAX_SCAN_BYTES, read_text
from reviewer.tools.text import split_lines
from reviewer.wording import plural
from reviewer.workspace import Workspace
from reviewer.workspace.paths import quote_path

if TYPE_CHECKING:
    from reviewer.review.agent import Verdict

SUBMIT_REVIEW = "submit_review"
SUBMIT_ANSWER = "submit_answer"
FINAL_TOOLS = (SUBMIT_REVIEW, SUBMIT_ANSWER)
_CATEGORY_SYNONYMS = {
    "correctness": "bug",
    "logic": "bug",
    "error-handling": "bug",
    "perf": "performance",
    "test": "tests",
    "testing": "tests",
    "documentation": "docs",
    "readability": "maintainability",
    "design": "maintainability",
    "complexity": "maintainability",
    "formatting": "style",
}


class FindingIn(BaseModel):
    """One problem in the change."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    path: str = Field(
        description="File path relative to the repository root.",
        validation_alias=AliasChoices("path", "file", "file_path", "filename"),
    )
    line: int = Field(
        description="First line of the problem: a line number of the new file (RIGHT) or of "
        "the old file for a removed line (LEFT).",
        ge=1,
        validation_alias=AliasChoices("line", "start_line", "startLine", "line_number"),
    )
    end_line: int | None = Field(
        None,
        description="Last line, for a problem spanning several lines.",
        ge=1,
        validation_alias=AliasChoices("end_line", "endLine"),
    )
    side: Literal["RIGHT", "LEFT"] = Field(
        "RIGHT", description="RIGHT for the new file (default); LEFT for a removed line."
    )
    severity: Severity = Field(description="How much it matters.")
    category: str | None = Field(None, description=f"One of: {', '.join(CATEGORIES)}.")
    title: str = Field(description="One line saying what is wrong.", min_length=1, max_length=300)
    body: str = Field(
        description="Markdown: what goes wrong, when, and how to fix it.",
        validation_alias=AliasChoices("body", "description", "message", "comment"),
    )
    suggestion: str | None = Field(
        None,
        description="Optional exact replacement text for lines line..end_line, indentation "
        "included (no diff markers, no code fence).",
    )
    quote: str | None = Field(
        None,
        description="The exact code line(s) the finding is about, copied from the reviewed "
        "revision (from the base for side LEFT); checked against the file.",
    )
    confidence: float | None = Field(
        None,
        ge=0,
        le=1,
        description="How sure you are that this is a real problem, from 0 to 1, judged by "
        "the evidence you read.",
    )
    # How the pipeline moved the finding to where its quote is (grounding.py), for reports.
    _moved: str = PrivateAttr("")

    @field_validator("severity", mode="before")
    @classmethod
    def _lower_severity(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("side", mode="before")
    @classmethod
    def _upper_side(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("category", mode="before")
    @classmethod
    def _known_category(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        text = str(value).strip().lower()
        text = _CATEGORY_SYNONYMS.get(text, text)
        if text not in CATEGORIES:
            raise ValueError(f"unknown category '{value}'; use one of {', '.join(CATEGORIES)}")
        return text

    @field_validator("title", mode="before")
    @classmethod
    def _one_line_title(cls, value: Any) -> Any:
        return " ".join(value.split()) if isinstance(value, str) else value


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
    """`submit_review` as the final tool of a review loop (agent.FinalTool)."""

    validate: Validator
    name: str = SUBMIT_REVIEW
    purpose: str = "your summary and findings"

    def schema(self) -> dict[str, Any]:
        return submit_review_schema()

    def accept(self, arguments: str) -> Verdict[SubmitReview]:
        from reviewer.review.agent import Verdict

        submission = _parsed(SubmitReview, SUBMIT_REVIEW, arguments)
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
    """`submit_answer` as the final tool of an answer loop (agent.FinalTool)."""

    name: str = SUBMIT_ANSWER
    purpose: str = "your answer"

    def schema(self) -> dict[str, Any]:
        return submit_answer_schema()

    def accept(self, arguments: str) -> Verdict[SubmitAnswer]:
        from reviewer.review.agent import Verdict

        submission = _parsed(SubmitAnswer, SUBMIT_ANSWER, arguments)
        if isinstance(submission, str):
            return Verdict(submission)
        if not submission.answer.strip():
            return Verdict(
                "Error: submit_answer needs a non-empty answer. Call it again with your answer."
            )
        return Verdict("Answer received.", submission)


def _parsed(model: type[Any], name: str, arguments: str) -> Any:
    """The call's arguments as `model`, or the error the model gets back."""
    from reviewer.tools import parse_arguments

    try:
        return model.model_validate(parse_arguments(arguments))
    except ToolError as exc:
        return f"Error: {name}: {exc}"
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:10]
        )
        return f"Error: {name} arguments are invalid: {problems}. Fix and call again."


def _where(finding: FindingIn) -> str:
    # The path was checked (Workspace.normalize): the name itself, quoted as the tools print it.
    return f"{quote_path(finding.path)}:{finding.line}"


def offered_tools(final: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The `tools` list every request of a loop sends: the seven tools, then its final tool
    (submit_review for a review)."""
    return [*tool_schemas(), final or submit_review_schema()]


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


# A changed symlink or submodule is one line of text as GitHub shows it in the pull request
# (the link's target, `Subproject commit <id>`), which is where a comment on it sits; the
# diff holds that line, so it is read from there, never by following the link.
_LINE_KINDS = frozenset({SYMLINK_MODE, SUBMODULE_MODE})


class LineCounter:
    """Lines per file at the reviewed revision, read once each. With the change, a changed
    symlink or submodule has the lines its diff shows on the new side."""

    def __init__(self, workspace: Workspace, change: Change | None = None) -> None:
        self.workspace = workspace
        self.change = change
        self._lines: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            self._lines[path] = self._diff_lines(path) or self._file_lines(path)
        return self._lines[path]

    def _diff_lines(self, path: str) -> list[str] | None:
        entry = self.change.file(path) if self.change is not None else None
        if entry is None or entry.status == "deleted" or entry.new_mode not in _LINE_KINDS:
            return None
        numbered = {
            line.new_line: line.text
            for hunk in entry.hunks
            for line in hunk.lines
            if line.new_line is not None
        }
        return [numbered[n] for n in sorted(numbered)] or None

    def _file_lines(self, path: str) -> list[str]:
        rel = self.workspace.resolve_file(path)
        text, _size = read_text(self.workspace, rel, quote_path(path), MAX_SCAN_BYTES)
        return split_lines(text)


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
