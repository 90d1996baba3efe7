"""Untrusted Markdown, rebuilt so that it cannot act: the one way model-written text enters a
GitHub page (comments, the review body, the job summary, the Markdown report).

The text is parsed by a real CommonMark parser with GitHub's tables (markdown-it-py), and a
new document is written from the tokens: code spans and code blocks are emitted with
backtick runs longer than any inside them, every piece of prose is escaped so that it reads
back as the same prose, and what GitHub would act on is made inert:
- raw HTML (inline or block: `<img>`, `<details>`, `<!--`) becomes visible text;
- a mention (`@user`, `@org/team`) gets a zero-width joiner after the `@`;
- on GitLab (`dialect="gitlab"`), every reference GitLab Flavored Markdown links or acts on
  gets one too (`GITLAB_REFERENCES`: `#123`, `!45`, `~label`, `%milestone`, `$snippet`,
  `&epic`, `[[_TOC_]]`), and a line starting with `/` (a quick action) gets a backslash;
- character references are decoded by the parser and their result escaped, so `&#64;` cannot
  rebuild a mention or a tag;
- images become plain links (no image is loaded from a URL the model chose).
Because the output is built from the parse, what renders as code is exactly what the parser
saw as code: a span that crosses lines, a backtick in a table cell, or a fence in a list
item cannot make prose look like code or code like prose.

Secrets are redacted in what the reader will see, after the parser decoded it: a secret the
model wrote as character references (`&#115;k-...`), with backslash escapes, split by
emphasis or code spans, or percent-encoded in a link is caught in the decoded text of each
run of inline text, each code block and each link destination. A run of text whose decoded
form holds a secret is written as plain text with the secret replaced.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from reviewer.safety.invisible import INVISIBLE_CHAR
from reviewer.safety.sinks import clean_text

# Between "@" and a name: GitHub no longer sees a mention, readers see no difference.
MENTION_BREAK = "\u200d"

# GitHub links a mention after any non-alphanumeric character, even inside emphasis, so only
# a letter or digit before the `@` (an e-mail address) spares it.
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
# GitLab Flavored Markdown's references, as data: each pattern matches the point where a
# zero-width joiner goes, between the sigil and what it names, so GitLab's reference filters
# (which run on the rendered text, after escapes are undone) see no reference; readers see
# no difference. docs.gitlab.com/user/markdown/#gitlab-specific-references
GITLAB_REFERENCES: dict[str, re.Pattern[str]] = {
    # Not in an e-mail address (GitLab does not link `a@b.com` either).
    "user or group (notifies)": re.compile(r"(?<=(?<![A-Za-z0-9])@)(?=[A-Za-z0-9_])"),
    "issue": re.compile(r"(?<=#)(?=\d)"),
    "merge request": re.compile(r"(?<=!)(?=\d)"),
    "label": re.compile(r"(?<=~)(?=[A-Za-z0-9_\"])"),
    "milestone": re.compile(r"(?<=%)(?=[A-Za-z0-9_\"])"),
    "snippet": re.compile(r"(?<=\$)(?=\d)"),
    "epic": re.compile(r"(?<=&)(?=\d)"),
    # `[[_TOC_]]` and `[TOC]`; the parser splits the former around its emphasis, so every
    # `[[` is broken (GitLab links nothing else with it).
    "table of contents": re.compile(r"(?i)(?<=\[)(?=\[|TOC\])"),
}
# A note's line starting with `/` runs a quick action as the note's author
# (docs.gitlab.com/user/project/quick_actions/); a backslash before it keeps it text.
_GITLAB_LINE_START = "/"
# Which forge's Markdown is being written; set by safe_markdown/safe_inline for one call
# (the escaping functions are many levels down and shared by both forges).
_DIALECT: ContextVar[str] = ContextVar("markdown_dialect", default="github")
DIALECTS = ("github", "gitlab")
# A joiner this module wrote: after `@` (GitHub) or a GitLab sigil (GITLAB_REFERENCES).
_OWN_BREAK = re.compile(rf"(?<=[@#!~%$&\[]){MENTION_BREAK}")
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


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class _Options:
    min_heading: int
    # Applied to decoded text (what the reader sees), before it is escaped again.
    redact: Callable[[str], str]


@contextmanager
def _dialect(name: str) -> Iterator[None]:
    if name not in DIALECTS:
        raise ValueError(f"unknown Markdown dialect {name!r}")
    token = _DIALECT.set(name)
    try:
        yield
    finally:
        _DIALECT.reset(token)


def safe_markdown(
    text: str,
    *,
    min_heading: int = 1,
    redact: Callable[[str], str] = _same,
    dialect: str = "github",
) -> str:
    """`text` (Markdown) rebuilt so that nothing in it acts on the `dialect`'s forge;
    headings at least `min_heading`; `redact` applied to every decoded piece of it."""
    with _dialect(dialect):
        tokens = _parser().parse(text)
        blocks, _ = _blocks(tokens, 0, None, _Options(min(max(min_heading, 1), 6), redact))
    return "\n\n".join(blocks)


def safe_inline(text: str, *, redact: Callable[[str], str] = _same, dialect: str = "github") -> str:
    """One line of Markdown (a title, a list item's text) rebuilt the same way."""
    with _dialect(dialect):
        tokens = _parser().parseInline(text)
        children = tokens[0].children if tokens and tokens[0].children else []
        line = _inline(children, in_table=False, redact=redact).replace("\n", " ")
        return _escape_line_starts(line)


def escape_text(text: str) -> str:
    """Plain text for a Markdown page: it reads back as exactly this text, but for what a
    reader could not see or that would act: the parser decodes character references
    (`&#x200B;`, `&#13;`), so controls and invisible characters are shown as the terminal
    shows them (sinks.clean_text), and a carriage return is a line break, escaped like any.
    The joiners this module puts after `@` and GitLab's sigils are its own: taken out before,
    put back after, so text rebuilt twice reads the same."""
    text = clean_text(_OWN_BREAK.sub("", text))
    if _DIALECT.get() == "gitlab":
        for pattern in GITLAB_REFERENCES.values():
            text = pattern.sub(MENTION_BREAK, text)
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
    tokens: list[Token], index: int, stop: str | None, options: _Options
) -> tuple[list[str], int]:
    """Rendered blocks from `index` up to the closing token `stop`; and where it ended."""
    blocks: list[str] = []
    while index < len(tokens):
        token = tokens[index]
        if stop is not None and token.type == stop:
            return blocks, index + 1
        kind = token.type
        redact = options.redact
        if kind == "paragraph_open":
            inline = tokens[index + 1]
            text = _inline(inline.children or [], in_table=False, redact=redact)
            blocks.append(_paragraph_text(text))
            index += 3
        elif kind == "heading_open":
            level = max(int(token.tag[1]), options.min_heading)
            text = _inline(tokens[index + 1].children or [], in_table=False, redact=redact)
            blocks.append(f"{'#' * level} {' '.join(text.split())}".rstrip())
            index += 3
        elif kind in ("fence", "code_block"):
            info = redact(token.info) if kind == "fence" else ""
            blocks.append(code_fence(redact(token.content), info))
            index += 1
        elif kind == "html_block":
            text = escape_text(redact(token.content.rstrip("\n")))
            blocks.append(_paragraph_text(text))
            index += 1
        elif kind == "hr":
            blocks.append("---")
            index += 1
        elif kind == "blockquote_open":
            inner, index = _blocks(tokens, index + 1, "blockquote_close", options)
            blocks.append(_prefixed("\n\n".join(inner), "> ", "> "))
        elif kind in ("bullet_list_open", "ordered_list_open"):
            rendered, index = _list(tokens, index, options)
            blocks.append(rendered)
        elif kind == "table_open":
            rendered, index = _table(tokens, index, redact)
            blocks.append(rendered)
        else:  # an unknown or closing token of no consequence
            index += 1
    return blocks, index


