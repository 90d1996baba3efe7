"""The final call asked for as JSON held to its schema: what the loop sends a model that
answered twice in a row without a usable call (agent.py).

A small model on a CPU server (Qwen2.5-Coder-1.5B under llama.cpp, bench/README.md) reviews
in Markdown, and when shown the final call as one JSON object it writes the object, often
broken (a string never closed, a second fence inside the first). One request that offers no
tools and sends the final tool's arguments as `response_format` (`json_schema`) lets the
server hold the reply to the schema: llama.cpp and vLLM turn the schema into a grammar,
Ollama uses it as its `format`, OpenAI's structured outputs follow it. The reply is then the
final tool's arguments alone, which the loop reads as the call (llm/text_calls.py) and
checks like any call: a structured reply is never accepted unchecked.

Under a grammar a small model can write without end (issue 24: 1,300 tokens in one reply),
so every string and list of the schema is bounded here; the bounds are generous for a real
review and hold a reply to a few thousand tokens.
"""

from __future__ import annotations

import copy
from typing import Any

# Characters of a string with no bound of its own (a finding's body, the summary).
_MAX_STRING = 1_500
# Items of a list with no bound of its own (a review's findings).
_MAX_ITEMS = 12


def structured_answer_format(tool: dict[str, Any]) -> dict[str, Any]:
    """The `response_format` that holds a reply to the arguments of `tool` (an OpenAI tool
    declaration), every string and list bounded."""
    function = tool["function"]
    schema = _bounded(copy.deepcopy(function.get("parameters") or {"type": "object"}))
    return {"type": "json_schema", "json_schema": {"name": function["name"], "schema": schema}}


def structured_answer_note(tool: dict[str, Any]) -> str:
    """What the model is told on the structured request."""
    name = tool["function"]["name"]
    return (
        f"No tools this time: reply with only the arguments of {name} as one JSON object "
        "(its fields, filled in from what you found), nothing before or after it."
    )


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if kind == "string" and "enum" not in schema:
        schema.setdefault("maxLength", _MAX_STRING)
    if kind == "array":
        schema.setdefault("maxItems", _MAX_ITEMS)
        if isinstance(schema.get("items"), dict):
            _bounded(schema["items"])
    if kind == "object" or "properties" in schema:
        schema["type"] = "object"
        # Keys the tool does not declare are ignored by its check: a grammar need not allow
        # them, and without them the model cannot wander.
        schema.setdefault("additionalProperties", False)
        for value in (schema.get("properties") or {}).values():
            if isinstance(value, dict):
                _bounded(value)
    return schema
