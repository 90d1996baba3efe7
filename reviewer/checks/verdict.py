"""`submit_verdict`: the final tool of a finding's verification loop (verify.py), declared
once and checked when called, like `submit_review` and `submit_answer`
(review/submission.py), by the loop's FinalTool protocol (loop/final.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewer.findings import Severity
from reviewer.loop.final import Verdict, parse_call
from reviewer.settings.learnings import normalize_id

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
    learning: str | None = Field(
        None,
        description="The id (such as L2) of the team's learning your verdict relies on, "
        "when one you were shown speaks to this finding; leave it out otherwise.",
        max_length=20,
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
                    "learning": {"type": "string", "description": fields["learning"].description},
                },
                "required": ["verdict", "reason"],
            },
        },
    }


@dataclass(frozen=True)
class VerdictSubmission:
    """`submit_verdict` as the final tool of a verification loop (agent.FinalTool).
    `learnings`: the ids of the learnings this loop was shown, the only ones a verdict may
    name: a verdict naming any other (one the model or a text made up) is refused and asked
    again, so it can never discard a finding."""

    name: str = SUBMIT_VERDICT
    purpose: str = "your verdict and its reason"
    learnings: frozenset[str] = field(default_factory=frozenset)

    def schema(self) -> dict[str, Any]:
        return submit_verdict_schema()

    def accept(self, arguments: str) -> Verdict[SubmitVerdict]:
        submission = parse_call(SubmitVerdict, SUBMIT_VERDICT, arguments)
        if isinstance(submission, str):
            return Verdict(submission)
        if not submission.reason.strip():
            return Verdict(f"Error: {SUBMIT_VERDICT} needs a reason. Call it again.")
        named = (submission.learning or "").strip()
        if named:
            learning = normalize_id(named)
            if learning is None or learning not in self.learnings:
                shown = ", ".join(sorted(self.learnings, key=lambda i: int(i[1:])))
                where = f"one of {shown}" if shown else "none: you were shown no learnings"
                return Verdict(
                    f"Error: `learning` names no learning you were shown ({where}). Call "
                    f"{SUBMIT_VERDICT} again, naming a learning that was shown or none."
                )
            submission = submission.model_copy(update={"learning": learning})
        return Verdict("Verdict received.", submission)
