"""Offline token estimates: no tokenizer download, no network.

Code tokenizes denser than prose; about 3.2 characters per token errs on the safe side for
both with the BPE vocabularies of current models, so an estimate here is usually a little
high. Real usage, as the server reports it, is what the reports carry.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 3.2
# Role markers and separators each message costs in the chat template.
MESSAGE_OVERHEAD_TOKENS = 6


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def estimate_message_tokens(message: dict[str, Any]) -> int:
    size = len(message.get("content") or "")
    for call in message.get("tool_calls") or ():
        size += len(call["function"]["name"]) + len(call["function"]["arguments"])
    return int(size / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS


def estimate_request_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    return sum(estimate_message_tokens(m) for m in messages) + estimate_tokens(json.dumps(tools))
