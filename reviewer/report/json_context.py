"""The JSON report's models of what a review read besides the diff: the rule files, the
tickets the change names and the team's learnings (and the learnings a dismissal proposes).
Part of version 1's one definition (json_schema.py).
"""

from __future__ import annotations

from pydantic import Field

from reviewer.report.json_base import Strict as _Strict


class RuleFileV1(_Strict):
    path: str = Field(description="The rule file, as the base revision has it.")
    applied_to: list[str] = Field(description="The changed files whose review it reached.")
    cut: str = Field(description="What of it was cut or left out, and why; empty if nothing.")


class TicketV1(_Strict):
    key: str = Field(description="As the change names it: PAY-42, #12, owner/repo#12, a URL.")
    url: str = Field(description="Where a person opens it; empty when unknown.")
    title: str = Field(description="Its title, as its tracker gives it; empty when not read.")
    status: str = Field(description="Its state in its tracker (open, In Progress, ...).")
    read: bool = Field(description="True when its text was read and shown to the model.")
    why: str = Field(description="Why it was not read (404, 401, no token, another host, ...).")
    cut: str = Field(description="What of its text was left out (it is cut to a few thousand "
                     "characters); empty when nothing was.")  # fmt: skip


class ContextV1(_Strict):
    tickets: list[TicketV1] = Field(
        default_factory=list,
        description="The tickets the change names (title, description, branch, commit "
        "messages, --ticket), in that order: what the model was told the change is for. "
        "At most max_tickets; the rest are counted in `unlisted`.",
    )
    unlisted: int = Field(
        0, ge=0, description="How many more tickets the change named: not read, not listed "
        "one by one (past max_tickets, or named by a change whose author may not write).",
    )  # fmt: skip
    notes: list[str] = Field(
        default_factory=list,
        description="Why tickets named were not read or not listed, one line each.",
    )


class LearningV1(_Strict):
    id: str = Field(description="L1, L2, ...: its place among the learnings read, as the "
                    "model and the verdicts name it.")  # fmt: skip
    scope: str = Field(description="The glob of the files it is for; empty for every file.")
    text: str = Field(description="The learning, as .reviewer/learnings.md has it at the base.")
    line: int = Field(ge=1, description="Its line in the file.")
    cut: str = Field("", description="How it was cut to its bound; empty if it was not.")
    applied_to: list[str] = Field(
        default_factory=list,
        description="The changed files of the parts of the review it was shown to.",
    )
    verifications: int = Field(
        0, ge=0, description="How many findings' verification requests showed it."
    )
    relied_on: list[str] = Field(
        default_factory=list,
        description="The fingerprints of the findings whose verdict relied on it.",
    )


class LearningProposalV1(_Strict):
    line: str = Field(
        description="The line to commit to `file` to keep the dismissal's reason for every "
        "later review: the reason, scoped to the finding's file. Someone's text: read it first."
    )
    file: str = Field(description="Where the line goes: .reviewer/learnings.md.")
    fingerprint: str = Field(description="The dismissed finding.")
    path: str = Field(description="Its file.")
    title: str
    by: str = Field(description="Who dismissed it.")
    how: str = Field(description="How: a reply with a dismissal phrase, a resolved thread, ...")
    reason: str = Field(description="The reason, as they wrote it.")
