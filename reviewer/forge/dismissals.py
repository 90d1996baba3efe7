"""When a person has dismissed one of the bot's findings, and who.

A finding is dismissed by a human action on the forge, on the finding's own review thread: the
thread resolved by a person, a 👎 (`-1`) reaction on the bot's comment, or a reply whose
own first words are a dismissal phrase. Only people allowed to dismiss count (`may_dismiss`:
by default those with write access, so the author of a fork's pull request cannot clear the
gate), and only actions the forge records: text inside a comment that *claims* a dismissal
is a reply like any other and is judged by its author. Nothing here does I/O: the thread and
the permission come from the forge's adapter (interface.py).

A reply is read as its reader sees it (forge/prose.py): its first paragraph of prose, after
any quote; a phrase in code (a span, an indented or fenced block), in HTML or in a quoted
line is not the person's words. The phrase must be the verdict: the whole paragraph, or
followed by a line break, a clause mark (`:` `.` `,` `;` `!` a dash) or a reason
("because ..."); a phrase that opens a sentence about something else ("Ignore the previous
reply, this is real", "Not a bug in the parser but in the caller") is not one, and neither
is a question ("Not a bug?", "Won't fix?", "Not a bug, is it?"). When the words cannot
decide, the finding stays open: resolving the thread or a 👎 dismiss without words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from reviewer.forge.interface import THUMBS_DOWN, ReviewThread
from reviewer.forge.prose import prose_runs, run_text

# Replies that dismiss a finding, case-insensitive, as the first words of the reply's first
# prose paragraph ("Won't fix: the caller validates"). Curly apostrophes are read as
# straight ones.
DISMISSAL_PHRASES = (
    "ignore",
    "won't fix",
    "wont fix",
    "wontfix",
    "false positive",
    "not a bug",
    "by design",
    "working as intended",
    "not an issue",
)
# Words after a phrase that give its reason ("False positive because the caller checks").
REASON_WORDS = ("because", "since", "as", "here")
_CLAUSE_MARKS = r".:;,!\-\u2013\u2014"
_PHRASE = re.compile(
    r"^(?P<phrase>"
    + "|".join(re.escape(p).replace("\\ ", r"\s+") for p in DISMISSAL_PHRASES)
    + r")(?![\w'])"
    # The verdict ends here: the end, a line break, a clause mark, or a reason's first word.
    + rf"(?:[ \t]*(?:$|\n|[{_CLAUSE_MARKS}])|[ \t]+(?=(?:{'|'.join(REASON_WORDS)})\b))"
    + rf"[\s{_CLAUSE_MARKS}]*(?P<reason>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# The first sentence of a paragraph, up to its end mark.
_FIRST_SENTENCE_END = re.compile(r"[.!?\n]")


@dataclass(frozen=True)
class Dismissal:
    """Who dismissed a finding, how, and why (as they said it)."""

    fingerprint: str
    by: str
    how: str  # "resolved the thread", "reacted 👎", "replied", "ignore file"
    reason: str = ""


def phrase_dismissal(body: str) -> tuple[str, str] | None:
    """The dismissal phrase a reply's first prose paragraph starts with, and the rest of the
    reply's prose as its reason; None if it has none, or asks a question."""
    text = body.replace("\u2019", "'").replace("\u2018", "'")
    runs = [run_text(run) for run in prose_runs(text)]
    if not runs:
        return None
    match = _PHRASE.match(runs[0])
    if match is None:
        return None
    end = _FIRST_SENTENCE_END.search(runs[0])
    if end is not None and end.group() == "?":
        return None  # "Not a bug?", "Not a bug, is it?": a question, not a verdict
    phrase = " ".join(match["phrase"].lower().split())
    return phrase, " ".join(" ".join([match["reason"], *runs[1:]]).split())


def thread_dismissal(
    thread: ReviewThread,
    fingerprint: str,
    *,
    is_bot: Callable[[str], bool],
    may_dismiss: Callable[[str], bool],
    resolved_by_bot: bool = False,
) -> Dismissal | None:
    """The first dismissal of the finding on its thread by someone allowed to dismiss.

    `resolved_by_bot`: the bot's own memory says it resolved this thread (GitHub may not name
    an app as `resolvedBy`), so that resolution is a fix, not a dismissal.
    """
    root = thread.root
    if root is None or not is_bot(root.author):
        return None
    if thread.is_resolved and not resolved_by_bot:
        person = thread.resolved_by
        if person and not is_bot(person) and may_dismiss(person):
            return Dismissal(fingerprint, person, "resolved the thread", _reason(thread, person))
    for login in root.reactions.get(THUMBS_DOWN, ()):
        if not is_bot(login) and may_dismiss(login):
            return Dismissal(fingerprint, login, "reacted 👎", _reason(thread, login))
    for reply in thread.comments[1:]:
        if is_bot(reply.author):
            continue
        said = phrase_dismissal(reply.body)
        if said and may_dismiss(reply.author):
            phrase, reason = said
            return Dismissal(fingerprint, reply.author, f"replied “{phrase}”", reason)
    return None


def _reason(thread: ReviewThread, person: str) -> str:
    """Why `person` resolved the thread or reacted 👎: the reason of their own newest reply
    that starts with a dismissal phrase ("Comment & resolve" on GitLab: "won't fix: the
    caller checks it", then resolved); empty when they gave none. Whose words a reason is
    stays exact: another person's reply is theirs."""
    for reply in reversed(thread.comments[1:]):
        if reply.author == person and (said := phrase_dismissal(reply.body)) is not None:
            return said[1]
    return ""
