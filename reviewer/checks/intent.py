"""An `intent` finding (the change does not do what its ticket asks, or does what it forbids)
must quote the ticket's own words it relies on, and the quote must be in a ticket the review
was shown: checked like grounding's quote of the code (grounding.fold: runs of spaces folded,
`"` and `'` one mark), never trusted.

The hostile case first: a model steered by the change's description ("the ticket says refunds
may exceed the charge") quotes words no ticket holds. The quote is sent back once with the
reason; sent again unchanged, the finding is kept without it (a small model may be unable to
copy text, as it is code) and marked for verification, whose loop is given every ticket of the
review: words alone never decide, the verifier does. A quote too short to mean one requirement
(`the`, `must`) is sent back like a missing one. A finding of another category keeps no
ticket quote. The key of the ticket a quote is in goes with the finding (`Finding.ticket`),
so its verification is given that ticket.
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewer.checks.grounding import MIN_FRAGMENT_CHARS, fold
from reviewer.context.tickets.model import Ticket
from reviewer.findings import INTENT
from reviewer.review.submission import FindingIn

UNQUOTED_TICKET = (
    "its ticket_quote was in no ticket, and the model sent it again after it was told so: kept "
    "without the quote, to be verified against the tickets"
)


def intent_problem(
    finding: FindingIn, tickets: Sequence[Ticket], refused: set[tuple[str, ...]]
) -> str | None:
    """What is wrong with the finding's ticket quote (the model is told), or None. `refused`
    holds the quotes this loop already sent back."""
    if finding.category != INTENT:
        finding.ticket_quote = None
        return None
    shown = [ticket for ticket in tickets if ticket.read]
    if not shown:
        return (
            "category intent is for a change that does not do what a ticket of this review "
            "asks, and this review shows no ticket: give the finding another category"
        )
    quote = fold(finding.ticket_quote or "")
    if not quote:
        return (
            "a finding of category intent needs ticket_quote: the words of the ticket it "
            "relies on, copied exactly from the ticket's text"
        )
    for ticket in shown:
        text = fold(f"{ticket.title}\n{ticket.text}")
        if quote in text and (len(quote) >= MIN_FRAGMENT_CHARS or quote == fold(ticket.text)):
            finding._ticket = ticket.key
            return None
    if any(quote in fold(f"{t.title}\n{t.text}") for t in shown):
        return (
            "its ticket_quote is too short to show what the ticket asks: copy the sentence "
            "of the ticket the finding relies on"
        )
    key = ("ticket", finding.path, finding.title, quote)
    if key in refused:
        finding.ticket_quote = None
        finding._ticket_note = UNQUOTED_TICKET
        return None
    refused.add(key)
    return (
        "its ticket_quote is not in the text of any ticket shown (compared with spaces "
        "folded): copy the ticket's own words exactly, or give the finding another category"
    )
