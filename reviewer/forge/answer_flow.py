"""A run started by a comment, as a list: ignore what is not a call (an edit, a deletion, the
bot's own comment, a comment that does not mention it), check that its author may ask, then
either review the pull request in full (`/review`; for someone without write access, once
per head: later asks get a link to the review) or answer the question once, in the thread
it was asked in or on the pull request.

A question never changes the gate: exit 0 once answered (or ignored), 2 when it could not be
answered. Nothing here asks the model before every check has passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewer.answer import Answer, Question, Said, answer_question
from reviewer.config import Settings, resolve_settings, settings_layers
from reviewer.errors import ExitCode, ReviewerError
from reviewer.github.actions import (
    ActionsContext,
    CommentRef,
    append_summary,
    emit_command,
    log,
    require_model_key,
)
from reviewer.github.asking import read_ask, refusal, reviewed_already
from reviewer.github.memory import our_summary
from reviewer.github.pull import OpenPull, open_pull
from reviewer.github.review_flow import request_for, review_pull
from reviewer.github.scope import ReviewScope
from reviewer.progress import Progress
from reviewer.redact import Redactor
from reviewer.report.answer import answer_body, answered_question, not_answered_body
from reviewer.report.github import last_line
from reviewer.report.mdtext import neutralize
from reviewer.wording import plural


def answer_comment(context: ActionsContext, env: Mapping[str, str]) -> int:
    comment = context.comment
    assert comment is not None
    if comment.action != "created":
        return _ignored(f"the comment was {comment.action or 'changed'}; only a new one asks")
    if not comment.on_pull_request:
        return _ignored("the comment is on an issue, not on a pull request")
    try:
        pr = open_pull(context, env)
        settings = _settings(pr, env)
    except ReviewerError as exc:
        # Before anything is known of what the comment asks: this run reviews nothing, so it
        # is no "not reviewed" (no status output, no review annotation).
        _say_not_answered(context, env, f"the comment could not be read: {exc}")
        return int(ExitCode.INCOMPLETE)
    if comment.author == pr.client.login:
        return _ignored("the comment is the bot's own")
    ask = read_ask(comment.body, settings.mention, on_conversation=not comment.in_thread)
    if ask is None:
        return _ignored(f"the comment does not call {settings.mention} (outside code and quotes)")
    why_not = refusal(comment.author, _pull_author(pr), settings.answer_to, pr.client.may_write)
    if why_not:
        return _ignored(f"no model request: {why_not}")
    if ask.kind == "review":
        memory = our_summary(pr.client, pr.pull)
        done = reviewed_already(memory[1], pr.head_sha)
        if done and not pr.client.may_write(comment.author):
            return _point_to_review(pr, comment, memory[0], done)
        log(f"{comment.author} asked for a full review (/review)")
        require_model_key(context, env)
        return review_pull(context, {**env, "REVIEWER_FULL_REVIEW": "true"}, pr, memory)
    try:
        require_model_key(context, env)
        return _answer(pr, context, env, comment)
    except ReviewerError as exc:
        _say_not_answered(context, env, str(exc))
        return int(ExitCode.INCOMPLETE)


def _answer(
    pr: OpenPull, context: ActionsContext, env: Mapping[str, str], comment: CommentRef
) -> int:
    client, signer = pr.client, pr.client.signer
    prior = client.review_comments(pr.pull) if comment.in_thread else client.issue_comments(pr.pull)
    answers = (answered_question(c.body, signer) for c in prior if client.is_ours(c.user))
    if comment.id in answers:
        return _ignored("this question was answered already")
    log(f"answering {comment.author}'s question" + (" in its thread" if comment.in_thread else ""))
    progress = Progress()
    try:
        answer = answer_question(
            request_for(pr, context, ReviewScope(None, None, "the whole pull request"), env),
            _question(pr, comment, prior),
            events=progress,
        )
    finally:
        progress.done()
    redact = Redactor()
    if answer.text is None:
        body = not_answered_body(answer.reason, redact=redact)
    else:
        body = answer_body(answer.text, comment.id, signer, redact=redact)
    if comment.in_thread:
        assert comment.thread_id is not None
        url = client.reply_in_thread(pr.pull, comment.thread_id, body)
    else:
        url = client.comment_on_pull(pr.pull, body)
    if answer.text is None:
        _say_not_answered(context, env, answer.reason)
        log(f"done (not answered, exit 2): said so at {url}")
        return int(ExitCode.INCOMPLETE)
    log(f"done (answered, exit 0): {_spent(answer)}; {url}")
    return int(ExitCode.OK)


def _point_to_review(pr: OpenPull, comment: CommentRef, summary: Any, done: str) -> int:
    """A `/review` of a head already reviewed, by someone without write access: answered
    with where the review is, once per comment, and no model request (each would be a paid
    review of the whole pull request, asked again and again)."""
    client, signer = pr.client, pr.client.signer
    why = f"commit {pr.head_sha[:12]} needs no other full review: {done}"
    prior = client.issue_comments(pr.pull)
    if comment.id in (answered_question(c.body, signer) for c in prior if client.is_ours(c.user)):
        return _ignored(f"{why}; this /review was answered already")
    text = (
        f"Commit `{pr.head_sha[:12]}` is reviewed already ({done}): the review is in "
        f"[the summary comment]({summary.html_url}) and its threads. Another full review of "
        "the same commit can be asked for by someone with write access; a new push is "
        "reviewed as usual."
    )
    url = client.comment_on_pull(pr.pull, answer_body(text, comment.id, signer, redact=Redactor()))
    log(f"no model request: {why}, and {comment.author} has no write access; said so at {url}")
    return int(ExitCode.OK)


def _question(pr: OpenPull, comment: CommentRef, prior: list[Any]) -> Question:
    """The question with the thread it was asked in: every comment of that thread before it,
    the first one first. A PR-level question stands alone."""
    if not comment.in_thread:
        return Question(comment.author, comment.body)
    thread = sorted(
        (
            c
            for c in prior
            if (c.id == comment.thread_id or c.in_reply_to_id == comment.thread_id)
            and c.id < comment.id
        ),
        key=lambda c: c.id,
    )
    root = next((c for c in thread if c.id == comment.thread_id), None)
    earlier = tuple(Said(_who(pr, c), _text(pr, c)) for c in thread)
    if root is None:  # deleted: the thread is known by its replies only
        return Question(comment.author, comment.body, earlier)
    return Question(
        comment.author,
        comment.body,
        earlier,
        path=root.path,
        line=root.line or root.original_line,
        side=root.side or "RIGHT",
    )


def _who(pr: OpenPull, comment: Any) -> str:
    return "You (this review bot)" if pr.client.is_ours(comment.user) else comment.user.login


def _text(pr: OpenPull, comment: Any) -> str:
    """A comment's text; the bot's own without its marker line (bookkeeping, not prose)."""
    body = comment.body or ""
    if pr.client.is_ours(comment.user) and pr.client.signer.read(last_line(body)):
        body = body.rstrip().rsplit("\n", 1)[0].rstrip()
    return body


def _settings(pr: OpenPull, env: Mapping[str, str]) -> Settings:
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


def _pull_author(pr: OpenPull) -> str:
    return str(getattr(pr.pull.user, "login", "") or "")


def _ignored(why: str) -> int:
    log(f"nothing to answer: {why}")
    return int(ExitCode.OK)


def _spent(answer: Answer) -> str:
    return (
        f"{plural(answer.turns, 'model request')}, {plural(answer.tool_calls, 'tool call')}, "
        f"{answer.usage.total_tokens:,} tokens"
    )


def _say_not_answered(context: ActionsContext, env: Mapping[str, str], reason: str) -> None:
    """An error annotation and a job summary: the asker's answer did not come."""
    log(f"not answered: {reason}")
    if env.get("GITHUB_ACTIONS") != "true":
        return
    emit_command("error", f"reviewer: not answered: {reason}", title="Not answered")
    append_summary(
        context.summary_file,
        f"## ⚠️ AI review: question not answered\n\n{neutralize(reason)}\n",
    )
