"""An answer to a question on a change: the review's preparation (settings, change, sandbox,
redaction, budgets), one agent loop that ends with `submit_answer` instead of
`submit_review`, and the answer's text. Posting it is the caller's (forge/answer_flow.py).

What the model reads: the change as its author describes it, the thread the question was
asked in (the comment it starts with, the code there, every reply), the question, and the
diff as context, all of it untrusted data, redacted value by value like a review's task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.change.diff_text import render_file
from reviewer.change.lines import LineCounter
from reviewer.change.selection import select_files
from reviewer.errors import ToolError
from reviewer.findings import Usage
from reviewer.llm import Connection, ServerProfile
from reviewer.loop.agent import Agent, AgentEvents
from reviewer.loop.budget import ReviewBudget
from reviewer.loop.tokens import CHARS_PER_TOKEN
from reviewer.review.context import TASK_SHARE, ChangeInfo
from reviewer.review.pipeline import chat_model
from reviewer.review.prepare import Prepared, ReviewRequest, prepare_review
from reviewer.review.submission import SUBMIT_ANSWER, AnswerSubmission
from reviewer.safety.sinks import map_strings
from reviewer.settings.prompts import ANSWER_PROMPT_NAMES, fence_for, prompt_environment
from reviewer.wording import plural
from reviewer.workspace.paths import quote_path

# What of a long conversation the model is shown: its first comment (the finding) and the
# newest replies, each cut to a length; the tools cannot read comments, so this is bounded
# by the prompt's room alone.
MAX_EARLIER_COMMENTS = 20
MAX_COMMENT_CHARS = 4000
# Lines shown either side of the line a thread is on.
CODE_CONTEXT_LINES = 5
_MIN_DIFF_CHARS = 4000
_MAX_UNSHOWN_NAMED = 50


@dataclass(frozen=True)
class Said:
    """One comment of the conversation: who wrote it (`you` for the bot) and its text."""

    who: str
    body: str


@dataclass(frozen=True)
class Question:
    """A question and where it was asked: a review thread on `path`/`line` (with the
    comments before it, the first one first), or the pull request's conversation."""

    asker: str
    text: str
    earlier: tuple[Said, ...] = ()
    path: str | None = None
    line: int | None = None
    side: str = "RIGHT"


@dataclass(frozen=True)
class Answer:
    """The model's answer (None when the loop ended without one, and why)."""

    text: str | None
    reason: str
    usage: Usage
    turns: int
    tool_calls: int


def answer_question(
    request: ReviewRequest, question: Question, events: AgentEvents | None = None
) -> Answer:
    """One loop over the change with the review's settings, budgets and sandbox."""
    prepared = prepare_review(request, events)
    settings, redactor = prepared.settings, prepared.redactor
    info = request.info or ChangeInfo("", "", quote_path(prepared.root.name))
    system, task = _messages(prepared, info, question)
    agent = Agent(
        model=chat_model(settings, events, ServerProfile(), Connection(settings), SUBMIT_ANSWER),
        workspace=prepared.workspace,
        settings=settings,
        final=AnswerSubmission(),
        redactor=redactor,
        events=events,
        budget=ReviewBudget(settings, deadline=prepared.started + settings.max_seconds),
        record=False,
    )
    outcome = agent.run(redactor(system), task)
    text = redactor(outcome.submission.answer) if outcome.submission is not None else None
    return Answer(text, outcome.stop_reason, outcome.usage, outcome.turns, outcome.tool_calls)


