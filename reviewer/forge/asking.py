"""What a comment asks of the bot, and whether its author may ask.

A comment is for the bot when it mentions it (the `mention` setting, `@reviewer` by default)
in its own words: a mention inside code (`` `@reviewer` ``, a code block) or in a quoted
line (`> @reviewer ...`, as GitHub's "Quote reply" writes) is not a call. GitHub does not
notify for those either, and a quote of an earlier question must not ask it again.
`/review` as the first word of a comment on the pull request (after the mention, if any), in
its own prose (not in code, not quoted), asks for a full review. Each is a paid review of the
whole pull request, so someone without write access gets one per head: once it is reviewed,
they are shown where (`reviewed_already`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from reviewer.forge.prose import first_words, prose_runs
from reviewer.forge.state import PullState

REVIEW_COMMAND = "/review"
ANYONE = "anyone"


@dataclass(frozen=True)
class Ask:
    """A comment's request: a question (its whole text) or a full review."""

    kind: Literal["question", "review"]
    text: str


def read_ask(body: str, mention: str, *, on_conversation: bool) -> Ask | None:
    """The request in `body`, or None when the comment is not for the bot.
    `on_conversation`: a comment on the pull request's conversation, where `/review` works."""
    # The first words of the comment's own prose: `/review` in code or a quote is no command.
    words = first_words(body)
    if words and _is_mention(words[0], mention):
        words = words[1:]
    if on_conversation and words and words[0].lower() == REVIEW_COMMAND:
        return Ask("review", body)
    if mentions(body, mention):
        return Ask("question", body)
    return None


def mentions(body: str, mention: str) -> bool:
    """Whether `body` calls `mention` in prose: not in code, not in a quote."""
    pattern = _mention_pattern(mention)
    return any(pattern.search(text) for text in _prose(body))


def refusal(
    asker: str,
    pull_author: str,
    answer_to: str,
    may_write: Callable[[str], bool],
    noun: str = "pull request",
) -> str | None:
    """Why `asker` may not ask (a phrase for the log), or None when they may. Every answer is
    a paid model request, and on a public repository anyone can comment."""
    if answer_to == ANYONE or (asker and asker == pull_author):
        return None
    if asker and may_write(asker):
        return None
    return (
        f"{asker or 'the author'} is neither the {noun}'s author nor has write access, "
        'and answer_to is "author-and-writers"'
    )


def reviewed_already(state: PullState | None, head: str) -> str | None:
    """Why `head` needs no full review asked by someone without write access (a phrase for
    the log and the reply), or None when they may have one. `state` is the bot's own signed
    memory (memory.our_summary): nobody else's text can say what was reviewed."""
    if state is None:
        return None
    if state.full_review_at == head:
        return "a full review of it was asked for and ran already"
    if state.reviewed_at == head:
        return "every file of it has been reviewed"
    return None


def _mention_pattern(mention: str) -> re.Pattern[str]:
    # A login ends where letters, digits and hyphens end; `@reviewer` is not `@reviewers`,
    # `@reviewer-bot` nor `me@reviewer.example`.
    return re.compile(rf"(?<![\w@./-]){re.escape(mention)}(?![\w-])", re.IGNORECASE)


def _is_mention(word: str, mention: str) -> bool:
    return _mention_pattern(mention).fullmatch(word.rstrip(",:;")) is not None


def _prose(body: str) -> list[str]:
    """The text of `body` a reader sees as prose (forge/prose.py), with inline code, HTML
    and link targets left out."""
    return [
        "".join(child.content if child.type == "text" else " " for child in run)
        for run in prose_runs(body)
    ]
