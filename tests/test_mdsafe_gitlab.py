"""GitLab Flavored Markdown: the model's words trigger no reference and no quick action.

GitLab links (and notifies) references in the rendered text of a note
(https://docs.gitlab.com/user/markdown/#gitlab-specific-references) and runs a line that
starts with `/` as a quick action of the note's author
(https://docs.gitlab.com/user/project/quick_actions/). The referee here renders what we post
with a CommonMark parser and looks for GitLab's patterns in the text a reader sees, outside
code, as GitLab's reference filters do; quick actions are looked for in the raw note, outside
fenced code, as GitLab's extractor does.
"""

from __future__ import annotations

import html as html_lib
import re

import pytest
from markdown_it import MarkdownIt

from reviewer.report.mdtext import neutralize, neutralize_line

# GitLab's reference patterns (gitlabhq: User/Issue/MergeRequest/Label/Milestone/Snippet/Epic
# reference_pattern), written here independently of reviewer's table.
REFERENCES = {
    "user": re.compile(r"(?<![\w.+-])@[A-Za-z0-9_][\w.-]*"),
    "issue": re.compile(r"#\d+"),
    "merge request": re.compile(r"!\d+"),
    "label": re.compile(r"~(?:[\w?&.-]+|\"[^\"]+\")"),
    "milestone": re.compile(r"%(?:[\w.-]+|\"[^\"]+\")"),
    "snippet": re.compile(r"\$\d+"),
    "epic": re.compile(r"&\d+"),
}
TOC = re.compile(r"<p>\s*(\[\[<em>TOC</em>\]\]|\[TOC\])\s*</p>", re.IGNORECASE)
QUICK_ACTION = re.compile(r"^/[a-z_]+", re.MULTILINE)

MODEL_TEXT = (
    "Ask @alice or @acme/devs. Fixes #12, like !45 in group/proj!46.\n"
    '~bug ~"needs review" and %v1.0 and %"Sprint 3", snippet $7, epic &3.\n\n'
    "[[_TOC_]]\n\n"
    "[TOC]\n\n"
    "/close\n"
    "/label ~security\n\n"
    "- /merge\n"
    "> /approve\n\n"
    "Plain: a@b.com, 100% sure, 5 ~ 6, `#12 in code` stays.\n\n"
    "```suggestion:-0+1\n/keep #12 @alice\n```\n"
)


def seen_text(markdown: str) -> str:
    """The text GitLab's filters see: the rendered HTML without code and tags."""
    html = MarkdownIt("commonmark").render(markdown)
    html = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", " ", html, flags=re.DOTALL)
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", html))


def outside_fences(markdown: str) -> str:
    return re.sub(r"^```.*?^```", "", markdown, flags=re.DOTALL | re.MULTILINE)


def test_the_referee_sees_every_reference_in_the_raw_text() -> None:
    text = seen_text(MODEL_TEXT)
    assert all(pattern.search(text) for pattern in REFERENCES.values())
    assert TOC.search(MarkdownIt("commonmark").render(MODEL_TEXT))
    assert QUICK_ACTION.search(outside_fences(MODEL_TEXT))


def test_no_reference_and_no_quick_action_survive_on_gitlab() -> None:
    posted = neutralize(MODEL_TEXT, dialect="gitlab")
    text = seen_text(posted)
    for name, pattern in REFERENCES.items():
        assert not pattern.search(text), f"{name}: {pattern.search(text)}"
    assert not TOC.search(MarkdownIt("commonmark").render(posted))
    assert not QUICK_ACTION.search(outside_fences(posted))


def test_readers_see_the_same_words_and_code_is_kept_exactly() -> None:
    posted = neutralize(MODEL_TEXT, dialect="gitlab")
    assert seen_text(posted).replace("\u200d", "").split() == seen_text(MODEL_TEXT).split()
    assert "```suggestion:-0+1\n/keep #12 @alice\n```" in posted
    assert "`#12 in code`" in posted
    assert "a@b.com" in posted  # not a mention on GitLab either


def test_one_line_text_too() -> None:
    line = neutralize_line("/merge now, see !45 by @bob", dialect="gitlab")
    assert not QUICK_ACTION.search(line)
    assert not REFERENCES["merge request"].search(seen_text(line))
    assert not REFERENCES["user"].search(seen_text(line))


def test_github_output_is_unchanged() -> None:
    """GitHub's rules stay as they were: only mentions are broken there."""
    github = neutralize(MODEL_TEXT)
    assert github == neutralize(MODEL_TEXT, dialect="github")
    assert "#12" in github and "/close" in github and "!45" in github


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="dialect"):
        neutralize("x", dialect="bitbucket")
