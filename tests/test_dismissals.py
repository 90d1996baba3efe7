"""Which human actions on a finding's thread dismiss it, and whose actions count."""

from __future__ import annotations

import pytest

from reviewer.forge.dismissals import DISMISSAL_PHRASES, phrase_dismissal, thread_dismissal
from reviewer.forge.interface import ReviewThread, ThreadComment

BOT = "github-actions[bot]"
WRITERS = {"maintainer", "admin"}


def _thread(
    *replies: ThreadComment,
    resolved_by: str | None = None,
    reactions: dict[str, tuple[str, ...]] | None = None,
    root_author: str = BOT,
) -> ReviewThread:
    root = ThreadComment(1, root_author, "**SQL injection**\n\n<!-- marker -->", reactions or {})
    return ReviewThread(
        id="PRRT_1",
        is_resolved=resolved_by is not None,
        resolved_by=resolved_by,
        viewer_can_resolve=True,
        comments=(root, *replies),
    )


def _dismissal(thread: ReviewThread, **kwargs: bool):  # type: ignore[no-untyped-def]
    return thread_dismissal(
        thread,
        "0123456789abcdef",
        is_bot=lambda login: login == BOT,
        may_dismiss=lambda login: login in WRITERS,
        **kwargs,
    )


@pytest.mark.parametrize(
    ("reply", "phrase", "reason"),
    [
        ("ignore", "ignore", ""),
        ("Won't fix: the caller validates", "won't fix", "the caller validates"),
        ("WON\u2019T FIX", "won't fix", ""),
        ("wontfix", "wontfix", ""),
        ("False positive. The value is a constant.", "false positive", "The value is a constant."),
        ("not  a\nbug", "not a bug", ""),
        ("By design - see ADR 7", "by design", "see ADR 7"),
    ],
)
def test_dismissal_phrases_as_first_words_or_whole_reply(
    reply: str, phrase: str, reason: str
) -> None:
    assert phrase_dismissal(reply) == (phrase, reason)


# Replies by someone allowed to dismiss that a phrase list read as a dismissal: a phrase in
# code, a question, a phrase that opens a sentence about something else. None dismisses.
FOOLING = [
    "    ignore(errors)\n\nThis call swallows the error: please keep the finding.",  # code
    "```\nwon't fix\n```\nThat is what the old comment said; it is a bug.",
    "`ignore` is the wrong flag here, the finding is right.",
    "> won't fix\n\nI disagree with that: it is a bug.",  # a quote of someone else
    "<!-- won't fix -->\nActually this needs a fix.",
    "Not a bug? I can reproduce it with an empty list.",  # questions
    "False positive? No: the caller never checks it.",
    "Won't fix?",
    "Not a bug, is it?",
    "Ignore the previous reply, this is a real problem.",  # a sentence about something else
    "Not a bug in the parser but in the caller: please fix it here.",
    "By design the caller validates? It does not.",
]

# Dismissals as people write them, which still dismiss.
STILL_DISMISSING = [
    ("Won't fix, the caller validates", "won't fix", "the caller validates"),
    ("**Won't fix**: legacy API", "won't fix", "legacy API"),
    ("> SQL injection in find_user\n\nWon't fix: legacy API", "won't fix", "legacy API"),
    ("Not a bug \u2014 the list is never empty.", "not a bug", "the list is never empty."),
    ("False positive because the caller validates", "false positive",
     "because the caller validates"),
    ("Won't fix.\n\nWe drop this module next month.", "won't fix",
     "We drop this module next month."),
    ("Ignore", "ignore", ""),
]  # fmt: skip


@pytest.mark.parametrize("reply", FOOLING)
def test_a_phrase_in_code_a_quote_a_question_or_another_sentence_does_not_dismiss(
    reply: str,
) -> None:
    assert phrase_dismissal(reply) is None
    assert _dismissal(_thread(ThreadComment(2, "maintainer", reply))) is None


@pytest.mark.parametrize(("reply", "phrase", "reason"), STILL_DISMISSING)
def test_dismissals_as_people_write_them_still_dismiss(
    reply: str, phrase: str, reason: str
) -> None:
    assert phrase_dismissal(reply) == (phrase, reason)


@pytest.mark.parametrize(
    "reply",
    [
        "I will not ignore this",
        "ignored for now, will fix",
        "Could this be a false positive?",
        "wontfixable",
        "",
        "@reviewer why is this a bug?",
    ],
)
def test_other_replies_do_not_dismiss(reply: str) -> None:
    assert phrase_dismissal(reply) is None


def test_every_documented_phrase_is_recognised() -> None:
    for phrase in DISMISSAL_PHRASES:
        assert phrase_dismissal(phrase.upper()) is not None, phrase


def test_a_writer_dismisses_by_resolving_reacting_or_replying() -> None:
    resolved = _dismissal(_thread(resolved_by="maintainer"))
    assert (resolved.by, resolved.how) == ("maintainer", "resolved the thread")
    reacted = _dismissal(_thread(reactions={"-1": ("admin",)}))
    assert (reacted.by, reacted.how) == ("admin", "reacted 👎")
    replied = _dismissal(_thread(ThreadComment(2, "maintainer", "won't fix: legacy API")))
    assert (replied.by, replied.how, replied.reason) == (
        "maintainer",
        "replied “won't fix”",
        "legacy API",
    )


def test_nobody_without_the_right_can_dismiss() -> None:
    assert _dismissal(_thread(resolved_by="fork-author")) is None
    assert _dismissal(_thread(reactions={"-1": ("fork-author",), "+1": ("admin",)})) is None
    assert _dismissal(_thread(ThreadComment(2, "fork-author", "false positive"))) is None


def test_text_claiming_a_dismissal_is_not_one() -> None:
    # A reply quoting a writer, or the bot's own reply, is judged by its real author.
    claim = ThreadComment(2, "fork-author", "maintainer said: won't fix")
    assert _dismissal(_thread(claim)) is None
    own = ThreadComment(3, BOT, "won't fix")
    assert _dismissal(_thread(own)) is None
    # A thread someone else started is not one of the bot's findings.
    assert _dismissal(_thread(resolved_by="maintainer", root_author="maintainer")) is None


def test_a_thread_the_bot_resolved_itself_is_a_fix_not_a_dismissal() -> None:
    assert _dismissal(_thread(resolved_by="maintainer"), resolved_by_bot=True) is None
    # GitHub may name nobody when an app resolved the thread.
    assert _dismissal(_thread(resolved_by=None)) is None
