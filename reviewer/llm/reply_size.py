"""How long a model's reply may be: sent as the cap with every request, kept free in the
context window, and held of the review's budgets while a request is out."""

from __future__ import annotations

from reviewer.settings.config import Settings

# What a request holds of the budgets for its reply while it is out, when max_output_tokens
# is unset: replies here are tool calls and a review, rarely longer.
DEFAULT_REPLY_TOKENS = 2048
# A reply's cap when max_output_tokens is unset: a large submission (30 findings of about
# 220 tokens each, with a summary) fits with room to spare, and a runaway reply ends there.
DEFAULT_REPLY_CAP = 8192


def reply_room(settings: Settings) -> int:
    """The tokens a request holds for its reply."""
    return settings.max_output_tokens or DEFAULT_REPLY_TOKENS


def reply_cap(settings: Settings) -> int:
    """The most tokens a reply may take: sent with every request, and kept free in the
    context window. Unset, at most a quarter of the window, so a small local window
    (Ollama's 4,096 tokens) still has room for the conversation."""
    if settings.max_output_tokens is not None:
        return settings.max_output_tokens
    return min(DEFAULT_REPLY_CAP, settings.context_window // 4)
