"""JSON a model wrote (a call's arguments, a call written as text, a structured answer), read
with the bounds Python's reader lacks. What cannot be read is an UnreadableJSON whose words
the model gets back, so that it can send the call again; it never ends the run.

- Nesting: Python's reader recurses once per level, so a document nested past the recursion
  limit (2,000 brackets, 4 KB) raises RecursionError, which no caller expects; anything that
  walks the value afterwards (pydantic, json.dumps) recurses again. Calls nest a few levels:
  more than MAX_DEPTH is refused.
- Numbers: `int()` refuses more than 4,300 digits with a plain ValueError (Python's limit on
  integer string conversion, since 3.11); no argument needs more than MAX_NUMBER_CHARS.
- Repeated keys: Python's reader keeps the last value of a key given twice (RFC 8259 section
  4: "the behavior of software that receives such an object is unpredictable"), so
  `{"findings": [f], "findings": []}` would silently be no findings. Refused, naming the key.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
MAX_NUMBER_CHARS = 100
_SHOWN_KEY_CHARS = 80


class UnreadableJSON(ValueError):
    """Why the model's JSON is refused, in words the model can act on."""


def read_json(text: str) -> Any:
    """The one JSON value that is `text` (whitespace around it allowed). Raises
    UnreadableJSON (nested too deep, a number too long, a repeated key) or
    json.JSONDecodeError (not JSON)."""
    value, end = read_json_prefix(text, 0)
    if text[end:].strip():
        # As json.loads says it: the text goes on after the value.
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def read_json_prefix(text: str, start: int) -> tuple[Any, int]:
    """The JSON value that begins at `start` (after whitespace) and where it ends; what
    follows it is the caller's. Raises like read_json."""
    while start < len(text) and text[start] in " \t\r\n":
        start += 1
    try:
        value, end = _DECODER.raw_decode(text, start)
    except RecursionError:
        raise UnreadableJSON(_too_deep()) from None
    check_depth(value)
    return value, end


def check_depth(value: Any) -> None:
    """Raise UnreadableJSON when `value` (objects, arrays; tuples and sets of a literal) nests
    deeper than MAX_DEPTH. Walked without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple | set | frozenset):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise UnreadableJSON(_too_deep())
        stack.extend((child, depth + 1) for child in children)


def repeated_key(key: str) -> str:
    """The refusal of a call that gives `key` twice (an object's key, an XML parameter)."""
    shown = json.dumps(key[:_SHOWN_KEY_CHARS], ensure_ascii=False)[1:-1]
    return f"the key '{shown}' appears twice; send it once"


def _too_deep() -> str:
    return f"the arguments could not be read: nested too deep (more than {MAX_DEPTH} levels)"


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise UnreadableJSON(repeated_key(key))
            seen.add(key)
    return value


def _number(parse: type[int] | type[float]) -> Any:
    def read(text: str) -> int | float:
        if len(text) > MAX_NUMBER_CHARS:
            raise UnreadableJSON(
                f"the arguments could not be read: a number too long ({len(text):,} "
                f"characters; at most {MAX_NUMBER_CHARS})"
            )
        return parse(text)

    return read


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object, parse_int=_number(int), parse_float=_number(float)
)
