"""What the bot remembers between runs of one change request: which files a complete
model loop has reviewed, and which findings are still open.

Fail closed, across runs:
- Only reviewed work advances the state. `reviewed_at` is a commit of the pull request at
  which every file had been reviewed; `reviewed_files` names files reviewed since (path and
  blob), when a run reviewed some files but not all. The next run reviews every other file.
- A finding stays open until its code changes: a finding is carried by the hash of the code
  it points at, and is open while that code still stands in the file (or, on the LEFT side,
  among the lines the pull request removes), unless a person dismissed it (conversation.py).

What the pull request showed stays shown: an open finding keeps its text and suggestion, and
the state keeps the model's summary of the last complete review it asked, so a run that asks
the model nothing shows them again. When the state would outgrow its room, texts are cut in
the order of `_CUTS` (each cut says so where the text is shown), and only then are the least
severe findings kept as counts.

Unforgeable: the state is a JSON object in a signed marker (signing.py) on the last line of
the bot's own summary comment. A state that does not verify, is malformed, or names a commit
that is not part of this pull request is not used: the run reviews the whole pull request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from reviewer.findings import ClosedFinding, FileCoverage, Finding, Severity
from reviewer.forge.carry import OpenFinding, open_finding
from reviewer.forge.interface import ChangeRequestForge, Comment
from reviewer.forge.scope import blob_ids
from reviewer.forge.signing import Signer
from reviewer.forge.state import PullState
from reviewer.report.github import is_summary
from reviewer.safety.redact import environment_redactor

STATE_PREFIX = "<!-- reviewer:state "
_VERSION = 2
# Room the state may take in the summary comment; the visible report gets the rest.
MAX_STATE_CHARS = 24_000
# A title is one line: longer ones are cut by every report anyway (finding_views.MAX_LINE_CHARS).
_TITLE_CHARS = 1_000


class _Cut(NamedTuple):
    """How much of each text the state keeps (None: all of it)."""

    summary: int | None
    body: int | None
    # A suggestion applies only as written: one longer than this is left out whole.
    suggestion: int | None
    title: int


# Tried in order until the state fits: the summary and the bodies shrink first, long
# suggestions go next (the inline comment still shows them), titles last.
_CUTS = (
    _Cut(None, None, None, _TITLE_CHARS),
    _Cut(8_000, 4_000, 4_000, 300),
    _Cut(2_000, 1_000, 1_000, 300),
    _Cut(500, 200, 0, 120),
    _Cut(200, 0, 0, 60),
)
# What a text cut for room says, where it is shown again.
CUT_NOTE = "_(cut: the bot's memory of this change had no room for the whole text)_"
SUGGESTION_LEFT_OUT = (
    "_(its suggested change did not fit in the bot's memory of this change: the inline comment or "
    "the first report of this finding has it)_"
)


# --- reading and writing the marker --------------------------------------------------------


def state_line(state: PullState, signer: Signer) -> str:
    """The marker line, at most MAX_STATE_CHARS: texts are cut in the order of `_CUTS`, then
    the least severe findings are counted instead of kept, before the state could outgrow
    its room. Suppressed findings give way first, whole: their texts are cut hardest, then
    they are counted instead of kept, before anything reported is cut (they never gated)."""
    for below in _CUTS:
        payload = _payload(state, _CUTS[0], below)
        line = _sign(payload, signer)
        if len(line) <= MAX_STATE_CHARS:
            return line
    while len(line) > MAX_STATE_CHARS and payload["u"]:
        payload["u"].pop()  # kept most severe first
        payload["xu"] += 1
        line = _sign(payload, signer)
    if len(line) <= MAX_STATE_CHARS:
        return line
    kept_below = payload["u"]
    for cut in _CUTS:
        payload = {**_payload(state, cut, _CUTS[-1]), "u": kept_below, "xu": payload["xu"]}
        line = _sign(payload, signer)
        if len(line) <= MAX_STATE_CHARS:
            return line
    # Closed records go before open findings: those count for the gate. Fixed ones first,
    # oldest first; what is cut is counted and said in the summary.
    payload["cl"].sort(key=lambda c: c["st"] == "fixed", reverse=True)
    while len(line) > MAX_STATE_CHARS and payload["cl"]:
        payload["cl"].pop(0)
        payload["xc"] += 1
        line = _sign(payload, signer)
    while len(line) > MAX_STATE_CHARS and payload["f"]:
        gone = payload["f"].pop()  # findings are kept most severe first
        payload["x"][gone["s"]] = payload["x"].get(gone["s"], 0) + 1
        line = _sign(payload, signer)
    return line


def read_state(body: str | None, signer: Signer) -> tuple[PullState | None, str]:
    """The state on the last line of `body`, or None and why it is not usable."""
    last = (body or "").rstrip().rsplit("\n", 1)[-1].strip()
    if not last.startswith(STATE_PREFIX):
        return None, "the summary comment has no state line"
    payload = signer.read(last)
    if payload is None:
        return None, "the state's signature does not verify (another key, or not ours)"
    try:
        return _parse(json.loads(payload.removeprefix("state "))), ""
    except (ValueError, TypeError, KeyError) as exc:
        return None, f"the state is malformed ({type(exc).__name__})"


def _sign(payload: dict[str, Any], signer: Signer) -> str:
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=True, sort_keys=True)
    # Nothing in it may end the HTML comment it sits in, nor open another.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return signer.marker(f"state {text}")


def _payload(state: PullState, cut: _Cut, below: _Cut) -> dict[str, Any]:
    """The state as JSON, its texts cut by `cut` (suppressed findings' by `below`)."""
    return {
        "v": _VERSION,
        "h": state.head,
        "r": state.reviewed_at,
        "files": dict(sorted(state.reviewed_files.items())),
        "f": [_encode(f, cut) for f in _most_severe_first(state.findings)],
        "u": [_encode(f, below) for f in _most_severe_first(state.suppressed)],
        "xu": state.suppressed_cut,
        "x": dict(state.dropped),
        "sm": _cut_text(state.summary, cut.summary, f"\n\n{CUT_NOTE}"),
        "sa": state.summary_at,
        "cl": [
            {
                "p": c.fingerprint,
                "s": c.severity.value,
                "c": c.category,
                "path": c.path,
                "t": _cut_text(c.title, cut.title, "…"),
                "st": c.state,
                "cm": c.commit,
                "by": c.by,
                "how": c.how,
                # A person's words, posted again in the summary's marker: redacted first.
                "r": _cut_text(environment_redactor()(c.reason), cut.body, "…"),
            }
            for c in state.closed
        ],
        "rs": list(state.resolved),
        "xc": state.closed_cut,
        "fr": state.full_review_at,
    }


def _most_severe_first(findings: Iterable[OpenFinding]) -> list[OpenFinding]:
    return sorted(findings, key=lambda f: (-f.severity.rank, f.path, f.line))


def _encode(f: OpenFinding, cut: _Cut) -> dict[str, Any]:
    return {
        "p": f.fingerprint,
        "s": f.severity.value,
        "c": f.category,
        "path": f.path,
        "l": f.line,
        "e": f.end_line,
        "side": f.side,
        "t": _cut_text(f.title, cut.title, "…"),
        "b": _cut_body(f, cut),
        "g": f.suggestion if _keeps_suggestion(f.suggestion, cut) else None,
        "k": f.code_hash,
        "n": f.code_lines,
    }


def _decode(f: dict[str, Any]) -> OpenFinding:
    return OpenFinding(
        fingerprint=str(f["p"]),
        severity=Severity(f["s"]),
        category=None if f["c"] is None else str(f["c"]),
        path=str(f["path"]),
        line=int(f["l"]),
        end_line=None if f["e"] is None else int(f["e"]),
        side="LEFT" if f["side"] == "LEFT" else "RIGHT",
        title=str(f["t"]),
        body=str(f["b"]),
        code_hash=str(f["k"]),
        code_lines=int(f["n"]),
        # Absent from the states of earlier versions.
        suggestion=None if f.get("g") is None else str(f["g"]),
    )


def _cut_text(text: str, limit: int | None, note: str) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit].rstrip() + note if limit else ""


