"""The read-only tools as one agent loop runs them (agent.py): a call identical to an earlier
one is answered from the first result, a call past the review's tool-call budget is refused,
and the rest of a reply's calls run at the same time (a model often asks for several files
at once, and git tools wait on processes); the answers come back in the order of the calls.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from reviewer.errors import ToolError
from reviewer.llm import ToolCall
from reviewer.loop.budget import ReviewBudget
from reviewer.safety.redact import Redactor
from reviewer.tools import parse_arguments, run_tool
from reviewer.workspace import Workspace

# Tools of one reply run at the same time, at most this many.
_TOOL_WORKERS = 8


class ToolEvents(Protocol):
    def tool_called(self, name: str, arguments: str, cached: bool) -> None: ...


@dataclass
class ToolRuns:
    workspace: Workspace
    redactor: Redactor
    budget: ReviewBudget
    # The loop's final tool, named when the budget is spent; the budget's size, said then.
    final: str
    max_tool_calls: int
    events: ToolEvents | None = None
    # Calls asked for (answered from the cache too), and those refused past the budget.
    calls: int = 0
    refused: int = 0
    cache: dict[str, str] = field(default_factory=dict)

    def answer(self, calls: list[ToolCall]) -> list[str]:
        """The answers to `calls`, in order: from the cache (an identical earlier call, also
        one earlier in the same reply), refused past the budget, or run (concurrently)."""
        answers: list[str | None] = [None] * len(calls)
        keys = [_cache_key(call) for call in calls]
        running: set[str] = set()
        to_run: list[int] = []
        for index, call in enumerate(calls):
            arguments = call.arguments_json()
            key = keys[index]
            self.calls += 1
            if key in self.cache or key in running:  # answered from the first call's result
                if self.events:
                    self.events.tool_called(call.name, arguments, True)
                continue
            if not self.budget.take_tool_call():
                self.refused += 1
                answers[index] = (
                    f"Error: the review's tool-call budget ({self.max_tool_calls}) is "
                    f"spent; call {self.final} now with what you have."
                )
                continue
            if self.events:
                self.events.tool_called(call.name, arguments, False)
            running.add(key)
            to_run.append(index)
        for index, text in zip(to_run, self._execute([calls[i] for i in to_run]), strict=True):
            answers[index] = text
            self.cache[keys[index]] = text
        for index, key in enumerate(keys):
            if answers[index] is None:
                earlier = self.cache[key]
                answers[index] = "[Same call as before; this is its earlier answer.]\n" + earlier
        return [text or "" for text in answers]

    def _execute(self, calls: list[ToolCall]) -> list[str]:
        def one(call: ToolCall) -> str:
            return run_tool(call.name, call.arguments, self.workspace, self.redactor).text

        if len(calls) <= 1:
            return [one(call) for call in calls]
        with ThreadPoolExecutor(max_workers=min(len(calls), _TOOL_WORKERS)) as pool:
            return list(pool.map(one, calls))


def _cache_key(call: ToolCall) -> str:
    try:
        arguments: Any = parse_arguments(call.arguments)
    except ToolError:
        arguments = call.arguments_json()
    return call.name + "\x00" + json.dumps(arguments, sort_keys=True, default=str)
