"""Reading a rule file's text: its front matter (the small YAML subset Cursor and Copilot
rule files use) and, for AGENTS.md, its review section.

No YAML library: these files are written for tools that read them loosely, and a strict
parser refuses what they accept (`globs: *.py` is an alias error in YAML). The subset:
`key: value` lines at the top level, a value plain, quoted, a flow list `[a, b]`, or a block
list of `- item` lines; `globs` and `applyTo` may also be one string of comma-separated
globs. Unknown keys are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)$")
_ITEM = re.compile(r"^[ \t]*-[ \t]+(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A heading that starts a review section: "Code review", "Review", "Reviewing changes".
_REVIEW = re.compile(r"\breview(?:s|ing)?\b", re.IGNORECASE)


@dataclass(frozen=True)
class FrontMatter:
    globs: tuple[str, ...] = ()
    always_apply: bool = False
    apply_to: tuple[str, ...] = ()
    description: str = ""


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """The front matter (`---` lines around it, at the very start) and the text after it.
    Text without a closed front matter block is all body."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return FrontMatter(), text
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() in ("---", "...")), 0)
    if not end:
        return FrontMatter(), text
    values = _parse(lines[1:end])
    meta = FrontMatter(
        globs=_globs(values.get("globs")),
        always_apply=_scalar(values.get("alwaysApply")).lower() in ("true", "yes", "on"),
        apply_to=_globs(values.get("applyTo")),
        description=_scalar(values.get("description")),
    )
    return meta, "\n".join(lines[end + 1 :])


def _parse(lines: list[str]) -> dict[str, str | list[str]]:
    values: dict[str, str | list[str]] = {}
    key = ""
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if (item := _ITEM.match(line)) and key:
            previous = values.get(key)
            values[key] = [*(previous if isinstance(previous, list) else []), _unquote(item[1])]
            continue
        if match := _KEY.match(line):
            key, raw = match[1], match[2].strip()
            if raw.startswith("[") and raw.endswith("]"):
                values[key] = [_unquote(part) for part in _split(raw[1:-1])]
            else:
                values[key] = _unquote(raw) if raw else []
    return values


def _unquote(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw.split(" #", 1)[0].strip()  # a YAML comment after a plain value


def _split(text: str) -> list[str]:
    """Comma-separated items; a comma inside braces (`{a,b}`) or quotes does not split."""
    items, current, depth, quote = [], "", 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            items.append(current)
            current = ""
            continue
        current += char
    items.append(current)
    return [item.strip() for item in items if item.strip()]


def _scalar(value: str | list[str] | None) -> str:
    if isinstance(value, list):
        return value[0] if value else ""
    return value or ""


def _globs(value: str | list[str] | None) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value or ""]
    return tuple(glob for item in items for glob in map(_unquote, _split(item)) if glob)


def whole(text: str) -> str:
    return text


def review_section(text: str) -> str:
    """The sections whose heading is about review ("## Code review", "# Review"), each to the
    next heading of its level or above; the whole text when there is none. Headings inside
    code blocks are code."""
    sections: list[list[str]] = []
    level = 0  # of the review section being collected; 0 when none is
    fence = ""
    for line in text.split("\n"):
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
        elif match := _FENCE.match(line):
            fence = match[1]
        elif heading := _HEADING.match(line):
            depth = len(heading[1])
            if level and depth <= level:
                level = 0
            if not level and _REVIEW.search(heading[2] or ""):
                level = depth
                sections.append([])
        if level:
            sections[-1].append(line)
    if not sections:
        return text
    return "\n\n".join("\n".join(section).strip() for section in sections)
