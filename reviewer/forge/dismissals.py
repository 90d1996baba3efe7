"""When a person has dismissed one of the bot's findings, and who.

A finding is dismissed by a human action on the forge, on the finding's own review thread: the
thread resolved by a person, a 👎 (`-1`) reaction on the bot's comment, or a reply that starts
with (or is) a dismissal phrase. Only people allowed to dismiss count (`may_dismiss`: by
default those with write access, so the author of a fork's pull request cannot clear the
gate), and only actions the forge records: text inside a comment that *claims* a dismissal is a
reply like any other and is judged by its author. Nothing here does I/O: the thread and the
permission come from the forge's adapter (interface.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from reviewer.forge.interface import THUMBS_DOWN, ReviewThread

# Replies that dismiss a finding, case-insensitive, as the reply's first words or the whole
# reply ("Won't fix: the caller validates"). Curly apostrophes are read as straight ones.
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
_PHRASE = re.compile(
    r"^\s*(?P<phrase>"
    + "|".join(re.escape(p).replace("\\ ", r"\s+") for p in DISMISSAL_PHRASES)
    + r")(?![\w'])[\s.:;,!\-\u2013\u2014]*(?P<reason>.*)$",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class Dismissal:
    """Who dismissed a finding, how, and why (as they said it)."""

    fingerprint: str
    by: str
    how: str  # "resolved the thread", "reacted 👎", "replied", "ignore file"
    reason: str = ""


def phrase_dismissal(body: str) -> tuple[str, str] | None:
    """The dismissal phrase a reply starts with, and the rest as its reason; None if none."""
    text = body.replace("\u2019", "'").replace("\u2018", "'")
    match = _PHRASE.match(text)
    if match is None:
        return None
    phrase = " ".join(match["phrase"].lower().split())
    return phrase, " ".join(match["reason"].split())


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
