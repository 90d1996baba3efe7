"""Walking the neutral data (dataclasses, mappings, lists, tuples) to change every string in
it, the shape kept: what the sinks (sinks.py) and the redactor (redact.py) both need, so
neither imports the other for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from typing import Any

# --- repository names in reports ----------------------------------------------------------
# A name is held as git gives it: bytes that are not UTF-8 are surrogate-escaped, so the name
# still reaches the right file. Reports cannot hold those, and a person must see what is
# odd in a name, so each report kind has one rule, applied by `printable` at its entry:
# - data (JSON, SARIF, annotations' `file`): the name itself when it is valid Unicode (the
#   encoder escapes what it must), else git's quoted form (`"latin-\351.txt"`);
# - what people read (terminal, Markdown, comments): git's quoted form whenever the name
#   holds something invisible or misleading (controls, format characters such as zero-width
#   spaces, white space at either end, a backslash), as the tools show names to the model.
NAME_FIELDS = frozenset({"path", "old_path", "applied_to"})


def map_strings(
    value: Any, text: Callable[[str], str], name: Callable[[str], str] | None = None
) -> Any:
    """`value` (dataclasses, mappings, lists, tuples) with every string passed through
    `text`, the shape kept; repository names (dataclass fields in NAME_FIELDS) through
    `name` instead, when given. Enum members are names, not text: left alone."""
    if isinstance(value, Enum):  # a StrEnum is a str, but a name, not text
        return value
    if isinstance(value, str):
        return text(value)
    if is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for field in fields(value):
            item = getattr(value, field.name)
            if name is not None and field.name in NAME_FIELDS and isinstance(item, str):
                changes[field.name] = name(item)
            elif name is not None and field.name in NAME_FIELDS and isinstance(item, tuple):
                changes[field.name] = tuple(map(name, item))
            else:
                changes[field.name] = map_strings(item, text, name)
        return replace(value, **changes)
    if isinstance(value, Mapping):
        return {key: map_strings(item, text, name) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_strings(item, text, name) for item in value)
    return value
