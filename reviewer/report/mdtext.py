"""Putting untrusted text into GitHub-flavoured Markdown without it taking over the page.

Used by the Markdown report and by everything that posts to GitHub (review comments, the
summary comment, suggestion blocks). The text is the model's, written after reading an
attacker's pull request. Control and bidirectional-override characters are made visible
first (common.clean_text); then mdsafe.py parses the Markdown with a real CommonMark parser
and rebuilds it with nothing in it that acts (mentions, HTML, images, fences we do not own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from reviewer.report.common import clean_text, one_line
from reviewer.report.mdsafe import MENTION_BREAK, code_fence, code_span, safe_inline, safe_markdown
from reviewer.safety.redact import environment_redactor

__all__ = [
    "MENTION_BREAK",
    "cap_bytes",
    "cap_text",
    "fence",
    "inline_code",
    "markdown_dialect",
    "neutralize",
    "neutralize_line",
]

# The forge whose Markdown this run writes, when a call names none: a run posting to GitLab
# sets it once (`markdown_dialect`), so every body rendered in it, however deep the call,
# makes GitLab's references and quick actions inert too.
_FORGE_DIALECT: ContextVar[str] = ContextVar("forge_markdown_dialect", default="github")


@contextmanager
def markdown_dialect(name: str) -> Iterator[None]:
    """Within the block, `neutralize` and `neutralize_line` write `name`'s Markdown."""
    token = _FORGE_DIALECT.set(name)
    try:
        yield
    finally:
        _FORGE_DIALECT.reset(token)


def fence(text: str, info: str = "") -> str:
    """`text` as a fenced code block that nothing inside can close.

    The fence is one backtick longer than the longest backtick run in the text (at least
    three), so a suggestion that contains ``` stays one block. `info` is the language (or
    `suggestion`); the text itself is not changed, so a suggestion applies exactly.
    """
    return code_fence(text, one_line(info))


def inline_code(text: str) -> str:
    """One line of text as an inline code span, whatever backticks it holds."""
    text = one_line(text)
    return code_span(text) if text else ""


def neutralize(
    text: str,
    *,
    min_heading: int = 1,
    redact: Callable[[str], str] | None = None,
    dialect: str | None = None,
) -> str:
    """Markdown written by the model, safe to embed in a page, and redacted in its final
    form (`redact`, by default the process environment's Redactor).

    Headings are raised to at least level `min_heading` (at most 6), so the model's
    `# Summary` sits below the headings of the page that embeds it. Redaction applies to the
    text as written, to every piece of it as the parser decoded it (mdsafe.py), and to the
    rebuilt text; should the last find a secret the pieces did not hold, what is left is
    rebuilt again, so a cut cannot leave a fence open for the rest of the page.
    `dialect` "gitlab" also makes GitLab's references and quick actions inert (mdsafe.py);
    by default, the one `markdown_dialect` set ("github" outside one).
    """
    redact = redact or environment_redactor()
    dialect = dialect or _FORGE_DIALECT.get()
    rebuilt = safe_markdown(
        clean_text(redact(text)), min_heading=min_heading, redact=redact, dialect=dialect
    )
    final = redact(rebuilt)
    if final == rebuilt:
        return rebuilt
    return safe_markdown(final, min_heading=min_heading, redact=redact, dialect=dialect)


def neutralize_line(
    text: str, *, redact: Callable[[str], str] | None = None, dialect: str | None = None
) -> str:
    """Text for one line of Markdown (a heading, a list item): folded, then neutralized and
    redacted as `neutralize` does."""
    redact = redact or environment_redactor()
    dialect = dialect or _FORGE_DIALECT.get()
    rebuilt = safe_inline(one_line(redact(text)), redact=redact, dialect=dialect)
    final = redact(rebuilt)
    return rebuilt if final == rebuilt else safe_inline(final, redact=redact, dialect=dialect)


def cap_text(text: str, limit: int) -> tuple[str, bool]:
    """At most `limit` characters, cut at a line end when one is near; and whether it was cut."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", 0, limit)
    if cut < limit // 2:
        cut = limit
    return text[:cut], True


def cap_bytes(text: str, limit: int) -> str:
    """At most `limit` bytes of UTF-8, never splitting a character."""
    return text.encode("utf-8")[: max(limit, 0)].decode("utf-8", errors="ignore")
