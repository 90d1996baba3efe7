"""What an evaluation runs on: datasets of cases, each a change with the issues a good review
should find. Neutral data, no I/O: the readers in formats.py make it, the runner uses it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewer.context.tickets.model import Ticket

SIDES = ("RIGHT", "LEFT")


@dataclass(frozen=True)
class ExpectedIssue:
    """One problem the change has, as the dataset states it."""

    description: str
    # The dataset's own word (critical/high/medium/low/info where it uses ours); None when
    # the dataset does not grade its issues.
    severity: str | None
    path: str | None = None
    # First and last line (inclusive) of `side`; None when the dataset gives no place.
    lines: tuple[int, int] | None = None
    side: str = "RIGHT"


@dataclass(frozen=True)
class EvalCase:
    """A change to review (merge-base(base, head)..head of the repository at `repo`)."""

    id: str
    repo: Path
    base: str
    head: str
    expected: tuple[ExpectedIssue, ...]
    # A label for per-repository metrics (e.g. "owner/name"), not a path.
    repository: str
    # The pull request's title and body, given to the review as untrusted information.
    title: str = ""
    description: str = ""
    # The tickets the change is for, with their text (no tracker is asked in an evaluation):
    # shown to the review as a ticket read from its tracker would be (`tickets = "off"`: not).
    tickets: tuple[Ticket, ...] = ()
    # The team's learnings (.reviewer/learnings.md's text) the review is given in place of
    # the file at the case's base; None: the base's own file (if any).
    learnings: str | None = None


@dataclass(frozen=True)
class Dataset:
    name: str
    # What identifies the data the scores came from (a commit, a file hash, a release).
    version: str
    cases: tuple[EvalCase, ...]
