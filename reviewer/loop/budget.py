"""The budgets of one review (model requests, tokens, cost, tool calls, wall time), shared by every
loop of it: a change split into parts spends from one purse, so a budget set to cap cost
holds for the whole review.

Loops run concurrently, and a request's cost is known only when it returns, so each request
reserves its estimated size before it is sent (the prompt, estimated, plus room for the
reply) and settles with the server's count after. `max_cost` is held the same way: a request
reserves the most it can cost (its prompt at the full input price, the whole reply room at
the output price) and settles with the cost of what the server counted. A request that does
not fit in what is left is not sent: the loop ends, incomplete, with the budget's name and
setting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from reviewer.errors import ReviewerError
from reviewer.findings import ModelPrice, Usage
from reviewer.settings.config import Settings
from reviewer.settings.pricing import price_for, usd


@dataclass(frozen=True)
class Reservation:
    """What one request holds of the budget until it is settled."""

    tokens: int
    cost: float = 0.0
    # The price the request is counted at (a verifier may use another model).
    price: ModelPrice | None = None


class ReviewBudget:
    """The purse of one review. Thread-safe; every method is one short critical section."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.monotonic,
        deadline: float | None = None,
    ) -> None:
        price = check_cost_budget(settings)
        self.settings = settings
        self.price = price
        self.clock = clock
        self.started = clock()
        self.deadline = deadline if deadline is not None else self.started + settings.max_seconds
        self._lock = threading.Lock()
        self.requests = 0
        self.tokens = 0
        self.reserved = 0
        self.cost = 0.0
        self.reserved_cost = 0.0
        self.tool_calls = 0

    # --- requests ------------------------------------------------------------------------

    def reserve(
        self,
        prompt_tokens: int,
        reply_tokens: int,
        price: ModelPrice | None = None,
        *,
        review_turn: bool = True,
    ) -> Reservation | str:
        """Hold room for one request (at `price`, else the review model's), or say (one
        line) which budget is spent. A request of a loop with its own bound on requests
        (`review_turn` False: a finding's check) is not one of the review's max_turns."""
        settings = self.settings
        wanted = prompt_tokens + reply_tokens
        price = price or self.price
        most = price.most(prompt_tokens, reply_tokens) if price else 0.0
        with self._lock:
            if review_turn and self.requests >= settings.max_turns:
                return spent_turns(settings)
            if self.tokens + self.reserved + wanted > settings.max_tokens:
                left = max(settings.max_tokens - self.tokens - self.reserved, 0)
                return spent_tokens(settings, left, wanted)
            if settings.max_cost is not None and (
                self.cost + self.reserved_cost + most > settings.max_cost
            ):
                left_cost = max(settings.max_cost - self.cost - self.reserved_cost, 0.0)
                return spent_cost(settings, left_cost, most)
            if self.clock() >= self.deadline:
                return spent_time(settings)
            self.requests += review_turn
            self.reserved += wanted
            self.reserved_cost += most
        return Reservation(wanted, most, price)

    def settle(self, reservation: Reservation, usage: Usage | None) -> None:
        """Release a request's hold and count what the server says it used (when it
        answered; a failed request's tokens are not counted by the server either)."""
        with self._lock:
            self.reserved -= reservation.tokens
            self.reserved_cost -= reservation.cost
            if usage is not None:
                self.tokens += usage.total_tokens
                if reservation.price is not None:
                    self.cost += reservation.price.cost(usage)

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

    def share_used(self, *, turns: bool = True) -> float:
        """The largest share of any budget used so far (0..1+), to tell the model to finish
        (`turns` False: leaving out max_turns, for a loop with its own bound on requests)."""
        settings = self.settings
        with self._lock:
            shares = (
                (self.requests + 1) / settings.max_turns if turns else 0.0,
                self.tool_calls / max(settings.max_tool_calls, 1),
                (self.tokens + self.reserved) / settings.max_tokens,
                (self.cost + self.reserved_cost) / (settings.max_cost or float("inf")),
            )
        elapsed = (self.clock() - self.started) / max(self.deadline - self.started, 1e-9)
        return max(*shares, elapsed)