def _keeps_suggestion(suggestion: str | None, cut: _Cut) -> bool:
    return suggestion is not None and (cut.suggestion is None or len(suggestion) <= cut.suggestion)


def _cut_body(finding: OpenFinding, cut: _Cut) -> str:
    body = _cut_text(finding.body, cut.body, f"\n\n{CUT_NOTE}")
    if finding.suggestion is not None and not _keeps_suggestion(finding.suggestion, cut):
        body = f"{body}\n\n{SUGGESTION_LEFT_OUT}".lstrip("\n")
    return body


def _parse(data: Any) -> PullState:
    if not isinstance(data, dict) or data.get("v") != _VERSION:
        raise ValueError("unknown state version")
    head, reviewed_at = data["h"], data["r"]
    if not _is_sha(head) or not (reviewed_at is None or _is_sha(reviewed_at)):
        raise ValueError("not a commit id")
    files = {str(path): str(blob) for path, blob in dict(data["files"]).items()}
    findings = tuple(_decode(f) for f in data["f"])
    dropped = {Severity(k).value: int(v) for k, v in dict(data.get("x") or {}).items()}
    summary_at = data.get("sa")
    if not (summary_at is None or _is_sha(summary_at)):
        raise ValueError("not a commit id")
    summary = str(data.get("sm") or "")
    full_review_at = data.get("fr")  # absent from the states of earlier runs
    if not (full_review_at is None or _is_sha(full_review_at)):
        raise ValueError("not a commit id")
    # Absent from the states of earlier runs.
    closed = tuple(
        ClosedFinding(
            fingerprint=str(c["p"]),
            severity=Severity(c["s"]),
            category=None if c["c"] is None else str(c["c"]),
            path=str(c["path"]),
            title=str(c["t"]),
            state="fixed" if c["st"] == "fixed" else "dismissed",
            commit=str(c["cm"]),
            by=str(c["by"]),
            how=str(c["how"]),
            reason=str(c["r"]),
        )
        for c in data.get("cl") or []
    )
    resolved = tuple(str(thread) for thread in data.get("rs") or [])
    return PullState(
        head,
        reviewed_at,
        files,
        findings,
        dropped,
        summary,
        summary_at,
        closed,
        resolved,
        int(data.get("xc") or 0),
        # Absent from the states of earlier runs.
        suppressed=tuple(_decode(f) for f in data.get("u") or []),
        suppressed_cut=int(data.get("xu") or 0),
        full_review_at=full_review_at,
    )


