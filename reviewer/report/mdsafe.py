"""Untrusted Markdown, rebuilt so that it cannot act: the one way model-written text enters a
GitHub page (comments, the review body, the job summary, the Markdown report).

The text is parsed by a real CommonMark parser with GitHub's tables (markdown-it-py), and a
new document is written from the tokens: code spans and code blocks are emitted with
backtick runs longer than any inside them, every piece of prose is escaped so that it reads
back as the same prose, and what GitHub would act on is made inert:
- raw HTML (inline or block: `<img>`, `<details>`, `<!--`) becomes visible text;
- a mention (`@user`, `@org/team`) gets a zero-width joiner after the `@`;
- character references are decoded by the parser and their result escaped, so `&#64;` cannot
  rebuild a mention or a tag;
- images become plain links (no image is loaded from a URL the model chose).
Because the output is built from the parse, what renders as code is exactly what the parser
saw as code: a span that crosses lines, a backtick in a table cell, or a fence in a list
item cannot make prose look like code or code like prose.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

# Between "@" and a name: GitHub no longer sees a mention, readers see no difference.
MENTION_BREAK = "\u200d"

# GitHub links a mention after any non-alphanumeric character, even inside emphasis, so only
# a letter or digit before the `@` (an e-mail address) spares it.
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
# Characters that could start inline structure when the text is parsed again.
_INLINE_SPECIAL = re.compile(r"([\\`*\[\]~|])")
# An underscore between two letters or digits never delimits emphasis: left as written, so
# `snake_case` stays readable in the raw text too.
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# Starts of a line that could open a block: a heading, a quote, a list item, a setext
# underline, a table row.
_LINE_START = re.compile(r"^(?:([#>+=-])|(\d{1,9})([.)]))")
_BACKTICKS = re.compile(r"`+")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def safe_markdown(text: str, *, min_heading: int = 1) -> str:
    """`text` (Markdown) rebuilt so that nothing in it acts; headings at least `min_heading`."""
    tokens = _parser().parse(text)
    blocks, _ = _blocks(tokens, 0, None, min(max(min_heading, 1), 6))
    return "\n\n".join(blocks)


def safe_inline(text: str) -> str:
    """One line of Markdown (a title, a list item's text) rebuilt the same way."""
    tokens = _parser().parseInline(text)
    children = tokens[0].children if tokens and tokens[0].children else []
    return _escape_line_starts(_inline(children, in_table=False).replace("\n", " "))


def escape_text(text: str) -> str:
    """Plain text for a Markdown page: it reads back as exactly this text."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _INLINE_SPECIAL.sub(r"\\\1", text)
    if "_" in text:
        text = _UNDERSCORE.sub(r"\\_", text)
    return _MENTION.sub("@" + MENTION_BREAK, text) if "@" in text else text


def code_span(content: str) -> str:
    """An inline code span that shows `content`, whatever backticks it holds."""
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if content.startswith(("`", " ")) or content.endswith(("`", " ")) else ""
    if not content.strip():
        pad = ""
    return f"{ticks}{pad}{content}{pad}{ticks}"


def code_fence(content: str, info: str = "") -> str:
    """A fenced block that nothing inside can close; the content is kept exactly."""
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    marks = "`" * max(3, longest + 1)
    info = " ".join(info.split()).replace("`", "")
    body = content[:-1] if content.endswith("\n") else content
    return f"{marks}{info}\n{body}\n{marks}"


# --- blocks ----------------------------------------------------------------------------------


def _blocks(
    tokens: list[Token], index: int, stop: str | None, min_heading: int
) -> tuple[list[str], int]:
    """Rendered blocks from `index` up to the closing token `stop`; and where it ended."""
    blocks: list[str] = []
    while index < len(tokens):
        token = tokens[index]
        if stop is not None and token.type == stop:
            return blocks, index + 1
        kind = token.type
        if kind == "paragraph_open":
            inline = tokens[index + 1]
            blocks.append(_paragraph(inline.children or []))
            index += 3
        elif kind == "heading_open":
            level = max(int(token.tag[1]), min_heading)
            text = _inline(tokens[index + 1].children or [], in_table=False)
            blocks.append(f"{'#' * level} {' '.join(text.split())}".rstrip())
            index += 3
        elif kind in ("fence", "code_block"):
            blocks.append(code_fence(token.content, token.info if kind == "fence" else ""))
            index += 1
        elif kind == "html_block":
            blocks.append(_paragraph_text(escape_text(token.content.rstrip("\n"))))
            index += 1
        elif kind == "hr":
            blocks.append("---")
            index += 1
        elif kind == "blockquote_open":
            inner, index = _blocks(tokens, index + 1, "blockquote_close", min_heading)
            blocks.append(_prefixed("\n\n".join(inner), "> ", "> "))
        elif kind in ("bullet_list_open", "ordered_list_open"):
            rendered, index = _list(tokens, index, min_heading)
            blocks.append(rendered)
        elif kind == "table_open":
            rendered, index = _table(tokens, index)
            blocks.append(rendered)
        else:  # an unknown or closing token of no consequence
            index += 1
    return blocks, index


def _list(tokens: list[Token], index: int, min_heading: int) -> tuple[str, int]:
    opener = tokens[index]
    ordered = opener.type == "ordered_list_open"
    close = "ordered_list_close" if ordered else "bullet_list_close"
    number = int(opener.attrs.get("start", 1) or 1) if ordered else 0
    start = index
    items: list[str] = []
    index += 1
    while tokens[index].type != close:
        if tokens[index].type != "list_item_open":
            index += 1
            continue
        inner, index = _blocks(tokens, index + 1, "list_item_close", min_heading)
        marker = f"{number}. " if ordered else "- "
        number += 1
        items.append(_prefixed("\n\n".join(inner), marker, " " * len(marker)))
    # The parser hides the paragraphs of a tight list's items.
    paragraphs = [t for t in tokens[start:index] if t.type == "paragraph_open"]
    tight = not paragraphs or paragraphs[0].hidden
    return ("\n" if tight else "\n\n").join(items), index + 1


def _table(tokens: list[Token], index: int) -> tuple[str, int]:
    rows: list[list[str]] = []
    aligns: list[str] = []
    row: list[str] = []
    index += 1
    while tokens[index].type != "table_close":
        token = tokens[index]
        if token.type in ("th_open", "td_open"):
            if token.type == "th_open":
                style = str(token.attrs.get("style", ""))
                aligns.append(style.removeprefix("text-align:"))
            row.append(_inline(tokens[index + 1].children or [], in_table=True).strip())
            index += 3
            continue
        if token.type == "tr_close":
            rows.append(row)
            row = []
        index += 1
    if not rows:
        return "", index + 1
    width = len(rows[0])
    separator = [
        {"left": ":---", "right": "---:", "center": ":---:"}.get(align, "---")
        for align in aligns[:width]
    ]
    lines = [_row(rows[0]), _row(separator)]
    lines += [_row((r + [""] * width)[:width]) for r in rows[1:]]
    return "\n".join(lines), index + 1


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cell or " " for cell in cells) + " |"


def _prefixed(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    out = [first + lines[0]]
    out += [(rest + line) if line else rest.rstrip() for line in lines[1:]]
    return "\n".join(out)


def _paragraph(children: list[Token]) -> str:
    return _paragraph_text(_inline(children, in_table=False))


def _paragraph_text(text: str) -> str:
    # Continuation lines lose their indentation (four spaces would make a code block).
    return "\n".join(_escape_line_starts(line.lstrip(" \t")) for line in text.split("\n"))


def _escape_line_starts(line: str) -> str:
    match = _LINE_START.match(line)
    if not match:
        return line
    if match.group(1):
        return "\\" + line
    return f"{match.group(2)}\\{line[len(match.group(2)) :]}"


# --- inline ----------------------------------------------------------------------------------


def _inline(children: list[Token], *, in_table: bool) -> str:
    out: list[str] = []
    links: list[str] = []
    for token in children:
        kind = token.type
        if kind == "text":
            out.append(escape_text(token.content))
        elif kind == "code_inline":
            content = token.content.replace("|", "\\|") if in_table else token.content
            out.append(code_span(content))
        elif kind == "softbreak":
            out.append(" " if in_table else "\n")
        elif kind == "hardbreak":
            out.append(" " if in_table else "\\\n")
        elif kind in ("html_inline", "html_block"):
            out.append(escape_text(token.content))
        elif kind in ("em_open", "em_close"):
            out.append("*")
        elif kind in ("strong_open", "strong_close"):
            out.append("**")
        elif kind in ("s_open", "s_close"):
            out.append("~~")
        elif kind == "link_open":
            links.append(_url(str(token.attrs.get("href", ""))))
            out.append("[")
        elif kind == "link_close":
            out.append(f"]({links.pop() if links else '<>'})")
        elif kind == "image":
            alt = _inline(token.children or [], in_table=in_table) or "image"
            out.append(f"[{alt}]({_url(str(token.attrs.get('src', '')))})")
        else:
            out.append(escape_text(token.content))
    return "".join(out)


def _url(url: str) -> str:
    """A link destination that cannot end early or break the line."""
    cleaned = "".join(c if c > " " and c not in "<>\\" else f"%{ord(c):02X}" for c in url)
    return f"<{cleaned}>"
