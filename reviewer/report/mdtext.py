"""Putting untrusted text into GitHub-flavoured Markdown without it taking over the page.

Used by the Markdown report and by everything that posts to GitHub (review comments, the
summary comment, suggestion blocks). The threats, all from text the model wrote after reading
an attacker's pull request:
- pinging people: `@user` and `@org/team` notify; a zero-width joiner after the `@` stops it;
- hiding or restructuring the page: raw HTML (`<!--` hides everything after it, an unclosed
  `<details>` folds the rest of the report) is shown as text;
- leaving a code block open, or making one we cannot see: the model's fenced blocks are
  re-emitted as top-level fences of our own (closed, even when the model left them open),
  and a fence marker anywhere else (`- ````, `> ~~~`) is escaped. A fence inside a list item
  or a quote ends where its container ends, which a line scanner cannot know; with no fence
  but ours on the page, what we treat as code is exactly what renders as code;
- breaking out of a code block: `fence` picks a fence longer than any backtick run inside.
Code (fenced blocks and inline code spans) is left as written: nothing in code notifies or
renders as HTML, and its exact text matters.
"""

from __future__ import annotations

import re

from reviewer.report.common import clean_text, one_line

# Between "@" and a name: GitHub no longer sees a mention, readers see no difference.
MENTION_BREAK = "\u200d"

_BACKTICK_RUN = re.compile(r"`+")
# CommonMark: up to three spaces, then three or more backticks or tildes; a backtick fence's
# info string cannot contain a backtick.
_FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<marks>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)$")
# Three or more backticks or tildes outside a code span: a possible fence in a container.
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
# A code span: a backtick run, content, the same run (not part of a longer one). Matched
# within one line only, and never after a backslash: a span that really crosses lines (or
# starts with an escaped backtick) is then escaped like prose, which only shows `&lt;` in
# it; treating it as code could let a line that starts an HTML block (`<!--` interrupts a
# paragraph) or an escaped backtick slip past.
_CODE_SPAN = re.compile(r"(?<![`\\])(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`)")
_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=\s|$)")
# GitHub links a mention after any non-alphanumeric character, even inside emphasis
# (`_@user_`), so only a letter or digit before the `@` (an e-mail address) spares it.
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
# A character reference (`&#64;` is "@"): shown as written, so it cannot rebuild a mention
# or a tag after the checks above.
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def fence(text: str, info: str = "") -> str:
    """`text` as a fenced code block that nothing inside can close.

    The fence is one backtick longer than the longest backtick run in the text (at least
    three), so a suggestion that contains ``` stays one block. `info` is the language (or
    `suggestion`); the text itself is not changed, so a suggestion applies exactly.
    """
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    info = one_line(info).replace("`", "")
    body = text[:-1] if text.endswith("\n") else text
    return f"{marks}{info}\n{body}\n{marks}"


def inline_code(text: str) -> str:
    """One line of text as an inline code span, whatever backticks it holds."""
    text = one_line(text)
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def neutralize(text: str, *, min_heading: int = 1) -> str:
    """Markdown written by the model, safe to embed in a page: see the module docstring.

    Headings are raised to at least level `min_heading` (at most 6), so the model's
    `# Summary` sits below the headings of the page that embeds it.
    """
    out: list[str] = []
    prose: list[str] = []
    code: list[str] = []
    opener: re.Match[str] | None = None
    level = min(min_heading, 6)
    for line in clean_text(text).split("\n"):
        if opener is not None:
            if _closes(line, opener.group("marks")):
                out.append(fence("\n".join(code), opener.group("info")))
                code, opener = [], None
            else:
                # CommonMark takes the opening fence's indentation off each line.
                indent = len(opener.group("indent"))
                code.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            continue
        if match := _FENCE_OPEN.match(line):
            out.extend(_neutralize_prose(prose))
            prose, opener = [], match
            continue
        if level > 1:
            line = _HEADING.sub(lambda m: m.group(1) + "#" * max(len(m.group(2)), level), line)
        prose.append(line)
    out.extend(_neutralize_prose(prose))
    if opener is not None:
        out.append(fence("\n".join(code), opener.group("info")))
    return "\n".join(out)


def neutralize_line(text: str) -> str:
    """Text for one line of Markdown (a heading, a list item): folded, then neutralized."""
    return neutralize(one_line(text))


def _closes(line: str, marks: str) -> bool:
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and len(stripped) >= len(marks)
        and set(stripped) == {marks[0]}
    )


def _neutralize_prose(lines: list[str]) -> list[str]:
    """Escape HTML, mentions and fence markers outside inline code spans."""
    return [_neutralize_line(line) if "`" in line else _neutralize_plain(line) for line in lines]


def _neutralize_line(line: str) -> str:
    parts: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(line):
        parts.append(_neutralize_plain(line[last : span.start()]))
        parts.append(span.group(0))
        last = span.end()
    parts.append(_neutralize_plain(line[last:]))
    return "".join(parts)


def _neutralize_plain(text: str) -> str:
    # The membership tests skip a regex scan for the common text that needs none.
    if "&" in text:
        text = _ENTITY.sub("&amp;", text)
    text = text.replace("<", "&lt;")
    if "``" in text or "~~~" in text:
        text = _FENCE_RUN.sub(lambda m: "".join("\\" + c for c in m.group(0)), text)
    return _MENTION.sub("@" + MENTION_BREAK, text) if "@" in text else text


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
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
