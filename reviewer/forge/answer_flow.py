"""A run started by a comment, as a list: ignore what is not a call (an edit, a deletion, the
bot's own comment, a comment that does not mention it), check that its author may ask, then
either review the pull request in full (`/review`; for someone without write access, once
per head: later asks get a link to the review) or answer the question once, in the thread
it was asked in or on the pull request.

A question never changes the gate: exit 0 once answered (or ignored), 2 when it could not be
answered. Nothing here asks the model before every check has passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from reviewer.errors import ExitCode, ReviewerError
from reviewer.forge.asking import read_ask, refusal, reviewed_already
from reviewer.forge.interface import (
    CISide,
    Comment,
    CommentEvent,
    OpenChange,
    Opener,
    Permission,
)
from reviewer.forge.memory import our_summary
from reviewer.forge.review_flow import request_for, review_change
from reviewer.forge.scope import ReviewScope
from reviewer.report.answer import answer_body, answered_question, not_answered_body
from reviewer.report.github import last_line
from reviewer.report.mdtext import markdown_dialect, neutralize
from reviewer.review.answer import Answer, Question, Said, answer_question
from reviewer.review.progress import Progress
from reviewer.safety.redact import Redactor
from reviewer.settings.config import Settings
from reviewer.settings.layers import resolve_settings, settings_layers
from reviewer.wording import plural


def answer_comment(
    comment: CommentEvent, open_change: Opener, ci: CISide, env: Mapping[str, str]
) -> int:
    if comment.action != "created":
        return _ignored(ci, f"the comment was {comment.action or 'changed'}; only a new one asks")
    if not comment.on_change_request:
        return _ignored(ci, "the comment is on an issue, not on a pull request")
    try:
        pr = open_change()
        settings = change_settings(pr, env)
    except ReviewerError as exc:
        # Before anything is known of what the comment asks: this run reviews nothing, so it
        # is no "not reviewed" (no status output, no review annotation).
        _say_not_answered(ci, f"the comment could not be read: {exc}")
        return int(ExitCode.INCOMPLETE)
    if comment.author == pr.forge.bot_login:
        return _ignored(ci, "the comment is the bot's own")
    mention = mention_for(pr, settings)
    ask = read_ask(comment.body, mention, on_conversation=not comment.in_thread)
    if ask is None:
        why = f"the comment does not call {mention} (outside code and quotes)"
        return _ignored(ci, why)
    why_not = refusal(
        comment.author, pr.info.author, settings.answer_to, _writer(pr), pr.forge.noun
    )
    if why_not:
        return _ignored(ci, f"no model request: {why_not}")
    if ask.kind == "review":
        memory = our_summary(pr.forge, pr.signer, ci.log)
        done = reviewed_already(memory[1], pr.head_sha)
        if done and not _writer(pr)(comment.author):
            return _point_to_review(pr, ci, comment, memory[0], done)
        ci.log(f"{comment.author} asked for a full review (/review)")
        ci.require_model_key()
        full = {**env, "REVIEWER_FULL_REVIEW": "true"}
        return review_change(open_change, ci, full, pr, memory)
    try:
        ci.require_model_key()
        return _answer(pr, ci, env, comment)
    except ReviewerError as exc:
        _say_not_answered(ci, str(exc))
        return int(ExitCode.INCOMPLETE)


def _writer(pr: OpenChange) -> Callable[[str], bool]:
    """Whether a login has write access (or more) to the repository."""
    return lambda login: pr.forge.permission(login) >= Permission.WRITE


def _answer(pr: OpenChange, ci: CISide, env: Mapping[str, str], comment: CommentEvent) -> int:
    forge, signer = pr.forge, pr.signer
    prior = forge.line_comments() if comment.in_thread else forge.conversation_comments()
    answers = (answered_question(c.body, signer) for c in prior if forge.is_ours(c.author))
    if comment.id in answers:
        return _ignored(ci, "this question was answered already")
    asked = f"answering {comment.author}'s question"
    ci.log(asked + (" in its thread" if comment.in_thread else ""))
    progress = Progress()
    try:
        answer = answer_question(
            # An answer reads no ticket: its prompts do not show them.
            replace(
                request_for(pr, ci, ReviewScope(None, None, f"the whole {forge.noun}"), env),
                tickets=None,
            ),
            _question(pr, comment, prior),
            events=progress,
        )
    finally:
        progress.done()
    redact = Redactor()
    with markdown_dialect(forge.dialect):
        if answer.text is None:
            body = not_answered_body(answer.reason, comment.id, signer, redact=redact)
        else:
            body = answer_body(answer.text, comment.id, signer, redact=redact)
    if comment.in_thread:
        assert comment.thread is not None
        url = forge.reply_in_thread(comment.thread, body)
    else:
        url = forge.comment(body)
    if answer.text is None:
        _say_not_answered(ci, answer.reason)
        ci.log(f"done (not answered, exit 2): said so at {url}")
        return int(ExitCode.INCOMPLETE)
    ci.log(f"done (answered, exit 0): {_spent(answer)}; {url}")
    return int(ExitCode.OK)


def _point_to_review(
    pr: OpenChange, ci: CISide, comment: CommentEvent, summary: Comment | None, done: str
) -> int:
    """A `/review` of a head already reviewed, by someone without write access: answered
    with where the review is, once per comment, and no model request (each would be a paid
    review of the whole pull request, asked again and again)."""
    forge, signer = pr.forge, pr.signer
    why = f"commit {pr.head_sha[:12]} needs no other full review: {done}"
    prior = forge.conversation_comments()
    if comment.id in (answered_question(c.body, signer) for c in prior if forge.is_ours(c.author)):
        return _ignored(ci, f"{why}; this /review was answered already")
    where = summary.url if summary else ""  # a state is read only from our summary comment
    text = (
        f"Commit `{pr.head_sha[:12]}` is reviewed already ({done}): the review is in "
        f"[the summary comment]({where}) and its threads. Another full review of "
        "the same commit can be asked for by someone with write access; a new push is "
        "reviewed as usual."
    )
    with markdown_dialect(forge.dialect):
        body = answer_body(text, comment.id, signer, redact=Redactor())
    url = forge.comment(body)
    ci.log(f"no model request: {why}, and {comment.author} has no write access; said so at {url}")
    return int(ExitCode.OK)


def _question(pr: OpenChange, comment: CommentEvent, prior: list[Comment]) -> Question:
    """The question with the thread it was asked in: every comment of that thread before it,
    the first one first. A PR-level question stands alone."""
    if not comment.in_thread:
        return Question(comment.author, comment.body)
    thread = sorted(
        (c for c in prior if c.thread == comment.thread and c.id < comment.id),
        key=lambda c: c.id,
    )
    root = next((c for c in thread if c.is_root), None)
    earlier = tuple(Said(_who(pr, c), _text(pr, c)) for c in thread)
    if root is None:  # deleted: the thread is known by its replies only
        return Question(comment.author, comment.body, earlier)
    return Question(
        comment.author,
        comment.body,
        earlier,
        path=root.path,
        line=root.line,
        side=root.side,
    )


def _who(pr: OpenChange, comment: Comment) -> str:
    return "You (this review bot)" if pr.forge.is_ours(comment.author) else comment.author


def _text(pr: OpenChange, comment: Comment) -> str:
    """A comment's text; the bot's own without its marker line (bookkeeping, not prose)."""
    body = comment.body or ""
    if pr.forge.is_ours(comment.author) and pr.signer.read(last_line(body)):
        body = body.rstrip().rsplit("\n", 1)[0].rstrip()
    return body


def mention_for(pr: OpenChange, settings: Settings) -> str:
    """How a comment calls the bot: the `mention` setting when it is set, else the forge's
    own (GitLab: the bot's username), else the setting's default."""
    if "mention" in settings.model_fields_set:
        return settings.mention
    return pr.forge.own_mention or settings.mention


def change_settings(pr: OpenChange, env: Mapping[str, str]) -> Settings:
    """The settings the review would use (from the base revision): `mention`, `answer_to`."""
    return resolve_settings(
        settings_layers(
            flags={},
            root=pr.root,
            config_revision=pr.base_sha,
            config_name=env.get("REVIEWER_CONFIG") or None,
            environ=env,
        )
    )


def _ignored(ci: CISide, why: str) -> int:
    ci.log(f"nothing to answer: {why}")
    return int(ExitCode.OK)


def _spent(answer: Answer) -> str:
    return (
        f"{plural(answer.turns, 'model request')}, {plural(answer.tool_calls, 'tool call')}, "
        f"{answer.usage.total_tokens:,} tokens"
    )


def _say_not_answered(ci: CISide, reason: str) -> None:
    """An error annotation and a job summary: the asker's answer did not come."""
    ci.log(f"not answered: {reason}")
    if not ci.in_ci:
        return
    ci.error(f"reviewer: not answered: {reason}", title="Not answered")
    ci.append_summary(f"## ⚠️ AI review: question not answered\n\n{neutralize(reason)}\n")
