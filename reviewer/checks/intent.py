"""An `intent` finding (the change does not do what its ticket asks, or does what it forbids)
must quote the ticket's own words it relies on, and the quote must be in a ticket the review
was shown: checked like grounding's quote of the code (grounding.fold: runs of spaces folded,
`"` and `'` one mark), never trusted.

The hostile case first: a model steered by the change's description ("the ticket says refunds
may exceed the charge") quotes words no ticket holds. The claim is sent back once with the
reason (a quote in no ticket, one too short to mean one requirement such as `the` or `must`,
no quote, no ticket shown at all); sent again unchanged, the finding is kept without the
claim, as an ordinary finding (no category, no ticket quote: a small model may be unable to
copy text, as it is code), and marked for verification: a real finding is never lost because
its quote did not check out, words alone never decide, the verifier does. A finding of
another category keeps no ticket quote. The key of the ticket a quote is in goes with the
finding (`Finding.ticket`), so its verification is given that ticket.
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewer.checks.finding_in import FindingIn
from reviewer.checks.grounding import MIN_FRAGMENT_CHARS, fold
from reviewer.context.tickets.model import Ticket
from reviewer.findings import INTENT

# What a finding kept without its intent claim says of it (the reports' placement note).
CLAIM_DROPPED = (
    "{why}, and the model sent it again unchanged after it was told so: kept without the "
    "intent claim (no category, no ticket quote), to be verified"
)


def intent_problem(
    finding: FindingIn, tickets: Sequence[Ticket], refused: set[tuple[str, ...]]
) -> str | None:
    """What is wrong with the finding's intent claim (the model is told), or None. `refused`
    holds the claims this loop already sent back: one sent again unchanged is dropped, the
    finding kept (an ordinary finding, to be verified)."""
    if finding.category != INTENT:
        finding.ticket_quote = None
        return None
    found = _claim_problem(finding, [ticket for ticket in tickets if ticket.read])
    if found is None:
        return None
    problem, why = found
    key = ("ticket", finding.path, finding.title, fold(finding.ticket_quote or ""))
    if key in refused:
        finding.category = None
        finding.ticket_quote = None
        finding._ticket_note = CLAIM_DROPPED.format(why=why)
        return None
    refused.add(key)
    return problem


def _claim_problem(finding: FindingIn, shown: list[Ticket]) -> tuple[str, str] | None:
    """What is wrong with an intent finding's ticket quote, as the model is told it and as
    the reports say it, or None (the key of the ticket it is in then goes with it)."""
    if not shown:
        return (
            "category intent is for a change that does not do what a ticket of this review "
            "asks, and this review shows no ticket: give the finding another category"
        ), "category intent, but this review showed no ticket"
    quote = fold(finding.ticket_quote or "")
    if not quote:
        return (
            "a finding of category intent needs ticket_quote: the words of the ticket it "
            "relies on, copied exactly from the ticket's text"
        ), "category intent, but it had no ticket_quote"
    for ticket in shown:
        text = fold(f"{ticket.title}\n{ticket.text}")
        if quote in text and (len(quote) >= MIN_FRAGMENT_CHARS or quote == fold(ticket.text)):
            finding._ticket = ticket.key
            return None
    if any(quote in fold(f"{t.title}\n{t.text}") for t in shown):
        return (
            "its ticket_quote is too short to show what the ticket asks: copy the sentence "
            "of the ticket the finding relies on"
        ), "its ticket_quote was too short to show what the ticket asks"
    return (
        "its ticket_quote is not in the text of any ticket shown (compared with spaces "
        "folded): copy the ticket's own words exactly, or give the finding another category"
    ), "its ticket_quote was in no ticket"
