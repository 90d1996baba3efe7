"""A comment's text as its reader sees it: parsed as CommonMark, the runs of prose outside
block quotes. Code (spans and blocks), HTML and quoted lines are not the person's own words
here: GitHub notifies no one from them, and a quote of an earlier comment says nothing new.
What the bot reads in a comment (a mention, a dismissal phrase) is read from these runs."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt("commonmark")


def prose_runs(body: str) -> list[list[Token]]:
    """The inline tokens of each paragraph, heading or list item of `body` outside block
    quotes, in order (a code block has none)."""
    runs: list[list[Token]] = []
    quoted = 0
    for token in _PARSER.parse(body):
        if token.type == "blockquote_open":
            quoted += 1
        elif token.type == "blockquote_close":
            quoted -= 1
        elif token.type == "inline" and not quoted:
            runs.append(list(token.children or ()))
    return runs


def run_text(run: list[Token]) -> str:
    """A run's text as written: code spans keep their backticks (what is in code stays
    code), inline HTML its markup, emphasis and links their words only, line breaks "\n"."""
    parts = []
    for child in run:
        if child.type == "text":
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "code_inline":
            parts.append(f"{child.markup}{child.content}{child.markup}")
        elif child.type == "html_inline":
            parts.append(child.content)
    return "".join(parts)


def first_words(body: str) -> list[str]:
    """The words of the first prose run of `body` (code keeps its backticks)."""
    runs = prose_runs(body)
    return run_text(runs[0]).split() if runs else []
