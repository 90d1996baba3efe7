"""Questions to the bot on a merge request, answered on the next pipeline run.

GitLab starts no pipeline for a comment (only a webhook could), so each run of the merge
request's pipeline looks for notes that call the bot (its own username, or the `mention`
setting; in prose: asking.py) and that no reply of ours names yet (an answer, or one saying
it could not be answered: the model is not asked it again on every run), and hands each to
the core's answer flow, oldest first, at most MAX_QUESTIONS_PER_RUN (the rest wait for the
next run). The answer flow checks who may ask and answers once (its signed `answer-to`
marker). `/review` in a note is not a trigger on
GitLab: a run with REVIEWER_FULL_REVIEW=true is (docs/gitlab.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from reviewer.forge.answer_flow import answer_comment, change_settings, mention_for
from reviewer.forge.asking import read_ask
from reviewer.forge.interface import CISide, Comment, CommentEvent, OpenChange
from reviewer.report.answer import replied_question
from reviewer.wording import plural

MAX_QUESTIONS_PER_RUN = 3


def open_questions(pr: OpenChange, mention: str) -> list[CommentEvent]:
    """Notes by people that ask the bot a question it has not answered, oldest first."""
    forge = pr.forge
    on_conversation = forge.conversation_comments()
    on_lines = forge.line_comments()
    everything = [*on_conversation, *on_lines]
    # Answered, or said unanswerable (once: the model is not asked it on every run).
    answered = {
        replied_question(c.body, pr.signer) for c in everything if forge.is_ours(c.author)
    }
    asks: list[CommentEvent] = []
    for comment, in_thread in [(c, False) for c in on_conversation] + [(c, True) for c in on_lines]:
        if forge.is_ours(comment.author) or comment.id in answered:
            continue
        ask = read_ask(comment.body, mention, on_conversation=not in_thread)
        if ask is not None and ask.kind == "question":
            asks.append(_event(comment, in_thread))
    return sorted(asks, key=lambda event: event.id)


def answer_questions(pr: OpenChange, ci: CISide, env: Mapping[str, str]) -> None:
    """Answer the open questions (each once); an answer that fails is said where it was asked
    and in the log, and changes no gate."""
    questions = open_questions(pr, mention_for(pr, change_settings(pr, env)))
    if not questions:
        return
    ci.log(f"{plural(len(questions), 'question')} to the bot since the last run")
    for event in questions[:MAX_QUESTIONS_PER_RUN]:
        answer_comment(event, lambda: pr, ci, env)
    if len(questions) > MAX_QUESTIONS_PER_RUN:
        ci.log(
            f"{plural(len(questions) - MAX_QUESTIONS_PER_RUN, 'question')} left for the next "
            f"run (at most {MAX_QUESTIONS_PER_RUN} are answered per run)"
        )


def _event(comment: Comment, in_thread: bool) -> CommentEvent:
    return CommentEvent(
        id=comment.id,
        action="created",
        body=comment.body,
        author=comment.author,
        in_thread=in_thread,
        thread=comment.thread if in_thread else None,
        on_change_request=True,
    )
