"""A filled-in example of a call to a loop's final tool, as one JSON object, built from the
tool's own schema (the one declaration): what a model that answered in prose is shown, so
that a small model which cannot emit a native tool call can still answer in the one text
form the loop reads (llm/text_calls.py: a reply that is one JSON object and nothing else).

Measured on Qwen2.5-Coder-1.5B under llama.cpp (bench/README.md): told only "plain text is
not read", it answered in Markdown again; shown this example, it answered with the object.
Values are placeholders in angle brackets, so a copied example is refused by validation
(or by the quote check) and never becomes a finding.
"""

from __future__ import annotations

import json
from typing import Any

# Keys shown beside the required ones: they make a finding checkable (grounding.py).
_ALSO_SHOWN = ("quote", "confidence")


def call_example(tool: dict[str, Any]) -> str:
    """`{"name": ..., "arguments": {...}}` for an OpenAI tool declaration, compact."""
    function = tool["function"]
    arguments = _example(function.get("parameters", {}), "arguments")
    return json.dumps({"name": function["name"], "arguments": arguments}, ensure_ascii=False)


def _example(schema: dict[str, Any], name: str) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return f"<one of: {', '.join(str(v) for v in schema['enum'])}>"
    if kind == "object" or "properties" in schema:
        properties: dict[str, Any] = schema.get("properties", {})
        shown = [*schema.get("required", ()), *(k for k in _ALSO_SHOWN if k in properties)]
        return {key: _example(properties[key], key) for key in shown if key in properties}
    if kind == "array":
        items = schema.get("items", {})
        return [_example(items, name)] if items.get("properties") else []
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        low, high = schema.get("minimum", 0), schema.get("maximum", 1)
        return (low + high) / 2
    if kind == "boolean":
        return False
    return f"<{name}>"