# A check's requests beyond one per tool call: its verdict, and one reply without a call.
LOOP_EXTRA_REQUESTS = 2


class LoopBudget(ReviewBudget):
    """A short loop's share of the review's purse (a finding's verification): its tokens,
    cost and time are the review's, counted at the loop model's price; its tool calls are
    the review's too, and at most `max_tool_calls` of them. Its requests have their own
    bound (`max_tool_calls` + LOOP_EXTRA_REQUESTS) and are not the review's max_turns,
    which bounds the review's loops: a review with many findings must not have its checks
    turned away (left unverified) because the review loop used its turns."""

    def __init__(
        self, parent: ReviewBudget, max_tool_calls: int, price: ModelPrice | None
    ) -> None:
        # Not ReviewBudget.__init__: every count but this loop's tool calls is the parent's.
        self.parent = parent
        self.settings = parent.settings
        self.price = price
        self.clock = parent.clock
        self.started = parent.started
        self.deadline = parent.deadline
        self.max_tool_calls = max_tool_calls
        self.tool_calls = 0
        self.max_requests = max_tool_calls + LOOP_EXTRA_REQUESTS
        self.requests = 0
        self._lock = threading.Lock()

    def reserve(
        self,
        prompt_tokens: int,
        reply_tokens: int,
        price: ModelPrice | None = None,
        *,
        review_turn: bool = False,
    ) -> Reservation | str:
        with self._lock:
            if self.requests >= self.max_requests:
                return (
                    f"the check's request bound ({self.max_requests}: verify_tool_calls = "
                    f"{self.max_tool_calls}, and {LOOP_EXTRA_REQUESTS} more) was spent"
                )
            self.requests += 1
        held = self.parent.reserve(
            prompt_tokens, reply_tokens, price or self.price, review_turn=False
        )
        if isinstance(held, str):
            with self._lock:
                self.requests -= 1
        return held

    def settle(self, reservation: Reservation, usage: Usage | None) -> None:
        self.parent.settle(reservation, usage)

    def time_spent(self) -> str:
        return self.parent.time_spent()

    def take_tool_call(self) -> bool:
        with self._lock:
            if self.tool_calls >= self.max_tool_calls:
                return False
            self.tool_calls += 1
        return self.parent.take_tool_call()

    def tool_calls_spent(self) -> bool:
        with self._lock:
            mine = self.tool_calls >= self.max_tool_calls
        return mine or self.parent.tool_calls_spent()

    def share_used(self, *, turns: bool = True) -> float:
        with self._lock:
            mine = max(
                self.tool_calls / max(self.max_tool_calls, 1),
                (self.requests + 1) / self.max_requests,
            )
        return max(mine, self.parent.share_used(turns=False))


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


def spent_cost(settings: Settings, left: float, wanted: float) -> str:
    return (
        f"the review's cost budget (max_cost = {usd(settings.max_cost or 0)}) was spent: the "
        f"next request may cost up to {usd(wanted)} and {usd(left)} is left; raise max_cost "
        "(REVIEWER_MAX_COST) to review more"
    )


def check_cost_budget(settings: Settings) -> ModelPrice | None:
    """The model's price; an error (before any request is sent) when max_cost is set and
    there is none, for the review's model or the model that verifies its findings, since
    the budget could not be held."""
    price = price_for(settings.model, settings.prices)
    if settings.max_cost is not None and price is None:
        raise ReviewerError(cost_needs_price(settings))
    if settings.max_cost is not None and settings.verify != "off" and not verify_price(settings):
        raise ReviewerError(cost_needs_price(settings, settings.verify_model, "verify_model"))
    return price


def verify_price(settings: Settings) -> ModelPrice | None:
    """The price of the model that verifies findings (verify_model, else the review's)."""
    return price_for(settings.verify_model or settings.model, settings.prices)


def cost_needs_price(settings: Settings, model: str | None = None, which: str = "model") -> str:
    model = model or settings.model or "MODEL"
    return (
        f"max_cost is set but no price is known for the {which} '{model}', so the cost cannot "
        f'be counted; set [prices."{model}"] with input, cached_input and output (USD per '
        "million tokens) in the settings, or unset max_cost"
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
