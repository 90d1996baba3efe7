"""A finding as the model submits it: the shape `submit_review` declares
(review/submission.py) and the checks read and mark (grounding, intent; review/refusals.py and
anchor.py). It lives with the checks, below the review, so that the checks import nothing of
the review that runs them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
)

from reviewer.findings import CATEGORIES, Severity

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
    ticket_quote: str | None = Field(
        None,
        description="For category intent: the words of the ticket the finding relies on (what "
        "it asks or forbids), copied exactly from the ticket's text; checked against it.",
    )
    # What grounding did to the finding (grounding.py: moved to where its quote is, or kept
    # without a quote that is in no file), for the reports; "" when nothing.
    _grounding: str = PrivateAttr("")
    # Grounding could not settle its quote within its bound: to be verified (force_verify).
    _verify: bool = PrivateAttr(False)
    # Why the finding is discarded unchecked (Refusals.again: refused, then sent again
    # unchanged), or "".
    _refused: str = PrivateAttr("")
    # An intent finding: the key of the ticket its ticket_quote is in (checks/intent.py), or
    # why it is kept without its intent claim (refused, then sent again unchanged): it is
    # then an ordinary finding, and verification decides.
    _ticket: str = PrivateAttr("")
    _ticket_note: str = PrivateAttr("")

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
