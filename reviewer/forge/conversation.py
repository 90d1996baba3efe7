"""The review as a conversation that remembers: what people said on the bot's threads, what the
ignore file says, and what the bot answers.

One run, in order (review_flow.py calls these):
1. `listen`: read the threads (through the adapter), find the bot's own (root authored by
   the bot AND ending with our signed fingerprint marker), and gather dismissals: earlier
   ones from the signed state, human actions on the threads by people allowed to dismiss,
   and entries of the ignore file read at the base.
2. `settle`: this run's open findings minus the dismissed; fixed = open before, closed now
   (its code changed), not dismissed. The result carries the closed ones for every report.
3. `answer`: on each fixed finding's thread, one reply "Fixed in `abc1234`." (never twice:
   the thread itself shows whether the bot already said it) and the thread resolved when the
   token may (`viewer_can_resolve`; a refusal is taken the same way). A thread a person already
   resolved is left alone; a thread of an open finding stays open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from reviewer.findings import ClosedFinding, Finding, ReviewResult
from reviewer.forge.carry import OpenFinding
from reviewer.forge.dismissals import Dismissal, thread_dismissal
from reviewer.forge.interface import (
    ChangeRequestForge,
    CISide,
    ForgeError,
    Permission,
    ReadOnlyToken,
    ReviewThread,
)
from reviewer.forge.signing import Signer
from reviewer.forge.state import PullState
from reviewer.report.github import comment_fingerprint
from reviewer.settings.ignore_file import IGNORE_FILE_HOW, IgnoreFile
from reviewer.wording import plural

FIXED_REPLY = "Fixed in `{commit}`."
# How the bot's own "fixed" replies start (with and without a commit), to say it only once.
_FIXED_REPLY_STARTS = ("Fixed in `", "Fixed.")
DismissBy = Literal["writers", "anyone"]


@dataclass
class Conversation:
    """What the threads and the ignore file say, as this run found them."""

    threads: dict[str, ReviewThread] = field(default_factory=dict)  # fingerprint -> ours
    dismissals: dict[str, Dismissal] = field(default_factory=dict)
    read: bool = True  # False: the threads could not be read (nothing is answered)


def listen(
    forge: ChangeRequestForge,
    ci: CISide,
    signer: Signer,
    previous: PullState | None,
    dismiss_by: DismissBy,
) -> Conversation:
    """The bot's threads and the dismissals made on them (and remembered from before)."""
    heard = Conversation()
    for record in previous.closed if previous else ():
        if record.state == "dismissed" and record.how != IGNORE_FILE_HOW:
            heard.dismissals[record.fingerprint] = Dismissal(
                record.fingerprint, record.by, record.how, record.reason
            )
    try:
        threads = forge.threads()
    except ForgeError as exc:
        ci.warning(f"reviewer could not read the review threads: {exc}")
        heard.read = False
        return heard
    for thread in threads:
        root = thread.root
        if root is None or not forge.is_bot(root.author):
            continue
        fingerprint = comment_fingerprint(root.body, signer)
        if fingerprint:
            heard.threads.setdefault(fingerprint, thread)
    may_dismiss = _may_dismiss(forge, dismiss_by)
    fixed = {c.fingerprint for c in previous.closed if c.state == "fixed"} if previous else set()
    resolved = set(previous.resolved) if previous else set()
    for fingerprint, thread in heard.threads.items():
        if fingerprint in heard.dismissals or fingerprint in fixed:
            continue
        found = thread_dismissal(
            thread,
            fingerprint,
            is_bot=forge.is_bot,
            may_dismiss=may_dismiss,
            resolved_by_bot=thread.id in resolved,
        )
        if found is not None:
            ci.log(f"finding {fingerprint} dismissed by {found.by} ({found.how})")
            heard.dismissals[fingerprint] = found
    return heard


def _may_dismiss(forge: ChangeRequestForge, dismiss_by: DismissBy) -> Callable[[str], bool]:
    if dismiss_by == "anyone":
        return lambda login: True
    return lambda login: forge.permission(login) >= Permission.WRITE


def ignored(findings: Iterable[Finding], ignore: IgnoreFile) -> dict[str, Dismissal]:
    """Findings the ignore file (read at the base) names."""
    found = {}
    for finding in findings:
        entry = ignore.match(finding)
        if entry is not None:
            found[finding.fingerprint] = Dismissal(
                finding.fingerprint, entry.describe(), IGNORE_FILE_HOW, entry.reason
            )
    return found


