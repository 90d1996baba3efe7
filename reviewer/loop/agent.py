"""The agent loop: the model investigates with the tools until it calls its final tool
(`submit_review` for a review, `submit_answer` for an answer in a thread) with arguments that
pass that tool's checks, or a budget of the review (model requests, tool calls, tokens, wall
time) runs out. The budgets
are the review's, shared with every other loop of it (reviewer/loop/budget.py).

The loop never trusts the model: tool calls run in the sandbox, malformed calls and invalid
findings go back as errors to fix, identical calls are answered from the first result, and
the conversation is kept inside the context window by shortening old tool results first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from reviewer.findings import Usage
from reviewer.llm import (
    ChatModel,
    ContextLengthError,
    EndpointError,
    ModelError,
    Reply,
    ReplyTimedOut,
    ToolCall,
)
from reviewer.llm.reply_size import reply_cap, reply_room
from reviewer.loop.budget import Reservation, ReviewBudget, spent_tool_calls
from reviewer.loop.call_example import call_example
from reviewer.loop.final import FinalTool, offered_tools
from reviewer.loop.steering import Steering
from reviewer.loop.tokens import estimate_request_tokens
from reviewer.loop.tool_runs import ToolRuns
from reviewer.loop.window import Window
from reviewer.safety.redact import Redactor
from reviewer.settings.config import Settings
from reviewer.workspace import Workspace

# When this share of a budget is used, the model is told to finish.
_WRAP_UP_SHARE = 0.85
# Replies in a row without a usable tool call before the loop gives up on the model.
_MAX_IDLE_REPLIES = 4

# What the final tool accepts: a review's submission, an answer's text.
T = TypeVar("T")


class AgentEvents(Protocol):
    def turn_started(self, turn: int, usage: Usage, tool_calls: int) -> None: ...
    def tool_called(self, name: str, arguments: str, cached: bool) -> None: ...
    def retrying(self, reason: str, delay: float) -> None: ...
    def note(self, text: str) -> None: ...
    def for_part(self, number: int, total: int, label: str) -> AgentEvents: ...


@dataclass
class AgentOutcome(Generic[T]):
    submission: T | None
    usage: Usage
    turns: int
    tool_calls: int
    # Why the loop stopped without a valid submission ('' when it has one).
    stop_reason: str = ""
    # The valid findings of a rejected submission, kept when the review ends incomplete.
    unverified_findings: list[Any] = field(default_factory=list)
    last_text: str = ""
    transcript: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Agent(Generic[T]):
    model: ChatModel
    workspace: Workspace
    settings: Settings
    final: FinalTool[T]
    redactor: Redactor
    events: AgentEvents | None = None
    clock: Callable[[], float] = time.monotonic
    # The review's budgets, shared with its other loops; a loop of its own gets a fresh one.
    budget: ReviewBudget | None = None
    # Keep the messages for a transcript (else only the transcript's end marks are kept).
    record: bool = True

    def run(self, system: str, task: str) -> AgentOutcome[T]:
        return _Run(self, system, task).loop()


class _Run(Generic[T]):
    """The state of one loop; kept apart from the Agent so an Agent can be reused."""

    def __init__(self, agent: Agent[T], system: str, task: str) -> None:
        self.agent = agent
        self.settings = agent.settings
        self.final = agent.final
        self.tools = offered_tools(agent.final.schema())
        offered = frozenset(tool["function"]["name"] for tool in self.tools)
        self.steering = Steering(
            agent.final.name,
            agent.final.purpose,
            offered,
            call_example(agent.final.schema()),
            final_schema=agent.final.schema(),
            structured=agent.settings.structured_answer == "auto",
        )
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": task},
        ]
        self.transcript: list[dict[str, Any]] = (
            [{"type": "message", "message": m} for m in self.messages] if agent.record else []
        )
        self.budget = agent.budget or ReviewBudget(self.settings, clock=agent.clock)
        self.usage = Usage()
        self.turns = 0
        self.runs = ToolRuns(
            agent.workspace,
            agent.redactor,
            self.budget,
            agent.final.name,
            agent.settings.max_tool_calls,
            agent.events,
        )
        self.window = Window()
        self.warned = False
        # Turns in which the model still asked for tools after the tool budget was spent.
        self.turns_past_tool_budget = 0
        # Replies in a row without a tool call: a model or server that cannot call tools
        # would otherwise be nudged until the whole budget is spent.
        self.idle_replies = 0
        self.last_text = ""
        # The response_format of the next request when it asks for the final call's
        # arguments held to their schema (steering.py); None for an ordinary request.
        self.answer_format: dict[str, Any] | None = None
        self.unverified: list[Any] = []
        self.started = agent.clock()
        self.deadline = self.budget.deadline

    # --- the loop ------------------------------------------------------------------------

    def loop(self) -> AgentOutcome[T]:
        while True:
            reason = self._budget_spent()
            if reason:
                return self._outcome(None, reason)
            if self.agent.events:
                self.agent.events.turn_started(self.turns + 1, self.usage, self.runs.calls)
            structured = self.answer_format is not None
            try:
                reply = self._ask()
            except ReplyTimedOut:
                self.turns += 1
                timeout = f"no reply within request_timeout = {self.settings.request_timeout:g} s"
                if stop := self._cut_off(None, timeout):
                    return self._outcome(None, stop)
                continue
            except ModelError as exc:
                if structured and not isinstance(exc, EndpointError):
                    # The server would not take the structured request: ordinary ones only.
                    self.steering.structured = False
                    if self.agent.events:
                        self.agent.events.note(f"a structured answer was refused: {exc}")
                    continue
                return self._outcome(None, f"the model failed: {exc}")
            if isinstance(reply, str):
                return self._outcome(None, reply)
            self.turns += 1
            self.usage = self.usage + reply.usage
            if reply.finish_reason == "length":
                if stop := self._cut_off(reply, "at the output limit, max_output_tokens"):
                    return self._outcome(None, stop)
                continue
            self.steering.answered()
            message = reply.assistant_message()
            self.messages.append(message)
            self._record("reply", message, usage=reply.usage)
            if reply.calls_from_text and self.agent.record:
                self.transcript[-1]["recovered_from_text"] = reply.content
            if reply.text_call_problem and self.agent.record:
                self.transcript[-1]["unread_call"] = reply.text_call_problem
            if structured and self.agent.record:
                self.transcript[-1]["structured_answer"] = True
            if reply.content:
                self.last_text = reply.content
            if not reply.tool_calls:
                self.idle_replies += 1
                if self.idle_replies >= _MAX_IDLE_REPLIES:
                    return self._outcome(None, _no_tool_calls(self.idle_replies))
                note, self.answer_format = self.steering.unread(reply, self.idle_replies)
                self._say(note)
                continue
            self.idle_replies = 0
            refused_before = self.runs.refused
            submission = self._answer_calls(reply.tool_calls)
            if submission is not None:
                return self._outcome(submission, "")
            if structured:
                # Refused: the fix is asked for the same way (this model writes no calls).
                self.answer_format = self.steering.structured_format()
            if stop := self.steering.after_calls(reply.tool_calls):
                return self._outcome(None, stop)
            if self.runs.refused > refused_before:
                self.turns_past_tool_budget += 1
            self._maybe_warn()

    def _ask(self) -> Reply | str:
        """One model request that fits the window and the review's budget, or why not."""
        answer_format, self.answer_format = self.answer_format, None
        for _attempt in range(2):
            if not self._fit_context():
                break
            held = self.budget.reserve(
                estimate_request_tokens(self.messages, self.tools),
                reply_room(self.settings),
            )
            if isinstance(held, str):
                return held
            try:
                reply = self._request(held, answer_format)
            except ContextLengthError:
                # The estimate was low for this model: shorten everything old and try once more.
                if not self.window.shorten_all(self.messages):
                    raise
                continue
            return reply
        return "the conversation no longer fits the model's context window"

    def _request(self, held: Reservation, answer_format: dict[str, Any] | None) -> Reply:
        reply: Reply | None = None
        spent: Usage | None = None
        try:
            reply = self.agent.model.complete(
                self.messages, self.tools, self.deadline, answer_format
            )
            spent = reply.usage
            return reply
        except ReplyTimedOut:
            # The server worked until the timeout and says nothing: count what was held.
            spent = Usage(completion_tokens=held.tokens)
            raise
        finally:
            self.budget.settle(held, spent)

    def _cut_off(self, reply: Reply | None, how: str) -> str:
        """A reply cut off (steering.py): kept short, its calls not run, the model asked
        again; the stop reason when it keeps running away."""
        if reply is not None:
            message = self.steering.cut_message(reply)
            self.messages.append(message)
            self._record("reply", message, usage=reply.usage)
        note, stop = self.steering.cut(how)
        if not stop:
            self._say(note)
        return stop

    def _answer_calls(self, calls: tuple[ToolCall, ...]) -> T | None:
        """Answer every call of one reply, in order. The tools a reply asks for run at the
        same time (a model often asks for several files at once, and git tools wait on
        processes); the answers go back in the order of the calls."""
        final, steering = self.final.name, self.steering
        to_run = [c for c in calls if c.name != final and steering.not_offered(c) is None]
        answers = self.runs.answer(to_run)
        accepted: T | None = None
        for call in calls:
            if (refusal := steering.not_offered(call)) is not None:
                text = refusal
            elif call.name == final:
                text, accepted_now = self._submit(call)
                accepted = accepted if accepted is not None else accepted_now
            else:
                text = answers.pop(0)
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            self._record(
                "tool_result", {"tool_call_id": call.id, "name": call.name, "content": text}
            )
        return accepted

    def _submit(self, call: ToolCall) -> tuple[str, T | None]:
        verdict = self.final.accept(call.arguments)
        if verdict.accepted is None:
            self.unverified = verdict.unverified
            self.last_text = verdict.text or self.last_text
        return verdict.reply, verdict.accepted

    # --- budgets and context ---------------------------------------------------------------

    def _budget_spent(self) -> str:
        """Time, and a model that keeps asking for tools past the tool-call budget; model
        requests and tokens are checked as each request reserves its room (_ask)."""
        if self.turns_past_tool_budget > 2:
            return spent_tool_calls(self.settings)
        return self.budget.time_spent()

    def _maybe_warn(self) -> None:
        if self.warned:
            return
        if self.budget.share_used() >= _WRAP_UP_SHARE:
            self.warned = True
            self._say(
                "Your budget is nearly spent. Stop investigating and call "
                f"{self.final.name} now with {self.final.purpose}."
            )

    def _say(self, text: str) -> None:
        last = self.messages[-1]
        if last["role"] == "tool":
            # Some servers (Mistral) refuse a user message right after tool results: the
            # words ride on the last result instead, which every server accepts.
            self.messages[-1] = {**last, "content": f"{last['content']}\n\n[Note: {text}]"}
            self._record("message", {"role": "tool", "appended": text})
            return
        message = {"role": "user", "content": text}
        self.messages.append(message)
        self._record("message", message)

    def _fit_context(self) -> bool:
        limit = self.settings.context_window - reply_cap(self.settings)
        return self.window.fit(self.messages, self.tools, limit)

    # --- results -----------------------------------------------------------------------

    def _record(self, kind: str, payload: dict[str, Any], usage: Usage | None = None) -> None:
        if not self.agent.record:
            return
        entry: dict[str, Any] = {
            "type": kind,
            "elapsed": round(self.agent.clock() - self.started, 3),
        }
        entry["message" if kind != "tool_result" else "result"] = payload
        if usage is not None:
            entry["usage"] = {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
            }
        self.transcript.append(entry)

    def _outcome(self, submission: T | None, reason: str) -> AgentOutcome[T]:
        return AgentOutcome(
            submission=submission,
            usage=self.usage,
            turns=self.turns,
            tool_calls=self.runs.calls,
            stop_reason=reason,
            unverified_findings=self.unverified if submission is None else [],
            last_text=self.last_text,
            transcript=self.transcript,
        )


def _no_tool_calls(replies: int) -> str:
    return (
        f"the model answered {replies} times in a row without calling a tool; the model or "
        "the server may not support tool calling (llama.cpp: start the server with --jinja; "
        "Ollama: pick a model with tool support; vLLM: --enable-auto-tool-choice "
        "--tool-call-parser NAME)"
    )