def _is_sha(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) in (40, 64)
        and all(c in "0123456789abcdef" for c in value)
    )


# --- what the next run remembers -----------------------------------------------------------


def next_state(
    previous: PullState | None,
    *,
    root: Path,
    head: str,
    complete: bool,
    full: bool,
    files: Iterable[FileCoverage],
    findings: Iterable[Finding],
    summary: str = "",
    closed: tuple[ClosedFinding, ...] = (),
    resolved: tuple[str, ...] = (),
    suppressed: Iterable[Finding] = (),
    full_review: bool = False,
) -> PullState:
    """What this run adds: all of the pull request when the run was complete, else the files
    it did review (by blob, so a later push that changes them makes them due again). Counts
    of findings an earlier state had no room for stay until a complete full review.
    `summary` is the model's summary when this run asked the model; a complete run that did
    becomes the review whose summary is kept, else the earlier one stays. `closed` and
    `resolved` are the conversation's records as this run left them (conversation.py);
    `suppressed` the open findings kept out of the reported list, remembered beside them.
    `full_review`: this run was a full review asked for that sent the model a request."""
    opened = tuple(open_finding(f) for f in findings)
    below = tuple(open_finding(f) for f in suppressed)
    # Suppressed findings an earlier state had no room for are counted until every file is
    # seen again (a complete full review finds them anew).
    below_cut = 0 if previous is None or (complete and full) else previous.suppressed_cut
    dropped = {} if previous is None or (complete and full) else dict(previous.dropped)
    if complete and summary:
        said: tuple[str, str | None] = (summary, head)
    else:
        said = (previous.summary, previous.summary_at) if previous else ("", None)
    cut = previous.closed_cut if previous else 0
    full_at = head if full_review else previous.full_review_at if previous else None
    if complete:
        return PullState(
            head, head, {}, opened, dropped, *said, closed, resolved, cut,
            suppressed=below, suppressed_cut=below_cut, full_review_at=full_at,
        )  # fmt: skip
    blobs = blob_ids(root, head)
    kept = dict(previous.reviewed_files) if previous else {}
    kept = {p: b for p, b in kept.items() if blobs.get(p, "-") == b}
    for coverage in files:
        if coverage.reviewed and not coverage.earlier:
            kept[coverage.path] = blobs.get(coverage.path, "-")
    reviewed_at = previous.reviewed_at if previous else None
    return PullState(
        head, reviewed_at, kept, opened, dropped, *said, closed, resolved, cut,
        suppressed=below, suppressed_cut=below_cut, full_review_at=full_at,
    )  # fmt: skip


def our_summary(
    forge: ChangeRequestForge, signer: Signer, log: Callable[[str], None]
) -> tuple[Comment | None, PullState | None]:
    """Our summary comment and the state it carries: only a comment of ours whose state line
    verifies counts; of several, the oldest (the one every run edits), said in the log."""
    verified = []
    for comment in forge.conversation_comments():
        if not (is_summary(comment.body) and forge.is_ours(comment.author)):
            continue
        state, problem = read_state(comment.body, signer)
        if state is None:
            log(f"not using comment {comment.id} as the summary: {problem}")
        else:
            verified.append((comment, state))
    if len(verified) > 1:
        ids = ", ".join(str(comment.id) for comment, _ in verified)
        log(f"{len(verified)} summary comments of ours ({ids}); using the oldest")
    return verified[0] if verified else (None, None)
