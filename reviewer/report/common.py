"""What the reporters share: order, labels, locations, and cleaning text the model wrote.

The model reads attacker-controlled text, so everything it wrote (titles, bodies, the summary,
even paths it named) is untrusted here: terminal escapes and bidirectional-override characters
could rewrite what a reader sees. `clean_text` makes such characters visible instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from reviewer.checks.noise import noise_text
from reviewer.findings import Finding, ReviewResult, Severity, fingerprint, sort_findings
from reviewer.safety.sinks import clean_text, one_line
from reviewer.settings.pricing import no_price_text, rates_text, usd
from reviewer.wording import plural

__all__ = ["clean_text", "one_line"]

# Most severe first: the order of every count table and list.
SEVERITIES: tuple[Severity, ...] = tuple(sorted(Severity, key=lambda s: -s.rank))


def line_range(finding: Finding) -> str:
    if finding.end_line and finding.end_line != finding.line:
        return f"{finding.line}-{finding.end_line}"
    return str(finding.line)


def location(finding: Finding) -> str:
    """`path:line` or `path:line-end`, the form editors and terminals can jump to."""
    return f"{finding.path}:{line_range(finding)}"


def where_inline(finding: Finding) -> str:
    """Where an inline finding sits: on the change, or on lines the diff shows around it."""
    if not finding.on_unchanged_lines:
        return "on a changed line"
    if finding.end_line and finding.end_line != finding.line:
        return "on unchanged lines next to the change"
    return "on an unchanged line next to the change"


def group_by_file(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    """Findings per file; files ordered by their most severe finding, then by path."""
    groups: dict[str, list[Finding]] = {}
    for finding in sort_findings(tuple(findings)):
        groups.setdefault(finding.path, []).append(finding)
    # sort_findings puts each file's most severe finding first.
    return sorted(groups.items(), key=lambda item: (-item[1][0].severity.rank, item[0]))


def counts_text(result: ReviewResult) -> str:
    """The counts as `1 critical, 2 high, 0 medium, 0 low, 3 info`, or `none`."""
    counts = result.counts()
    if not result.findings:
        return "none"
    return ", ".join(f"{counts[s]} {s.value}" for s in SEVERITIES)


def base_lines_text(finding: Finding, base: str) -> str:
    """What a LEFT finding is about, for formats that can only point into the new file:
    `removed line(s) 7-9 of the base version 111111111111`."""
    version = f"the base version {short_rev(base)}" if base else "the base version"
    return f"removed line(s) {line_range(finding)} of {version}"


def stable_fingerprint(finding: Finding) -> str:
    """The finding's line-independent fingerprint; the pipeline sets it, and a finding made
    elsewhere (a test, a library caller) still gets a stable one."""
    return finding.fingerprint or fingerprint(
        finding.path, finding.title, finding.code, finding.category
    )


def short_rev(rev: str) -> str:
    """A full commit id cut to 12 characters; branch names and labels as they are."""
    if len(rev) == 40 and all(c in "0123456789abcdef" for c in rev):
        return rev[:12]
    return rev


def duration_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def cost_text(result: ReviewResult) -> str:
    """`cost $0.0123 (at $2.50 input, ...)`, or why there is no cost and how to give one."""
    cost = result.cost_usd
    if result.price is None or cost is None:
        return no_price_text(result.model if result.price is None else result.verification_model)
    checker = result.verification_price
    if result.verification_usage.requests and checker and checker.model != result.price.model:
        # The verification's tokens at the verify model's own price, said beside it.
        return (
            f"cost {usd(cost)} (at {rates_text(result.price)}; verification by "
            f"{checker.model} at {rates_text(checker)})"
        )
    return f"cost {usd(cost)} (at {rates_text(result.price)})"


def tokens_and_cost_text(result: ReviewResult) -> str:
    """Tokens (cached ones named), requests and cost: what every report shows of the
    review's cost, the pull request's summary comment included."""
    usage = result.usage
    cached = usage.cached_prompt_tokens
    of_them = f", {cached:,} of them cached" if cached else ""
    return (
        f"{usage.total_tokens:,} tokens ({usage.prompt_tokens:,} prompt{of_them} + "
        f"{usage.completion_tokens:,} completion) in {plural(usage.requests, 'request')} · "
        f"{cost_text(result)}"
    )


def usage_text(result: ReviewResult) -> str:
    """One line: tokens and cost, tool calls, turns, time."""
    parts = [
        tokens_and_cost_text(result),
        plural(result.tool_calls, "tool call"),
        plural(result.turns, "turn"),
        duration_text(result.duration_seconds),
    ]
    return " · ".join(parts)


def skipped_files(result: ReviewResult) -> list[tuple[str, str]]:
    return [(f.path, f.reason or "not reviewed") for f in result.files if not f.reviewed]


def incomplete_notice(result: ReviewResult) -> str:
    """One line for formats that carry an incomplete review as an issue of its own."""
    reason = one_line(result.incomplete_reason) or "no reason was recorded"
    skipped = len(skipped_files(result))
    not_reviewed = f" ({plural(skipped, 'changed file')} not reviewed)" if skipped else ""
    return (
        f"The review is incomplete: {reason}. Its findings may be partial{not_reviewed}; "
        "an incomplete review is not a clean one."
    )


def notice_path(result: ReviewResult) -> str:
    """Where a format that needs a file puts a note about the whole review: the first
    changed file, else the repository itself (`.`)."""
    return result.files[0].path if result.files else "."


def skipped_by_reason(result: ReviewResult) -> list[tuple[str, list[str]]]:
    """The files not reviewed, grouped by reason (in the order reasons first appear): when a
    review fails as a whole, ninety files share one long reason, said once."""
    groups: dict[str, list[str]] = {}
    for path, reason in skipped_files(result):
        groups.setdefault(reason, []).append(path)
    return list(groups.items())


def partly_reviewed(result: ReviewResult) -> list[tuple[str, str]]:
    """(path, what was shown) for each file whose diff was cut to fit a request."""
    return [
        (f.path, f"partly reviewed ({f.shown_text}); the rest of its diff did not fit in a "
                 "request")
        for f in result.files
        if f.reviewed and f.partly_reviewed
    ]  # fmt: skip


def noise_line(result: ReviewResult) -> str:
    """What the noise table did, counted; "" if nothing."""
    # Where the discarded ones are is said once, by discarded_text.
    return noise_text((*result.findings, *result.suppressed, *result.discarded))


def suppressed_total(result: ReviewResult) -> int:
    """The findings below the reporting threshold: listed, and those an earlier run found
    that the bot's memory no longer lists one by one."""
    return len(result.suppressed) + result.suppressed_unlisted


