"""The project's documentation as tests read it: README.md, CONTRIBUTING.md and docs/*.md.

A command block is a fenced ```sh block; each carries a name on the line above it,
`<!-- block: NAME -->` (invisible on GitHub), unique across the pages, by which a test asks
for it with `doc_block(NAME)`. tests/test_docs.py checks that every command block has a name
and that some test asks for each: a block no test runs cannot go stale unseen."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
COMMAND_LANGUAGES = ("sh", "bash", "shell", "console")
_FENCE = re.compile(
    r"^(?:<!-- block: (?P<name>[\w-]+) -->\n)?```(?P<lang>[\w-]*)\n(?P<text>.*?)^```[ \t]*$",
    re.M | re.S,
)


@dataclass(frozen=True)
class Block:
    page: Path
    lang: str
    name: str | None
    text: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(PROJECT)}:{self.line}"


def pages() -> list[Path]:
    docs = sorted((PROJECT / "docs").glob("*.md"))
    return [PROJECT / "README.md", PROJECT / "CONTRIBUTING.md", *docs]


def blocks() -> list[Block]:
    """Every fenced block at the top level of a line (indented ones in lists included)."""
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        # Fences inside list items are indented; their name comment is indented alike.
        flat = re.sub(r"^[ \t]+(?=```|<!-- block:)", "", text, flags=re.M)
        for match in _FENCE.finditer(flat):
            line = flat.count("\n", 0, match.start()) + 1
            found.append(Block(page, match["lang"], match["name"], match["text"], line))
    return found


def command_blocks() -> list[Block]:
    return [block for block in blocks() if block.lang in COMMAND_LANGUAGES]


def doc_block(name: str) -> str:
    """The text of the block named `name`, as written."""
    named = [block for block in blocks() if block.name == name]
    assert len(named) == 1, f"{len(named)} blocks are named {name!r}"
    return named[0].text


def section(title: str) -> str:
    """The text under the heading `title` (in whichever page has it) up to the next heading."""
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", text, re.S | re.M)
        if match:
            found.append(match.group(1))
    assert len(found) == 1, f"{len(found)} pages have a section '{title}'"
    return found[0]