def settle(
    result: ReviewResult,
    previous: PullState | None,
    dismissals: dict[str, Dismissal],
    head: str,
) -> ReviewResult:
    """The result without dismissed findings, with every closed finding of the pull request:
    the earlier records, and this run's newly fixed and newly dismissed."""
    current = [*result.findings, *result.suppressed]
    now_open = {f.fingerprint for f in current}
    known: dict[str, Finding | OpenFinding | ClosedFinding] = {}
    for item in previous.closed if previous else ():
        known[item.fingerprint] = item
    for item in previous.findings if previous else ():
        known[item.fingerprint] = item
    for finding in current:
        known[finding.fingerprint] = finding
    # This run's review already set apart what the ignore file names (review.py).
    closed: dict[str, ClosedFinding] = {c.fingerprint: c for c in result.closed}
    for record in previous.closed if previous else ():
        # A fixed finding whose code came back is open again; an ignore-file entry holds
        # while the base still has it (`listen` brings back every other dismissal).
        if record.fingerprint in closed:
            continue
        if record.state == "dismissed":
            if record.fingerprint in dismissals:
                closed[record.fingerprint] = record
        elif record.fingerprint not in now_open:
            closed[record.fingerprint] = record
    for fingerprint, dismissal in dismissals.items():
        if fingerprint in known and (fingerprint in now_open or closed.get(fingerprint) is None):
            closed[fingerprint] = _closed(known[fingerprint], "dismissed", dismissal=dismissal)
    for item in previous.findings if previous else ():
        if item.fingerprint not in now_open and item.fingerprint not in closed:
            closed[item.fingerprint] = _closed(item, "fixed", commit=head)
    dismissed = {c.fingerprint for c in closed.values() if c.state == "dismissed"}
    return replace(
        result,
        findings=tuple(f for f in result.findings if f.fingerprint not in dismissed),
        suppressed=tuple(f for f in result.suppressed if f.fingerprint not in dismissed),
        closed=tuple(closed.values()),
    )


def _closed(
    item: Finding | OpenFinding | ClosedFinding,
    state: Literal["fixed", "dismissed"],
    *,
    commit: str = "",
    dismissal: Dismissal | None = None,
) -> ClosedFinding:
    return ClosedFinding(
        fingerprint=item.fingerprint,
        severity=item.severity,
        category=item.category,
        path=item.path,
        title=item.title,
        state=state,
        commit=commit,
        by=dismissal.by if dismissal else "",
        how=dismissal.how if dismissal else "",
        reason=dismissal.reason if dismissal else "",
    )


@dataclass
class Answered:
    replies: int = 0
    resolved: list[str] = field(default_factory=list)  # thread ids the bot resolved
    cannot_resolve: int = 0  # threads of fixed findings the token may not resolve
    read_only: bool = False


def answer(
    forge: ChangeRequestForge,
    ci: CISide,
    heard: Conversation,
    closed: Iterable[ClosedFinding],
    previous: PullState | None,
) -> Answered:
    """Reply once on each fixed finding's open thread and resolve it when the token may."""
    done = Answered(resolved=list(previous.resolved) if previous else [])
    if not heard.read:
        return done
    for item in closed:
        thread = heard.threads.get(item.fingerprint)
        if item.state != "fixed" or thread is None or thread.is_resolved:
            continue
        root = thread.root
        if root is None:
            continue
        said = any(
            forge.is_bot(c.author) and c.body.startswith(_FIXED_REPLY_STARTS)
            for c in thread.comments[1:]
        )
        try:
            if not said:
                forge.reply_in_thread(thread.reply_to, _fixed_reply(item.commit))
                done.replies += 1
        except ReadOnlyToken as exc:
            ci.log(f"could not reply on the threads of fixed findings: {exc}")
            done.read_only = True
            return done
        if thread.viewer_can_resolve and forge.resolve_thread(thread.id):
            done.resolved.append(thread.id)
        else:
            done.cannot_resolve += 1
    if done.replies or done.cannot_resolve:
        resolved = len(done.resolved) - (len(previous.resolved) if previous else 0)
        ci.log(
            f"fixed findings: {plural(done.replies, 'reply', 'replies')} posted, "
            f"{plural(resolved, 'thread')} resolved, {done.cannot_resolve} left open"
        )
    return done


def _fixed_reply(commit: str) -> str:
    return FIXED_REPLY.format(commit=commit[:7]) if commit else "Fixed."
