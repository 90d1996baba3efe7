"""`submit_verdict`: the final tool of a finding's verification loop (verify.py), declared
once and checked when called, like `submit_review` and `submit_answer`
(review/submission.py), by the loop's FinalTool protocol (loop/final.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewer.findings import Severity
from reviewer.loop.final import Verdict, parse_call

SUBMIT_VERDICT = "submit_verdict"


class SubmitVerdict(BaseModel):
    """Finish the check of the finding: say whether the code confirms it, refutes it, or
    leaves it uncertain, and why. Call it once, at the end."""

    model_config = ConfigDict(extra="ignore")

    verdict: Literal["confirmed", "refuted", "uncertain"] = Field(
        description="confirmed: the code shows the problem; refuted: the code shows it is "
        "not a problem (or not there); uncertain: the code you read does not settle it."
    )
    reason: str = Field(
        description="One or two sentences: the evidence, with the file and line it is at.",
        min_length=1,
        max_length=1000,
    )
    severity: Severity | None = Field(
        None,
        description="Only when the evidence shows the finding is less or more severe than "
        "it says: critical, high, medium, low or info.",
    )

    @field_validator("verdict", "severity", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower() or None
        return value


@cache
def submit_verdict_schema() -> dict[str, Any]:
    """The `submit_verdict` entry of the OpenAI `tools` list."""
    fields = SubmitVerdict.model_fields
    return {
        "type": "function",
        "function": {
            "name": SUBMIT_VERDICT,
            "description": " ".join((SubmitVerdict.__doc__ or "").split()),
            "parameters": {
                "type": "object",
                "properties": {
                    "verdict": {
                        "type": "string",
                        "enum": ["confirmed", "refuted", "uncertain"],
                        "description": fields["verdict"].description,
                    },
                    "reason": {"type": "string", "description": fields["reason"].description},
                    "severity": {
                        "type": "string",
                        "enum": [s.value for s in Severity],
                        "description": fields["severity"].description,
                    },
                },
                "required": ["verdict", "reason"],
            },
        },
    }


@dataclass(frozen=True)
class VerdictSubmission:
    """`submit_verdict` as the final tool of a verification loop (agent.FinalTool)."""

    name: str = SUBMIT_VERDICT
    purpose: str = "your verdict and its reason"

    def schema(self) -> dict[str, Any]:
        return submit_verdict_schema()

    def accept(self, arguments: str) -> Verdict[SubmitVerdict]:
        submission = parse_call(SubmitVerdict, SUBMIT_VERDICT, arguments)
        if isinstance(submission, str):
            return Verdict(submission)
        if not submission.reason.strip():
            return Verdict(f"Error: {SUBMIT_VERDICT} needs a reason. Call it again.")
        return Verdict("Verdict received.", submission)
