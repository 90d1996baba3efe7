"""The Markdown report: a CI artifact, the GitHub job summary, the base of the summary comment.

Python prepares every value (neutralized: see mdtext.py) and the Jinja template arranges
them. The whole document stays under `max_bytes` (GitHub refuses a step summary over 1 MiB);
when it must be cut, the least important parts go first: the lists of suppressed and reviewed
files, then the least severe findings, then the end of the summary. A note says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import jinja2

from reviewer import __version__
from reviewer.findings import Finding, ReviewResult, sort_findings
from reviewer.report.common import (
    SEVERITIES,
    counts_text,
    discarded_text,
    files_text,
    noise_line,
    partly_reviewed,
    reviewed_count,
    rule_files_lines,
    short_rev,
    skipped_by_reason,
    suppressed_total,
    unverified_text,
    usage_text,
)
from reviewer.report.finding_views import (
    BADGES,
    MAX_BODY_CHARS,
    closed_lines,
    finding_view,
    short_line,
    suppressed_line,
)
from reviewer.report.mdtext import (
    cap_bytes,
    cap_text,
    inline_code,
    neutralize,
    neutralize_line,
)
from reviewer.safety.redact import environment_redactor
from reviewer.safety.sinks import printable, shown_name
from reviewer.wording import plural

DEFAULT_MAX_BYTES = 1_000_000
# One finding or the summary must not crowd out all the others.
MAX_SUMMARY_CHARS = 60_000
# Files not reviewed listed by name once the report has to shrink.
MAX_LISTED_SKIPPED = 200
# Rule files listed by name.
MAX_LISTED_RULE_FILES = 50
# Lines of each other list (fixed, dismissed, partly reviewed, rule files) on a page cut to
# fit: its count stays in its heading, and the rest are counted.
MAX_LISTED_WHEN_CUT = 10


# findings, of summary-only findings, suggestions of inline findings). An inline finding has
# its own comment on the pull request; a summary-only one has no other home there.
_DETAIL = (
    (MAX_BODY_CHARS, True, True, True),
    (4_000, True, True, True),
    (1_000, False, True, False),
    (300, False, False, False),
)


@dataclass
class _Page:
    """Everything the template shows; `_shrink` edits a copy of it to fit the size cap."""

    values: dict[str, Any]
    raw: list[Finding]
    incremental: bool
    suppressed: list[str]
    reviewed: list[str]
    summary_raw: str
    # Applied to every value as the page shows it, after Markdown decoded it (mdsafe.py).
    redact: Callable[[str], str]
    # The review the page shows (printable): its lists again, shorter, when the page is cut.
    result: ReviewResult
    detail: int = 0
    # Indexes into `raw` of the findings shown; None: all of them.
    shown: frozenset[int] | None = None
    cut_summary: bool = False
    views: dict[tuple[int, int], dict[str, str]] = field(default_factory=dict)

    def findings(self) -> list[dict[str, str]]:
        out = []
        for index, finding in enumerate(self.raw):
            if self.shown is not None and index not in self.shown:
                continue
            key = (index, self.detail)
            if key not in self.views:
                self.views[key] = finding_view(
                    index + 1, finding, self.incremental, _DETAIL[self.detail], self.redact
                )
            out.append(self.views[key])
        return out

    @property
    def omitted(self) -> list[Finding]:
        if self.shown is None:
            return []
        return [f for index, f in enumerate(self.raw) if index not in self.shown]


def render_markdown(
    result: ReviewResult,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    title: str = "AI review",
    full_list: str = "The JSON report has all of them.",
    redact: Callable[[str], str] | None = None,
) -> str:
    """The review as GitHub-flavoured Markdown, at most `max_bytes` bytes of UTF-8. When it
    must be cut, `full_list` says where every finding can still be read. `redact` (by default
    the process environment's Redactor) applies to the final text of every value."""
    page = _page(printable(result, shown_name), title, redact or environment_redactor())
    page.values["full_list"] = full_list
    text = _render(page, max_bytes)
    if _size(text) <= max_bytes:
        return text
    return _shrink(page, max_bytes)


def counts_sentence(result: ReviewResult, shown: int | None = None) -> str:
    """Every count of the review in one sentence, for a page cut as plain text; `shown`: how
    many findings the cut page still shows (see `findings_shown`)."""
    total = len(result.findings)
    said = [f"{plural(total, 'finding')} ({counts_text(result)})"]
    if shown is not None and shown < total:
        said.append(f"{total - shown:,} of {plural(total, 'finding')} not shown here")
    said.append(f"{suppressed_total(result):,} below the reporting threshold")
    counted = (
        (len(result.fixed), "fixed"),
        (len(result.dismissed), "dismissed"),
        (len(result.discarded), "discarded"),
        (len(result.unverified), "unverified"),
    )
    said += [f"{plural(count, 'finding')} {what}" for count, what in counted if count]
    if result.rule_files:
        said.append(f"{plural(len(result.rule_files), 'rule file')} used")
    return f"{', '.join(said)}; files: {files_text(result)}"


# How a finding's heading starts (templates/review.md.j2).
_FINDING_HEADING = re.compile(r"^#### \d+\. ", re.MULTILINE)


def findings_shown(text: str) -> int:
    """How many findings a page (cut as plain text, perhaps) still shows a heading of."""
    return len(_FINDING_HEADING.findall(text))




def _page(result: ReviewResult, title: str, redact: Callable[[str], str]) -> _Page:

    def short(text: str) -> str:
        return short_line(text, redact)

    findings = sort_findings(result.findings)
    counts = result.counts()
    highest = result.highest_severity()
    if not result.complete:
        heading = f"⚠️ {neutralize_line(title)}: review incomplete"
    elif highest is None:
        heading = f"✅ {neutralize_line(title)}: no findings"
    else:
        heading = f"{BADGES[highest].split()[0]} {neutralize_line(title)}: "
        heading += f"{plural(len(findings), 'finding')}, highest {highest.value}"
    skipped = skipped_by_reason(result)
    coverage = [
        f"**Files:** {files_text(result)}",
        *([f"**Noise:** {short(noise_line(result))}"] if noise_line(result) else []),
        f"**Model:** {inline_code(result.model) or 'unknown'}",
        f"**Change:** {inline_code(short_rev(result.base))} → "
        f"{inline_code(short_rev(result.head))}",
    ]
    values: dict[str, Any] = {
        "heading": heading,
        "incomplete": not result.complete,
        "reason": short(result.incomplete_reason or "no reason was recorded"),
        "counts": [str(counts[s]) for s in SEVERITIES],
        "total": len(findings),
        "coverage_line": " · ".join(coverage),
        "no_findings": (
            "No findings."
            if result.complete
            else "No findings so far: the review did not finish, so this is not a clean result."
        ),
        "skipped": [
            (short(r), len(paths), [inline_code(p) for p in paths]) for r, paths in skipped
        ],
        "partly": [f"{inline_code(path)}: {short(what)}" for path, what in partly_reviewed(result)],
        "rule_files": rule_files_lines(
            result, MAX_LISTED_RULE_FILES, name=inline_code, text=short, more_note=""
        ),
        # The cost line names the model, a value from the settings: made safe like the rest.
        "footer": neutralize_line(f"{usage_text(result)} · reviewer {__version__}", redact=redact),
    }
    # Counts are of the whole review: a list may be cut to fit, its count never is.
    # Empty, not "0", when there are none: the template says the count only if there is one.
    below = suppressed_total(result)
    values["suppressed_count"] = f"{below:,}" if below else ""
    values["suppressed_listed"] = bool(result.suppressed)
    values["suppressed_unlisted"] = (
        f"{result.suppressed_unlisted:,} of them, found by earlier runs, are no longer listed one "
        "by one (the bot's memory of this change had no room for them); the JSON report of the "
        "run that found them lists them."
        if result.suppressed_unlisted
        else ""
    )
    values["skipped_count"] = f"{sum(len(paths) for _reason, paths in skipped):,}"
    values["fixed_count"] = f"{len(result.fixed):,}"
    values["dismissed_count"] = f"{len(result.dismissed):,}"
    values["partly_count"] = f"{len(values['partly']):,}"
    values["rule_files_count"] = f"{len(result.rule_files):,}"
    values["reviewed_count"] = f"{reviewed_count(result):,}" if reviewed_count(result) else ""
    values["counts_sentence"] = counts_sentence(result)
    said, reason = unverified_text(result)
    # discarded_text is our own words (a count); the reason an endpoint gave is not.
    values["verification_notes"] = [text for text in (discarded_text(result),) if text] + (
        [f"{said} ({short(reason)})."] if said else []
    )
    values["fixed"] = closed_lines(result.fixed, redact)
    values["dismissed"] = closed_lines(result.dismissed, redact)
    return _Page(
        values=values,
        raw=findings,
        incremental=result.incremental,
        suppressed=[suppressed_line(f, redact) for f in sort_findings(result.suppressed)],
        reviewed=[f"{inline_code(f.path)} ({f.status})" for f in result.files if f.reviewed],
        summary_raw=result.summary,
        redact=redact,
        result=result,
    )




@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reviewer.report", "templates"),
        # Markdown, not HTML: values are neutralized for Markdown before they get here.
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("review.md.j2")


def _render(page: _Page, max_bytes: int) -> str:
    summary, cut = cap_text(page.summary_raw.strip(), MAX_SUMMARY_CHARS)
    summary = neutralize(summary, min_heading=4, redact=page.redact)
    if cut or page.cut_summary:
        summary += "\n\n_(summary cut to fit the size limit)_"
    omitted_note = ""
    if omitted := page.omitted:
        inline = sum(1 for f in omitted if f.inline)
        on_pr = f" ({inline} of them have an inline comment on the pull request)" if inline else ""
        omitted_note = (
            f"This report was cut to stay under {max_bytes:,} bytes: {len(omitted):,} of "
            f"{plural(len(page.raw), 'finding')} are not shown here{on_pr}. "
            f"{page.values['full_list']}"
        )
    return _template().render(
        **page.values,
        summary=summary,
        findings=page.findings(),
        omitted_note=omitted_note,
        suppressed=page.suppressed,
        reviewed=page.reviewed,
    )


def _shrink(page: _Page, max_bytes: int) -> str:
    """The largest version of the page that fits. What goes first: the lists of reviewed files
    and suppressed findings (their count stays), then the model's summary and long texts,
    then whole findings, inline ones (they have their own comment) before summary-only
    ones, the least severe first. Every cut is said on the page."""
    skipped = page.values["skipped"]
    lean = replace(page, suppressed=[], reviewed=[])
    result, redact = page.result, page.redact
    lean.values = {
        **page.values,
        "coverage_line": page.values["coverage_line"]
        + " · lists of reviewed files and suppressed findings left out to fit the size limit",
        # Thousands of skipped files (a vendored folder) must not crowd out the findings; nor
        # must the other lists (their counts stay in their headings).
        "skipped": _first_paths(skipped, MAX_LISTED_SKIPPED),
        "fixed": closed_lines(result.fixed, redact, MAX_LISTED_WHEN_CUT),
        "dismissed": closed_lines(result.dismissed, redact, MAX_LISTED_WHEN_CUT),
        "partly": _first_lines(page.values["partly"], MAX_LISTED_WHEN_CUT),
        "rule_files": _first_lines(page.values["rule_files"], MAX_LISTED_WHEN_CUT),
    }
    text = _render(lean, max_bytes)
    summary = page.summary_raw
    for detail, summary_chars in ((1, 8_000), (2, 2_000), (3, 500)):
        if _size(text) <= max_bytes:
            return text
        cut = len(summary) > summary_chars
        lean = replace(lean, detail=detail, summary_raw=summary[:summary_chars], cut_summary=cut)
        text = _render(lean, max_bytes)
    if _size(text) <= max_bytes:
        return text
    # Whole findings, in the order they matter least to this page.
    priority = sorted(
        range(len(lean.raw)),
        key=lambda i: (lean.raw[i].inline, -lean.raw[i].severity.rank, i),
    )
    low, high = 0, len(priority)
    while low < high:
        mid = (low + high + 1) // 2
        trial = replace(lean, shown=frozenset(priority[:mid]))
        if _size(_render(trial, max_bytes)) <= max_bytes:
            low = mid
        else:
            high = mid - 1
    fitted = replace(lean, shown=frozenset(priority[:low]))
    text = _render(fitted, max_bytes)
    # Still too big with no finding: the summary is what is left to cut.
    budget = len(fitted.summary_raw)
    while _size(text) > max_bytes and budget > 0:
        budget //= 2
        fitted = replace(fitted, summary_raw=fitted.summary_raw[:budget], cut_summary=True)
        text = _render(fitted, max_bytes)
    if _size(text) <= max_bytes:
        return text
    # Only huge titles or paths could get here; a plain cut keeps the promise of the limit,
    # and the counts, which the cut may have taken, are said again after it (how many
    # findings it left out too: a note naming none is the longest).
    def note(shown: int) -> str:
        return (
            f"\n\n_(report cut to fit the size limit: {counts_sentence(page.result, shown)}. "
            f"{page.values['full_list']})_\n"
        )

    cut = cap_bytes(text, max_bytes - _size(note(0)))
    return cut + note(findings_shown(cut))


def _first_lines(lines: list[str], limit: int) -> list[str]:
    """At most `limit` of `lines`, then how many more (the JSON report has them)."""
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"… and {len(lines) - limit:,} more (the JSON report has all)"]


def _first_paths(
    groups: list[tuple[str, int, list[str]]], limit: int
) -> list[tuple[str, int, list[str]]]:
    """The groups of files not reviewed (reason, count, paths) with at most `limit` paths
    listed in all; a group cut short ends with `… and N more` (every reason is still said)."""
    out, room = [], limit
    for reason, count, paths in groups:
        shown = paths[:room]
        room -= len(shown)
        if len(shown) < count:
            shown = [*shown, f"… and {count - len(shown):,} more"]
        out.append((reason, count, shown))
    return out


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