def reviewed_count(result: ReviewResult) -> int:
    return sum(1 for f in result.files if f.reviewed)


def files_text(result: ReviewResult) -> str:
    """`12 reviewed (10 by earlier runs, unchanged since; 1 partly: its diff was cut), 2 not
    reviewed`."""
    earlier = sum(1 for f in result.files if f.reviewed and f.earlier)
    partly = len(partly_reviewed(result))
    notes = [f"{earlier:,} by earlier runs, unchanged since"] if earlier else []
    notes += [f"{partly:,} partly: its diff was cut"] if partly else []
    by_earlier = f" ({'; '.join(notes)})" if notes else ""
    skipped = len(skipped_files(result))
    return f"{reviewed_count(result):,} reviewed{by_earlier}, {skipped:,} not reviewed"


def rule_files_lines(
    result: ReviewResult,
    limit: int = 50,
    *,
    name: Callable[[str], str] = str,
    text: Callable[[str], str] = str,
    more_note: str = " (the JSON report has them)",
) -> list[str]:
    """`AGENTS.md: 3 changed files`, a line per rule file used (what was cut after a `;`),
    at most `limit` of them; `name` and `text` make a path and a cut safe for the format."""
    lines = []
    for rule in result.rule_files[:limit]:
        reached = plural(len(rule.applied_to), "changed file")
        lines.append(f"{name(rule.path)}: {reached}{'; ' + text(rule.cut) if rule.cut else ''}")
    if len(result.rule_files) > limit:
        lines.append(f"… and {len(result.rule_files) - limit} more{more_note}")
    return lines


def verification_words(finding: Finding) -> tuple[str, str]:
    """What is known of a finding's truth, for its meta line: ("confidence 0.8 · confirmed",
    the verifier's reason or ""). The reason is the model's (or the endpoint's) text:
    untrusted, for the caller to make safe in its sink."""
    parts = [f"confidence {finding.confidence:.2g}"] if finding.confidence is not None else []
    check = finding.verification
    if check is None:
        return " · ".join(parts), ""
    severity = f", severity was {check.severity_before.value}" if check.severity_before else ""
    parts.append(f"verification: {check.verdict}{severity}")
    return " · ".join(parts), check.reason


def discarded_text(result: ReviewResult) -> str:
    """How many findings were discarded and where they are ('' when none)."""
    if not result.discarded:
        return ""
    return (
        f"{plural(len(result.discarded), 'finding')} discarded by the noise table, "
        "verification or min_confidence (never posted, never counted): the `discarded` list "
        "of the JSON report has each, with why."
    )


def unverified_text(result: ReviewResult) -> tuple[str, str]:
    """How many reported findings verification could not check, and the first reason (the
    endpoint's words, untrusted); ('', '') when none."""
    unverified = result.unverified
    if not unverified:
        return "", ""
    first = unverified[0].verification
    reason = first.reason if first is not None else ""
    return (
        f"{plural(len(unverified), 'finding')} unverified, kept and counted: the check "
        "could not run",
        reason,
    )
