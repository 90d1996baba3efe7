"""Reading the tickets a change names: at most `max_tickets`, each from its own tracker (the
forge's issues through the site's reader, Jira through `reviewer.context.jira`), each cut to
MAX_TICKET_CHARS with a note. Never in the way: a ticket that cannot be read (no token, 401,
404, 500, a timeout, a pull request's number) is a `Ticket` with `why`, one line in the log,
and the review goes on. A tracker that failed as a whole (unreachable, refused the token) is
not asked again in the same run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from reviewer.context.jira import JiraError, JiraIssue, jira_reader
from reviewer.context.tickets.detect import find_tickets, named_ticket, unique
from reviewer.context.tickets.model import (
    ForgeSite,
    Ticket,
    TicketContext,
    TicketRef,
    TicketRequest,
)
from reviewer.errors import ReviewerError
from reviewer.settings.prompts import fence_for
from reviewer.wording import plural

# What of one ticket the model is shown: a few thousand characters (its goal and acceptance
# criteria are at the top), its title on one line.
MAX_TICKET_CHARS = 4_000
MAX_TITLE_CHARS = 300
_BLANK_LINES = re.compile(r"\n{3,}")

Log = Callable[[str], None]


@dataclass(frozen=True)
class TicketSettings:
    """The settings that decide what is read (a subset of config.Settings: no import of it)."""

    tickets: str = "auto"
    max_tickets: int = 3
    jira_url: str | None = None
    jira_projects: tuple[str, ...] = ()


def gather_tickets(
    request: TicketRequest,
    texts: Sequence[str],
    settings: TicketSettings,
    environ: Mapping[str, str],
    log: Log,
) -> TicketContext:
    """The tickets of a review, read or each with why not: those given (an evaluation's),
    then those named by hand, then those `texts` name (title, branch, description, commit
    messages), once each. At most `max_tickets` are listed (asked, or named on another
    host); the rest are counted, with a note. A --ticket that names nothing is a
    ReviewerError (bad input), raised before anything is asked."""
    if settings.tickets == "off":
        return TicketContext()
    sites = request.sites
    named = [named_ticket(text, sites=sites, jira_url=settings.jira_url) for text in request.named]
    found = find_tickets(
        [request.branch, *texts],
        sites=sites,
        jira_url=settings.jira_url,
        jira_projects=settings.jira_projects,
    )
    given = {ticket.key.upper() for ticket in request.given}
    by_hand = unique(named)
    refs = [ref for ref in unique([*by_hand, *found]) if ref.key.upper() not in given]
    notes: list[str] = []
    unlisted = 0
    # Those only the change's text names (unique keeps the ones named by hand first).
    from_text = [ref for ref in refs if ref not in by_hand]
    if request.author_refusal is not None and any(not ref.refused for ref in from_text):
        why = request.author_refusal()
        if why:
            refs = [ref for ref in refs if ref in by_hand]
            unlisted = len(from_text)
            notes.append(f"{plural(unlisted, 'ticket')} named by the change "
                         f"{'was' if unlisted == 1 else 'were'} not read: {why}")  # fmt: skip
    room = max(settings.max_tickets - len(request.given), 0)
    reader = _Reader(sites, settings.jira_url, environ)
    tickets = [_cut(ticket) for ticket in request.given[: settings.max_tickets]]
    listed = refs[:room]
    for ref in listed:
        tickets.append(Ticket(ref.key, ref.url, why=ref.refused) if ref.refused
                       else reader.read(ref))  # fmt: skip
    past = max(len(request.given) - settings.max_tickets, 0) + len(refs) - len(listed)
    if past:
        notes.append(
            f"{plural(past, 'more ticket')} named by the change "
            f"{'was' if past == 1 else 'were'} not read: max_tickets is {settings.max_tickets}"
        )
    unlisted += past
    for ticket in tickets:
        if not ticket.read:
            log(f"ticket {ticket.key} not read: {ticket.why}")
    for note in notes:
        log(note)
    shown = [t for t in tickets if t.read]
    if shown:
        log("tickets read for the review: " + ", ".join(
            t.key + (" (cut)" if t.cut else "") for t in shown))  # fmt: skip
    return TicketContext(tuple(tickets), unlisted, tuple(notes))


@dataclass
class _Reader:
    sites: tuple[ForgeSite, ...]
    jira_url: str | None
    environ: Mapping[str, str]
    # A tracker that failed as a whole, and why: its other tickets are not asked.
    down: dict[str, str] = field(default_factory=dict)
    jira: tuple[Callable[[str], JiraIssue] | None, str] | None = None

    def read(self, ref: TicketRef) -> Ticket:
        tracker = "jira" if ref.kind == "jira" else self._site(ref).web if self._site(ref) else ""
        if tracker in self.down:
            return Ticket(ref.key, ref.url, why=self.down[tracker])
        try:
            ticket = self._jira(ref) if ref.kind == "jira" else self._forge(ref)
        except JiraError as exc:
            if exc.whole_tracker:
                self.down[tracker] = str(exc)
            return Ticket(ref.key, ref.url, why=str(exc))
        except ReviewerError as exc:
            if getattr(exc, "status", None) in (None, 401):
                self.down[tracker] = str(exc)
            return Ticket(ref.key, ref.url, why=str(exc))
        return _cut(ticket)

    def _site(self, ref: TicketRef) -> ForgeSite | None:
        for site in self.sites:
            if ref.url.lower().startswith(site.web.lower() + "/"):
                return site
        return None

    def _forge(self, ref: TicketRef) -> Ticket:
        site = self._site(ref)
        if site is None:
            return Ticket(
                ref.key, ref.url, why="no forge of this run reads it (no token for its host)"
            )
        issue = site.read(ref.repository or site.repository, ref.number)
        # Restricted first: a pull request of a private repository is named without its title.
        if issue.restricted:
            return Ticket(ref.key, ref.url, why=issue.restricted)
        if issue.is_change_request:
            return Ticket(ref.key, ref.url, issue.title, issue.state,
                          why="a pull request, not an issue: its text is no ticket")  # fmt: skip
        return Ticket(ref.key, issue.url or ref.url, issue.title, issue.state, issue.body, True)

    def _jira(self, ref: TicketRef) -> Ticket:
        if self.jira is None:
            self.jira = jira_reader(self.jira_url, self.environ)
        read, why = self.jira
        if read is None:
            return Ticket(ref.key, ref.url, why=why)
        issue: JiraIssue = read(ref.key)
        return Ticket(issue.key, issue.url, issue.title, issue.status, issue.text, True)


def _cut(ticket: Ticket) -> Ticket:
    """The ticket as the model is shown it: its title on one line, its text without runs of
    blank lines, cut to MAX_TICKET_CHARS with a note that says how much was left out."""
    title = " ".join(ticket.title.split())[:MAX_TITLE_CHARS]
    text = _BLANK_LINES.sub("\n\n", ticket.text.replace("\r\n", "\n").strip())
    cut = ""
    if len(text) > MAX_TICKET_CHARS:
        cut = f"{len(text):,} characters, the first {MAX_TICKET_CHARS:,} shown"
        text = text[:MAX_TICKET_CHARS]
    return replace(ticket, title=title, text=text, cut=cut)


def ticket_values(tickets: Sequence[Ticket]) -> list[dict[str, str]]:
    """The tickets read, as the prompt include shows them: each in its own fence, longer than
    any backtick run of its text (a ticket is written by anyone)."""
    shown = []
    for ticket in tickets:
        if not ticket.read:
            continue
        fields = {
            "key": ticket.key,
            "url": ticket.url,
            "title": ticket.title,
            "status": " ".join(ticket.status.split())[:60],
            "text": ticket.text,
            "cut": ticket.cut,
        }
        shown.append({**fields, "fence": fence_for("".join(fields.values()))})
    return shown
