"""Atlassian Document Format as plain text: what Jira Cloud's v3 API returns for a
description (developer.atlassian.com/cloud/jira/platform/apis/document/structure/).

A document is `{"type": "doc", "version": 1, "content": [...]}`, a tree of block nodes
(paragraph, heading, bulletList, orderedList, listItem, codeBlock, blockquote, panel, rule,
table, tableRow, tableHeader, tableCell, mediaSingle, ...) and inline ones (text, hardBreak,
mention, emoji, date, status, inlineCard). Traversed in order, the text nodes give the text;
blocks end with a blank line, list items start with their marker, a code block keeps its
lines. Unknown nodes give their children's text (the format grows), and a node without text
gives what its `attrs` say a reader sees (a mention's name, a card's URL), or nothing.

The tree comes from a ticket, written by anyone: it is walked without recursion and at most
MAX_NODES nodes, so no nesting or size can exhaust the stack or the time.
"""

from __future__ import annotations

from typing import Any

MAX_NODES = 200_000


class _Out(str):
    """Text the walk writes (a marker, a line break), told apart from a string node."""

_BLOCKS = {
    "paragraph", "heading", "codeBlock", "blockquote", "panel", "rule", "table",
    "mediaSingle", "mediaGroup", "expand", "nestedExpand", "decisionList", "taskList",
    "bulletList", "orderedList", "blockCard", "embedCard",
}  # fmt: skip
# What an inline node without text shows, from its attrs, in order of preference.
_ATTR_TEXT = {
    "mention": ("text", "id"),
    "emoji": ("text", "shortName"),
    "status": ("text",),
    "date": ("timestamp",),
    "inlineCard": ("url",),
    "blockCard": ("url",),
    "embedCard": ("url",),
    "media": ("alt",),
}


def adf_text(document: Any) -> str:
    """The text of an ADF document (or any node); "" for what is not one."""
    out: list[str] = []
    # A stack of work: a node to visit, or text (_Out) to write when its children are done.
    stack: list[tuple[Any, str, int]] = [(document, "", 0)]
    visited = 0
    while stack and visited < MAX_NODES:
        node, prefix, depth = stack.pop()
        if isinstance(node, _Out):
            out.append(node)
            continue
        if not isinstance(node, dict):
            continue
        visited += 1
        kind = node.get("type")
        attrs = node.get("attrs") if isinstance(node.get("attrs"), dict) else {}
        assert isinstance(attrs, dict)
        if kind == "text":
            out.append(str(node.get("text") or ""))
            continue
        if kind == "hardBreak":
            out.append("\n" + prefix)
            continue
        if kind == "rule":
            out.append("\n---\n\n")
            continue
        if kind in _ATTR_TEXT and not node.get("content"):
            out.append(_from_attrs(kind, attrs))
            if kind in _BLOCKS:
                out.append("\n\n")
            continue
        children = node.get("content") if isinstance(node.get("content"), list) else []
        assert isinstance(children, list)
        before, after, child_prefix = _frame(kind, attrs, prefix, depth)
        work: list[tuple[Any, str, int]] = [(_Out(before), "", 0)]
        if kind in ("bulletList", "orderedList", "taskList", "decisionList"):
            start = attrs.get("order", 1) if isinstance(attrs.get("order"), int) else 1
            for number, item in enumerate(children, start):
                marker = f"{number}. " if kind == "orderedList" else "- "
                work.append((_Out("\n" + "  " * depth + marker), "", 0))
                work.append((item, child_prefix, depth + 1))
        elif kind == "tableRow":
            for index, cell in enumerate(children):
                work.append((_Out(" | " if index else "| "), "", 0))
                work.append((cell, child_prefix, depth + 1))
            work.append((_Out(" |\n"), "", 0))
        else:
            work += [(child, child_prefix, depth) for child in children]
        work.append((_Out(after), "", 0))
        stack.extend(reversed(work))
    text = "".join(out)
    if stack:
        text += "\n[The rest of the description is left out: it has too many parts.]"
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _frame(kind: Any, attrs: dict[str, Any], prefix: str, depth: int) -> tuple[str, str, str]:
    """What a node writes before and after its children, and its children's line prefix."""
    if kind == "heading":
        level = attrs.get("level") if isinstance(attrs.get("level"), int) else 1
        return "#" * max(1, min(int(level), 6)) + " ", "\n\n", prefix
    if kind == "codeBlock":
        return "```\n", "\n```\n\n", prefix
    if kind == "blockquote":
        return "> ", "\n\n", prefix + "> "
    if kind == "paragraph":
        return "", "\n\n" if depth == 0 else "", prefix
    if kind == "table":
        return "", "\n", prefix  # each row ends its own line
    if kind in ("panel", "expand", "nestedExpand", "mediaSingle"):
        title = attrs.get("title") if kind in ("expand", "nestedExpand") else None
        return (f"{title}\n" if isinstance(title, str) else ""), "\n\n", prefix
    if kind in ("bulletList", "orderedList", "taskList", "decisionList"):
        return "", "\n\n" if depth == 0 else "", prefix
    if kind in ("listItem", "taskItem", "decisionItem"):
        return "", "", prefix + "  "
    return "", "", prefix


def _from_attrs(kind: str, attrs: dict[str, Any]) -> str:
    for name in _ATTR_TEXT[kind]:
        value = attrs.get(name)
        if isinstance(value, str | int) and str(value):
            text = str(value)
            return f"@{text}" if kind == "mention" and not text.startswith("@") else text
    return ""
