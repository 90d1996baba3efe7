"""The body of the bot's answer to a question: the model's Markdown through the same sink as
every review comment (neutralized, markers defused, redacted in its final form, capped),
then one signed line naming the question it answers, so that a question is answered once.
"""

from __future__ import annotations

import re

from reviewer.forge.signing import Signer
from reviewer.report.github import MAX_BODY_CHARS, Redact, defuse_markers, last_line
from reviewer.report.mdtext import cap_text, neutralize

_ANSWER = re.compile(r"answer-to=([0-9]{1,20})")
_REPLY = re.compile(r"(answer-to|not-answered)=([0-9]{1,20})")


def answer_body(text: str, question_id: int, signer: Signer, *, redact: Redact) -> str:
    """An answer, safe to post, ending with the marker of the question it answers."""
    body, cut = cap_text(defuse_markers(neutralize(text, redact=redact)), MAX_BODY_CHARS)
    if cut:
        body += "\n\n*(cut: the answer was too long for GitHub)*"
    return f"{body}\n\n{signer.marker(f'answer-to={question_id}')}"


def not_answered_body(reason: str, question_id: int, signer: Signer, *, redact: Redact) -> str:
    """What the asker sees when the model could not answer, ending with a signed line of its
    own (`not-answered=`): a run that looks for open questions (GitLab's, every pipeline run)
    does not ask the model the same question again, and nothing reads it as an answer."""
    text = neutralize(
        f"I could not answer this question: {reason}. Ask again in a new comment to have it "
        "tried again.",
        redact=redact,
    )
    body = cap_text(defuse_markers(text), MAX_BODY_CHARS)[0]
    return f"{body}\n\n{signer.marker(f'not-answered={question_id}')}"


def answered_question(body: str | None, signer: Signer) -> int | None:
    """The question an answer of ours answers (its signed last line), else None. A reply
    that says the question could not be answered is no answer: None."""
    match = _ANSWER.fullmatch(signer.read(last_line(body)) or "")
    return int(match.group(1)) if match else None


def replied_question(body: str | None, signer: Signer) -> int | None:
    """The question a reply of ours is about, answered or said unanswerable, else None."""
    match = _REPLY.fullmatch(signer.read(last_line(body)) or "")
    return int(match.group(2)) if match else None