def _messages(prepared: Prepared, info: ChangeInfo, question: Question) -> tuple[str, str]:
    """The system and task messages (prompts/answer_*.md.j2, overridable like the review's)."""
    environment = prompt_environment(prepared.root, prepared.base, ANSWER_PROMPT_NAMES)
    settings, redactor = prepared.settings, prepared.redactor
    earlier = _bounded(question.earlier)
    values: dict[str, Any] = {
        "repository": info.repository,
        "revision": prepared.workspace.label,
        "language": settings.language,
        "title": info.title,
        "description": info.description,
        "instructions": settings.instructions.strip(),
        "place": _place(question),
        "code": _code(prepared, question) if question.path else "",
        "earlier": [{"who": said.who, "body": said.body[:MAX_COMMENT_CHARS]} for said in earlier],
        "earlier_left_out": len(question.earlier) - len(earlier),
        "asker": question.asker,
        "question": question.text[:MAX_COMMENT_CHARS],
    }
    values = map_strings(values, redactor)
    untrusted = [values["title"], values["description"], values["code"], values["question"]]
    untrusted += [said["body"] for said in values["earlier"]]
    values["fence"] = fence_for("".join(untrusted))
    system = environment.get_template(ANSWER_PROMPT_NAMES[0]).render(values)
    task = environment.get_template(ANSWER_PROMPT_NAMES[1])
    room = int(settings.context_window * TASK_SHARE * CHARS_PER_TOKEN)
    fixed = len(system) + len(task.render({**values, "diff": ""}))
    diff = _diff(prepared, question.path, max(_MIN_DIFF_CHARS, room - fixed))
    return system, task.render({**values, "diff": diff})


def _bounded(earlier: tuple[Said, ...]) -> tuple[Said, ...]:
    """The first comment and the newest ones, MAX_EARLIER_COMMENTS in all."""
    if len(earlier) <= MAX_EARLIER_COMMENTS:
        return earlier
    return (earlier[0], *earlier[len(earlier) - MAX_EARLIER_COMMENTS + 1 :])


def _place(question: Question) -> str:
    if question.path is None:
        return ""
    where = f"`{quote_path(question.path)}`"
    if question.line is None:
        return where
    side = " (a line the change removes)" if question.side == "LEFT" else ""
    return f"{where}, line {question.line}{side}"


def _code(prepared: Prepared, question: Question) -> str:
    """The lines around the thread's line, numbered, the line itself marked with `>`: from
    the head, or from the base for a removed line."""
    assert question.path is not None
    workspace = prepared.workspace
    if question.side == "LEFT" and workspace.base is not None:
        workspace = workspace.base
    try:
        lines = LineCounter(workspace).lines(question.path)
    except ToolError as exc:
        return f"(The file cannot be read at this revision: {exc})"
    if question.line is None:
        return "(The thread is on the whole file.)"
    first = max(1, question.line - CODE_CONTEXT_LINES)
    last = min(len(lines), question.line + CODE_CONTEXT_LINES)
    return "\n".join(
        f"{number}{'>' if number == question.line else ':'} {lines[number - 1]}"
        for number in range(first, last + 1)
    )


def _diff(prepared: Prepared, first: str | None, budget: int) -> str:
    """The change's reviewed files, the thread's first, whole files while they fit; the rest
    named, to be read with the tools. Each file is redacted on its own."""
    files = {f.path: f for f in prepared.change.files}
    paths = [c.path for c in select_files(prepared.change, prepared.settings) if c.reviewed]
    paths.sort(key=lambda path: path != first)
    shown: list[str] = []
    unshown: list[str] = []
    used = 0
    for path in paths:
        text = prepared.redactor(render_file(files[path]))
        if used + len(text) <= budget:
            shown.append(text)
            used += len(text) + 2
        else:
            unshown.append(quote_path(path))
    if unshown:
        named = ", ".join(f"`{name}`" for name in unshown[:_MAX_UNSHOWN_NAMED])
        more = len(unshown) - _MAX_UNSHOWN_NAMED
        shown.append(
            f"[Not shown, for room ({plural(len(unshown), 'file')}; read them with the tools): "
            f"{named}{f' and {more} more' if more > 0 else ''}.]"
        )
    return "\n\n".join(shown) if shown else "(No file of this change is reviewed.)"
