"""What the agent loop says to a model whose reply is not an ordinary turn, and when it
gives up on it.

- A reply cut at the output cap (`finish_reason: length`) or by the request timeout (a small
  model running away on a CPU server) is a turn: its calls are not run (the last one is cut,
  and a cut submission must never be accepted), the model is told its answer was too long
  and asked again, within the budgets; after three such replies in a row the loop stops.
- A reply in prose, with no call, is answered with how to call the final tool, and an
  example of that call written as the one JSON object the loop also reads as a call (a reply
  that is wholly a call written as text but cannot be read, llm/text_calls.py, is told why
  instead); from the second such reply in a row on, the next request asks for the final
  call's arguments held to its schema (structured_answer.py), and so does the request after
  such an answer was refused.
- A call of a tool this loop does not offer (`submit_review` where a question expects
  `submit_answer`) is answered with the tool that ends this loop; after three replies in a
  row that call only such tools the loop stops, saying so (raising a budget would not help).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.llm import Reply, ToolCall
from reviewer.loop.structured_answer import structured_answer_format, structured_answer_note

# Replies in a row cut off, or calling only tools not offered, before the loop gives up.
MAX_CUT_REPLIES = 3
MAX_WRONG_TOOL_REPLIES = 3
# Replies in a row with no usable call after which the next request asks for the final call
# held to its schema: the first is answered with the example call, which a model that can
# call tools takes up.
IDLE_BEFORE_STRUCTURED = 2
# What is kept of a cut reply's text in the conversation: enough to see where it went.
_CUT_TEXT_CHARS = 600


@dataclass
class Steering:
    final: str
    purpose: str
    offered: frozenset[str]
    # A filled-in call of `final` as one JSON object (call_example.py), shown after prose.
    example: str = ""
    # The final tool's declaration, and whether a structured answer may be asked for (the
    # setting, until the server refuses one).
    final_schema: dict[str, Any] | None = None
    structured: bool = False
    cut_in_a_row: int = 0
    wrong_in_a_row: int = 0

    # --- replies cut off ------------------------------------------------------------------

    def cut_message(self, reply: Reply) -> dict[str, Any]:
        """The cut reply as it stays in the conversation: its text, shortened, no calls."""
        text = reply.content.strip()
        if len(text) > _CUT_TEXT_CHARS:
            text = text[:_CUT_TEXT_CHARS] + " [...]"
        return {"role": "assistant", "content": text or "[reply cut off]"}

    def cut(self, how: str) -> tuple[str, str]:
        """The note for the model after a reply cut `how`, and the stop reason ('' to go
        on)."""
        self.cut_in_a_row += 1
        if self.cut_in_a_row >= MAX_CUT_REPLIES:
            return "", (
                f"the model's replies were cut off {self.cut_in_a_row} times in a row ({how}); "
                "a small model may write without end: raise max_output_tokens or "
                "request_timeout, or try a larger model"
            )
        note = (
            f"Your reply was too long and was cut off ({how}), so nothing in it was used. "
            f"Answer again, shorter: call one tool, or call {self.final} with "
            f"{self.purpose}, briefly (short finding bodies, no repetition)."
        )
        return note, ""

    def answered(self) -> None:
        """A reply that was not cut."""
        self.cut_in_a_row = 0

    # --- replies that call no tool ----------------------------------------------------------

    def unread(self, reply: Reply, in_a_row: int) -> tuple[str, dict[str, Any] | None]:
        """The note after the `in_a_row`-th reply in a row that called no tool (and held no
        call written as text), and the response_format of the next request (None: an
        ordinary one)."""
        answer_format = self.structured_format() if in_a_row >= IDLE_BEFORE_STRUCTURED else None
        problem = reply.text_call_problem
        if answer_format is not None and self.final_schema is not None:
            note = structured_answer_note(self.final_schema)
        elif problem:
            note, answer_format = "Call the tool again with arguments that can be read.", None
        else:
            note, answer_format = self._unread_note(reply), None
        if problem:  # wholly a call written as text, but unreadable: refused, saying why
            note = f"Your reply was read as a call written as text and refused: {problem}. {note}"
        return note, answer_format

    def structured_format(self) -> dict[str, Any] | None:
        """The response_format that asks for the final call held to its schema, when allowed."""
        if not self.structured or self.final_schema is None:
            return None
        return structured_answer_format(self.final_schema)

    def _unread_note(self, reply: Reply) -> str:
        if not reply.content.strip():
            return f"Your reply was empty. Call a tool to investigate, or call {self.final}."
        text = (
            f"Answer by calling a tool. When you are done, call {self.final} with "
            f"{self.purpose}; plain text is not read."
        )
        if self.example:
            # A small model that cannot emit a native call can still write this one form.
            text += (
                " If you cannot call tools, reply with only one JSON object, nothing before "
                f"or after it, like this one filled in: {self.example}"
            )
        return text

    # --- tools not offered -------------------------------------------------------------------

    def not_offered(self, call: ToolCall) -> str | None:
        """The answer to a call of a tool this loop does not offer (None for an offered one)."""
        if call.name in self.offered:
            return None
        return (
            f"Error: unknown tool '{call.name[:100]}'. This conversation ends only with "
            f"{self.final} ({self.purpose}); the other tools are "
            f"{', '.join(sorted(self.offered - {self.final}))}."
        )

    def after_calls(self, calls: tuple[ToolCall, ...]) -> str:
        """Count a reply's calls; the stop reason when the model keeps calling tools this loop
        does not offer ('' to go on)."""
        wrong = [call.name for call in calls if call.name not in self.offered]
        if not wrong or len(wrong) < len(calls):
            self.wrong_in_a_row = 0
            return ""
        self.wrong_in_a_row += 1
        if self.wrong_in_a_row < MAX_WRONG_TOOL_REPLIES:
            return ""
        return (
            f"the model called '{wrong[0][:100]}', a tool this loop does not offer, in "
            f"{self.wrong_in_a_row} replies in a row, though told that this loop ends with "
            f"{self.final}; the model does not follow the tools it is given: try a larger "
            "model"
        )
