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


def answer_body(text: str, question_id: int, signer: Signer, *, redact: Redact) -> str:
    """An answer, safe to post, ending with the marker of the question it answers."""
    body, cut = cap_text(defuse_markers(neutralize(text, redact=redact)), MAX_BODY_CHARS)
    if cut:
        body += "\n\n*(cut: the answer was too long for GitHub)*"
    return f"{body}\n\n{signer.marker(f'answer-to={question_id}')}"


def not_answered_body(reason: str, *, redact: Redact) -> str:
    """What the asker sees when the model could not answer (no marker: it may be asked again)."""
    text = neutralize(f"I could not answer this question: {reason}", redact=redact)
    return cap_text(defuse_markers(text), MAX_BODY_CHARS)[0]


def answered_question(body: str | None, signer: Signer) -> int | None:
    """The question an answer of ours answers (its signed last line), else None."""
    match = _ANSWER.fullmatch(signer.read(last_line(body)) or "")
    return int(match.group(1)) if match else None
