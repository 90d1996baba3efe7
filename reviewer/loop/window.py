"""A loop's conversation kept within the model's context window: old tool results are
shortened first, oldest first; the latest round (what the model is working on) never."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewer.loop.tokens import estimate_message_tokens, estimate_request_tokens

_SHORTENED_CHARS = 400
_SHORTENED_NOTE = "\n[Shortened to keep the conversation within the context window; call the tool again if you need the rest.]"  # noqa: E501


@dataclass
class Window:
    """What was shortened of one loop's messages (each message at most once)."""

    shortened: set[int] = field(default_factory=set)

    def fit(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], limit: int) -> bool:
        """Shorten old tool results until the request is at most `limit` tokens; False when
        it still is not."""
        size = estimate_request_tokens(messages, tools)
        last_assistant = max(
            (i for i, m in enumerate(messages) if m["role"] == "assistant"), default=0
        )
        for index, message in enumerate(messages):
            if size <= limit:
                return True
            if index >= last_assistant or not self._shortenable(index, message):
                continue
            before = estimate_message_tokens(message)
            self._shorten(messages, index)
            size -= before - estimate_message_tokens(messages[index])
        return size <= limit

    def shorten_all(self, messages: list[dict[str, Any]]) -> bool:
        """Shorten every tool result that can be; False when none could."""
        changed = False
        for index, message in enumerate(messages):
            if self._shortenable(index, message):
                self._shorten(messages, index)
                changed = True
        return changed

    def _shortenable(self, index: int, message: dict[str, Any]) -> bool:
        return (
            message["role"] == "tool"
            and index not in self.shortened
            and len(message["content"]) > _SHORTENED_CHARS + len(_SHORTENED_NOTE)
        )

    def _shorten(self, messages: list[dict[str, Any]], index: int) -> None:
        message = messages[index]
        messages[index] = {
            **message,
            "content": message["content"][:_SHORTENED_CHARS] + _SHORTENED_NOTE,
        }
        self.shortened.add(index)
