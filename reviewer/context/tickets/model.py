"""The tickets' neutral data: a reference found in the change's text (`TicketRef`), an issue
as a forge answers it (`ForgeIssue`), a forge the run may read issues from (`ForgeSite`),
what a review asks for (`TicketRequest`) and a ticket as the model is shown it (`Ticket`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

ForgeKind = Literal["github", "gitlab"]


@dataclass(frozen=True)
class ForgeIssue:
    """An issue as the forge's API answers it (GitHub "Get an issue", GitLab "Get a single
    project issue")."""

    title: str
    body: str
    state: str
    url: str
    # GitHub: a pull request is also an issue (its `pull_request` key); it is no ticket.
    is_change_request: bool = False
    # Its text could reach people who may not read it where the review is posted: a
    # GitLab confidential issue, an issue of another repository that is not public.
    restricted: str = ""


@dataclass(frozen=True)
class ForgeSite:
    """A forge whose issues a run may read, with the run's own token, on its own host only.

    `web` is where people open it (scheme://host[:port][/prefix], no slash at the end);
    `repository` the change's own (owner/name, group/project), "" when the run has none (a
    local run reads only the issue URLs named with --ticket). `read(repository, number)`
    raises a ReviewerError saying why the issue cannot be read."""

    kind: ForgeKind
    web: str
    repository: str
    read: Callable[[str, int], ForgeIssue]


@dataclass(frozen=True)
class TicketRef:
    """A ticket the change names: a Jira key, or an issue of the forge."""

    kind: Literal["jira", "forge"]
    key: str  # as a person writes it: PAY-42, #12, acme/shop#12
    url: str = ""  # where a person opens it
    repository: str = ""  # forge: owner/name ("" is the change's own repository)
    number: int = 0  # forge: the issue's number (GitLab: its iid)
    # Why it is never read (a URL on another host than the forge's): said, never fetched.
    refused: str = ""


@dataclass(frozen=True)
class TicketRequest:
    """What a review asks of tickets, besides its title and description: its head branch's
    name, the keys and URLs named by hand (--ticket), the forges it may read, and tickets
    already read (an evaluation's cases carry their text)."""

    branch: str = ""
    named: tuple[str, ...] = ()
    sites: tuple[ForgeSite, ...] = ()
    given: tuple[Ticket, ...] = ()
    # Look for tickets in the change's text (an evaluation's cases carry theirs: False).
    detect: bool = True
    # On a forge: why the tickets the change's own text names are not read ("" when they
    # are: its author may write to the repository), asked once, only when the text names
    # one to read. The change's text is its author's, and a ticket read with the team's
    # tokens may be quoted in a public review. None (a local run): they are read.
    author_refusal: Callable[[], str] | None = None


@dataclass(frozen=True)
class Ticket:
    """A ticket as the review saw it: read (its text shown to the model, cut to a few
    thousand characters, `cut` saying how much was left out) or not (`why`)."""

    key: str
    url: str = ""
    title: str = ""
    status: str = ""
    text: str = ""
    read: bool = False
    why: str = ""
    cut: str = ""


@dataclass(frozen=True)
class TicketContext:
    """The tickets of a review: those listed (read, or each with why not; at most
    `max_tickets`), how many more the change named (not read, not listed one by one), and
    notes that say why, one line each."""

    tickets: tuple[Ticket, ...] = ()
    unlisted: int = 0
    notes: tuple[str, ...] = ()

    @property
    def not_read(self) -> int:
        """Every ticket named and not shown to the model, listed or not."""
        return self.unlisted + sum(1 for ticket in self.tickets if not ticket.read)
