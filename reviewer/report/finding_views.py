"""One finding, a suppressed finding and a fixed or dismissed finding as Markdown: the
views the report's template shows (markdown.py arranges them on the page and fits it to
size). Every value is untrusted text, neutralized and redacted here (mdtext.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from reviewer.findings import ClosedFinding, Finding, Severity
from reviewer.report.common import (
    clean_text,
    line_range,
    location,
    verification_words,
    where_inline,
)
from reviewer.report.mdtext import cap_text, fence, inline_code, neutralize, neutralize_line
from reviewer.settings.learnings import LEARNINGS_FILE, proposed_learning

# One finding must not crowd out all the others.
MAX_BODY_CHARS = 20_000
MAX_SUGGESTION_CHARS = 20_000
# One-line values (a title, a reason) are short by nature; a huge one is cut, not obeyed.
MAX_LINE_CHARS = 1_000

BADGES = {
    Severity.CRITICAL: "🔴 Critical",
    Severity.HIGH: "🟠 High",
    Severity.MEDIUM: "🟡 Medium",
    Severity.LOW: "🔵 Low",
    Severity.INFO: "⚪ Info",
}

# File extension to the fence's language, for syntax colouring; unknown ones get none.
_LANGUAGES = {
    "py": "python", "pyi": "python", "js": "javascript", "jsx": "jsx", "mjs": "javascript",
    "ts": "typescript", "tsx": "tsx", "go": "go", "rs": "rust", "java": "java", "kt": "kotlin",
    "rb": "ruby", "php": "php", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp",
    "cs": "csharp", "swift": "swift", "scala": "scala", "sh": "bash", "bash": "bash",
    "sql": "sql", "html": "html", "css": "css", "json": "json", "yml": "yaml", "yaml": "yaml",
    "toml": "toml", "md": "markdown", "xml": "xml", "lua": "lua", "r": "r", "dart": "dart",
}  # fmt: skip



def language_for(path: str) -> str:
    """The fence info string for a file's code, from its extension."""
    return _LANGUAGES.get(PurePosixPath(path).suffix.lstrip(".").lower(), "")


def finding_view(
    number: int,
    finding: Finding,
    incremental: bool,
    detail: tuple[int, bool, bool, bool],
    redact: Callable[[str], str],
) -> dict[str, str]:
    body_chars, inline_code_shown, summary_code_shown, inline_suggestion = detail

    def short(text: str) -> str:
        return short_line(text, redact)

    lines = line_range(finding)
    meta = [f"**{short(finding.category)}**"] if finding.category else []
    if incremental:
        meta.append("from an earlier run, still open" if finding.earlier else "new in this run")
    if finding.side == "LEFT":
        meta.append("on removed lines (base version)")
    if finding.merged_from > 1:
        meta.append(f"reported {finding.merged_from} times, merged")
    if finding.noise_note:
        meta.append(short(finding.noise_note))
    if finding.inline:
        note = f" ({short(finding.placement_note)})" if finding.placement_note else ""
        meta.append(f"{where_inline(finding)}{note}")
    else:
        note = finding.placement_note or "not on a commentable line"
        meta.append(f"in this summary only: {short(note)}")
    checked, reason = verification_words(finding)
    if checked:
        meta.append(checked + (f": {short(reason)}" if reason else ""))
    body, cut = cap_text(finding.body.strip(), body_chars)
    body = neutralize(body, min_heading=5, redact=redact) + (
        "\n\n_(cut to fit the size limit: the JSON report has the whole text)_" if cut else ""
    )
    view = {
        "number": str(number),
        "badge": BADGES[finding.severity],
        "location": inline_code(location(finding)),
        "title": short(finding.title) or "(untitled)",
        "meta": " · ".join(meta),
        "body": body.strip(),
        "code": "",
        "code_label": "",
        "suggestion": "",
        "suggestion_label": "",
    }
    language = language_for(finding.path)
    show_code = inline_code_shown if finding.inline else summary_code_shown
    if finding.code and show_code:
        side = "Removed code, base version" if finding.side == "LEFT" else "Code"
        view["code_label"] = f"{side} (line{'s' if '-' in lines else ''} {lines}):"
        view["code"] = fence(clean_text(finding.code), language)
    if finding.suggestion is not None:
        if finding.suggestion.strip() == "":
            view["suggestion_label"] = f"Suggested change: delete line(s) {lines}."
        elif finding.inline and not inline_suggestion:
            view["suggestion_label"] = "A suggested change is in the inline comment."
        elif len(finding.suggestion) > MAX_SUGGESTION_CHARS:
            view["suggestion_label"] = (
                f"A suggested replacement of {len(finding.suggestion):,} characters is left "
                "out here; the JSON report has it."
            )
        else:
            view["suggestion_label"] = f"Suggested replacement for line(s) {lines}:"
            view["suggestion"] = fence(clean_text(finding.suggestion), language)
    if finding.suggestion_dropped:
        view["suggestion_label"] = (
            f"Suggested change left out: {short(finding.suggestion_dropped)}."
        )
    return view


def suppressed_line(finding: Finding, redact: Callable[[str], str]) -> str:
    title = short_line(finding.title, redact)
    return f"{finding.severity.value} · {inline_code(location(finding))} · {title}"


# Fixed and dismissed findings listed by name; the rest are counted (the JSON report has all).
MAX_CLOSED_LINES = 50


def closed_lines(
    closed: tuple[ClosedFinding, ...],
    redact: Callable[[str], str],
    limit: int = MAX_CLOSED_LINES,
) -> list[str]:
    """One line per fixed or dismissed finding (at most `limit`, then how many more): what,
    where, and when or by whom and why. A login is shown as code, so the summary never
    notifies anyone."""
    lines = []
    for item in sorted(closed, key=lambda c: (-c.severity.rank, c.path, c.title))[:limit]:
        title = short_line(item.title, redact)
        head = f"{item.severity.value} · {inline_code(item.path)} · {title}"
        if item.state == "fixed":
            when = f" at {inline_code(item.commit[:7])}" if item.commit else ""
            lines.append(f"{head}: fixed{when}")
            continue
        said = f": “{short_line(item.reason, redact)}”" if item.reason else ""
        how = short_line(item.how, redact)
        lines.append(
            f"{head}: dismissed by {inline_code(item.by)} ({how}){said}" + _proposal(item, redact)
        )
    if len(closed) > limit:
        lines.append(f"… and {len(closed) - limit:,} more (the JSON report has all)")
    return lines


def _proposal(item: ClosedFinding, redact: Callable[[str], str]) -> str:
    """The learnings.md line the dismissal's reason proposes, as a code block under its list
    item (copied as is; nothing in a code block acts), redacted in its final form."""
    line = proposed_learning(item)
    if line is None:
        return ""
    block = fence(clean_text(redact(line)), "markdown")
    return (
        f"\n  To keep this for later reviews, commit this line to {inline_code(LEARNINGS_FILE)} "
        "(the bot never writes it):\n" + "\n".join(f"  {row}" for row in block.split("\n"))
    )


def short_line(text: str, redact: Callable[[str], str]) -> str:
    """One line of untrusted text, neutralized, redacted and cut to MAX_LINE_CHARS."""
    text, cut = cap_text(" ".join(text.split()), MAX_LINE_CHARS)
    return neutralize_line(text, redact=redact) + ("…" if cut else "")
