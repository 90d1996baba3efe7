"""The tool that ends a loop (`submit_review`, `submit_answer`, `submit_verdict`): declared
once by whoever runs the loop, and checked when called. The loop knows only this protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import ValidationError

from reviewer.errors import ToolError
from reviewer.tools import parse_arguments, tool_schemas

# What a final tool accepts: a review's submission, an answer's text, a verdict.
T = TypeVar("T")


@dataclass
class Verdict(Generic[T]):
    """What a call of the final tool came to: the text the model gets back, and the accepted
    value (None when the call must be fixed and made again)."""

    reply: str
    accepted: T | None = None
    # What of a rejected call passed its checks (a review's valid findings), kept if the
    # loop ends there.
    unverified: list[Any] = field(default_factory=list)
    # The model's own words in a rejected call (a summary), kept for the report.
    text: str = ""


class FinalTool(Protocol[T]):
    """The tool that ends a loop: declared once (its schema), checked when called."""

    @property
    def name(self) -> str: ...
    # What the model passes to it, for the loop's reminders ("your summary and findings").
    @property
    def purpose(self) -> str: ...
    def schema(self) -> dict[str, Any]: ...
    def accept(self, arguments: str) -> Verdict[T]: ...


def parse_call(model: type[Any], name: str, arguments: str) -> Any:
    """A final call's arguments as `model`, or the error the model gets back."""
    try:
        return model.model_validate(parse_arguments(arguments))
    except ToolError as exc:
        return f"Error: {name}: {exc}"
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:10]
        )
        return f"Error: {name} arguments are invalid: {problems}. Fix and call again."


def offered_tools(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The `tools` list every request of a loop sends: the seven tools, then its final tool."""
    return [*tool_schemas(), final]