def _list(tokens: list[Token], index: int, options: _Options) -> tuple[str, int]:
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
        inner, index = _blocks(tokens, index + 1, "list_item_close", options)
        marker = f"{number}. " if ordered else "- "
        number += 1
        items.append(_prefixed("\n\n".join(inner), marker, " " * len(marker)))
    # The parser hides the paragraphs of a tight list's items.
    paragraphs = [t for t in tokens[start:index] if t.type == "paragraph_open"]
    tight = not paragraphs or paragraphs[0].hidden
    return ("\n" if tight else "\n\n").join(items), index + 1


def _table(tokens: list[Token], index: int, redact: Callable[[str], str]) -> tuple[str, int]:
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
            cell = _inline(tokens[index + 1].children or [], in_table=True, redact=redact)
            row.append(cell.strip())
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


def _paragraph_text(text: str) -> str:
    # Continuation lines lose their indentation (four spaces would make a code block).
    return "\n".join(_escape_line_starts(line.lstrip(" \t")) for line in text.split("\n"))


def _escape_line_starts(line: str) -> str:
    if line.startswith(_GITLAB_LINE_START) and _DIALECT.get() == "gitlab":
        return "\\" + line
    match = _LINE_START.match(line)
    if not match:
        return line
    if match.group(1):
        return "\\" + line
    return f"{match.group(2)}\\{line[len(match.group(2)) :]}"


# --- inline ----------------------------------------------------------------------------------


def _inline(children: list[Token], *, in_table: bool, redact: Callable[[str], str]) -> str:
    """A run of inline tokens rebuilt; as plain text when what a reader would see of it (the
    decoded text, across emphasis and code spans) holds a secret."""
    seen = _seen(children)
    hidden = redact(seen)
    if hidden != seen:
        return escape_text(hidden).replace("\n", " " if in_table else "\n")
    return _rebuilt(children, in_table=in_table, redact=redact)


def _seen(children: list[Token]) -> str:
    """The text a reader sees of inline tokens, decoded, markup left out."""
    parts = []
    for token in children:
        if token.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif token.type == "image":
            parts.append(_seen(token.children or []))
        elif token.type in ("text", "code_inline", "html_inline", "html_block"):
            parts.append(token.content)
    return "".join(parts)


def _rebuilt(children: list[Token], *, in_table: bool, redact: Callable[[str], str]) -> str:
    out: list[str] = []
    links: list[str] = []
    for token in children:
        kind = token.type
        if kind == "text":
            text = escape_text(token.content)  # a decoded `&#13;` is a line break now
            out.append(text.replace("\n", " ") if in_table else text)
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
            links.append(_url(str(token.attrs.get("href", "")), redact))
            out.append("[")
        elif kind == "link_close":
            out.append(f"]({links.pop() if links else '<>'})")
        elif kind == "image":
            alt = _rebuilt(token.children or [], in_table=in_table, redact=redact) or "image"
            out.append(f"[{alt}]({_url(str(token.attrs.get('src', '')), redact)})")
        else:
            out.append(escape_text(token.content))
    return "".join(out)


def _url(url: str, redact: Callable[[str], str]) -> str:
    """A link destination that cannot end early or break the line, and holds no secret even
    once its percent-encoding is decoded."""
    decoded = unquote(url)
    hidden = redact(decoded)
    if hidden != decoded or redact(url) != url:
        url = redact(hidden)
    cleaned = "".join(
        f"%{ord(c):02X}" if c <= " " or c in "<>\\" else quote(c) if INVISIBLE_CHAR.match(c) else c
        for c in url
    )
    return f"<{cleaned}>"
