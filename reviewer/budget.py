"""The budgets of one review (model requests, tokens, tool calls, wall time), shared by every
loop of it: a change split into parts spends from one purse, so a budget set to cap cost
holds for the whole review.

Loops run concurrently, and a request's cost is known only when it returns, so each request
reserves its estimated size before it is sent (the prompt, estimated, plus room for the
reply) and settles with the server's count after. A request that does not fit in what is
left is not sent: the loop ends, incomplete, with the budget's name and setting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from reviewer.config import Settings
from reviewer.findings import Usage


@dataclass(frozen=True)
class Reservation:
    """What one request holds of the budget until it is settled."""

    tokens: int


class ReviewBudget:
    """The purse of one review. Thread-safe; every method is one short critical section."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        deadline: float | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.started = clock()
        self.deadline = deadline if deadline is not None else self.started + settings.max_seconds
        self._lock = threading.Lock()
        self.requests = 0
        self.tokens = 0
        self.reserved = 0
        self.tool_calls = 0

    # --- requests ------------------------------------------------------------------------

    def reserve(self, prompt_tokens: int, reply_tokens: int) -> Reservation | str:
        """Hold room for one request, or say (one line) which budget is spent."""
        settings = self.settings
        wanted = prompt_tokens + reply_tokens
        with self._lock:
            if self.requests >= settings.max_turns:
                return spent_turns(settings)
            if self.tokens + self.reserved + wanted > settings.max_tokens:
                left = max(settings.max_tokens - self.tokens - self.reserved, 0)
                return spent_tokens(settings, left, wanted)
            if self.clock() >= self.deadline:
                return spent_time(settings)
            self.requests += 1
            self.reserved += wanted
        return Reservation(wanted)

    def settle(self, reservation: Reservation, usage: Usage | None) -> None:
        """Release a request's hold and count what the server says it used (when it
        answered; a failed request's tokens are not counted by the server either)."""
        with self._lock:
            self.reserved -= reservation.tokens
            if usage is not None:
                self.tokens += usage.total_tokens

    def time_spent(self) -> str:
        return spent_time(self.settings) if self.clock() >= self.deadline else ""

    # --- tool calls ----------------------------------------------------------------------

    def take_tool_call(self) -> bool:
        """Count one tool call; False when the review's tool-call budget is already spent."""
        with self._lock:
            if self.tool_calls >= self.settings.max_tool_calls:
                return False
            self.tool_calls += 1
            return True

    def tool_calls_spent(self) -> bool:
        with self._lock:
            return self.tool_calls >= self.settings.max_tool_calls

    # --- how far along -------------------------------------------------------------------

    def share_used(self) -> float:
        """The largest share of any budget used so far (0..1+), to tell the model to finish."""
        settings = self.settings
        with self._lock:
            shares = (
                (self.requests + 1) / settings.max_turns,
                self.tool_calls / max(settings.max_tool_calls, 1),
                (self.tokens + self.reserved) / settings.max_tokens,
            )
        elapsed = (self.clock() - self.started) / max(self.deadline - self.started, 1e-9)
        return max(*shares, elapsed)


# The one-line reasons, naming the setting to raise: a reader can act on each.
def spent_turns(settings: Settings) -> str:
    return (
        f"the review's model-request budget (max_turns = {settings.max_turns}) was spent; "
        "raise max_turns (REVIEWER_MAX_TURNS) for a change this size"
    )


def spent_tokens(settings: Settings, left: int, wanted: int) -> str:
    return (
        f"the review's token budget (max_tokens = {settings.max_tokens:,}) was spent: the next "
        f"request needs about {wanted:,} tokens and {left:,} are left; raise max_tokens "
        "(REVIEWER_MAX_TOKENS) to review more"
    )


def spent_time(settings: Settings) -> str:
    return (
        f"the review's time budget (max_seconds = {settings.max_seconds:.0f}) was spent; "
        "raise max_seconds (REVIEWER_MAX_SECONDS)"
    )


def spent_tool_calls(settings: Settings) -> str:
    return (
        f"the review's tool-call budget (max_tool_calls = {settings.max_tool_calls}) was "
        "spent; raise max_tool_calls (REVIEWER_MAX_TOOL_CALLS)"
    )
