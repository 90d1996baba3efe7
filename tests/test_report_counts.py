"""Counts survive every cut: whatever the Markdown report, the job summary or the summary
comment (GitHub's and GitLab's) has to leave out to fit its size, it says how many it left
out, for every list: findings, findings below the reporting threshold (those the bot's
memory of earlier runs no longer lists one by one too), fixed, dismissed, discarded and
unverified findings, files not reviewed, partly reviewed, rule files. A property over many
sizes and counts, each case built so that one cut path or another applies."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

import pytest

from reviewer.findings import (
    ClosedFinding,
    FileCoverage,
    Finding,
    ReviewResult,
    RuleFileUse,
    Severity,
    Verification,
)
from reviewer.report.github import summary_comment
from reviewer.report.markdown import render_markdown
from reviewer.report.mdtext import markdown_dialect
from reviewer.safety.redact import Redactor
from reviewer.wording import plural
from tests.test_action import github, pr_repo  # noqa: F401  (fixtures)
from tests.test_action_runs import PullRequest, pr, submit_saying  # noqa: F401

_HEADING = re.compile(r"^#### \d+\. ", re.MULTILINE)


def _finding(n: int, tag: str, rng: random.Random, size: dict[str, int]) -> Finding:
    return Finding(
        path=f"src/{'d' * size['path']}/module_{n}.py",
        line=n + 1,
        severity=list(Severity)[n % 5],
        title=f"{tag} {n} " + "t" * size["title"],
        body="A body of the finding. " * size["body"],
        placement=rng.choice(["summary", "inline"]),
        fingerprint=f"{tag[:1]}{n:015x}",
        code="value = compute(value)\n" * rng.choice([0, 3]),
    )


def _closed(n: int, state: str, size: dict[str, int]) -> ClosedFinding:
    return ClosedFinding(
        fingerprint=f"c{n:015x}",
        severity=list(Severity)[n % 5],
        category="bug",
        path=f"src/{'d' * size['path']}/closed_{n}.py",
        title=f"Closed {n} " + "t" * size["title"],
        state=state,  # type: ignore[arg-type]
        commit="a" * 40 if state == "fixed" else "",
        by="" if state == "fixed" else "maintainer",
        how="" if state == "fixed" else "reply",
        reason="" if state == "fixed" else "Not a problem here. " * size["reason"],
    )


def review(rng: random.Random) -> ReviewResult:
    """A review whose every list is empty, small or far past any size limit."""
    size = {
        "title": rng.choice([0, 60, 990]),
        "body": rng.choice([0, 10, 400]),
        "path": rng.choice([0, 40, 600]),
        "reason": rng.choice([0, 5, 60]),
    }
    # 3,000 findings take seconds a page: test_sinks.py and the memory test below hold that.
    count = rng.choice([0, 1, 50, 600])
    findings = tuple(_finding(n, "Reported", rng, size) for n in range(count))
    suppressed = tuple(
        _finding(n, "Suppressed", rng, size) for n in range(rng.choice([0, 1, 70, 2_950]))
    )
    unverified = Verification("unverified", "the verifier did not answer")
    if findings and rng.random() < 0.3:
        findings = (dataclasses.replace(findings[0], verification=unverified), *findings[1:])
    discarded = tuple(
        dataclasses.replace(_finding(n, "Discarded", rng, size), discard_reason="noise")
        for n in range(rng.choice([0, 3]))
    )
    closed = tuple(
        _closed(n, "fixed", size) for n in range(rng.choice([0, 2, 60, 400]))
    ) + tuple(_closed(n + 10_000, "dismissed", size) for n in range(rng.choice([0, 2, 60, 400])))
    reviewed = tuple(
        FileCoverage(f"src/{'f' * size['path']}/file_{n}.py", "modified", True,
                     partly_reviewed=n % 7 == 0, shown_lines=((1, 40),) if n % 7 == 0 else ())
        for n in range(rng.choice([0, 3, 800]))
    )  # fmt: skip
    skipped = tuple(
        FileCoverage(f"vendor/{'deep/' * rng.choice([1, 60])}pkg_{n}.js", "added", False,
                     rng.choice(["vendored", "generated", "too large"]))
        for n in range(rng.choice([0, 4, 1_000]))
    )  # fmt: skip
    rules = tuple(
        RuleFileUse(f"rules/{'r' * size['path']}/AGENTS_{n}.md", ("src/a.py",))
        for n in range(rng.choice([0, 2, 80]))
    )
    return ReviewResult(
        "complete",
        "The model's summary. " * rng.choice([0, 50, 4_000]),
        findings,
        "m",
        "a" * 40,
        "b" * 40,
        reviewed + skipped,
        suppressed=suppressed,
        closed=closed,
        discarded=discarded,
        rule_files=rules,
        incremental=bool(closed),
        suppressed_unlisted=rng.choice([0, 0, 2_878]),
    )


def missing_counts(text: str, result: ReviewResult) -> list[str]:
    """Every count of `result` that `text` does not say, in one of the product's wordings."""
    said: dict[str, tuple[int, list[str]]] = {}
    total = len(result.findings)
    shown = len(_HEADING.findall(text))
    if shown < total:
        said["findings left out"] = (total, [f"{total - shown:,} of {plural(total, 'finding')}"])
    below = len(result.suppressed) + result.suppressed_unlisted
    said["below the threshold"] = (
        below,
        [f"{below:,} more below the reporting threshold", f"{below:,} below the reporting"],
    )
    fixed, dismissed = len(result.fixed), len(result.dismissed)
    said["fixed"] = (fixed, [f"Fixed ({fixed:,})", f"{plural(fixed, 'finding')} fixed"])
    said["dismissed"] = (
        dismissed,
        [f"Dismissed ({dismissed:,})", f"{plural(dismissed, 'finding')} dismissed"],
    )
    discarded = len(result.discarded)
    said["discarded"] = (discarded, [f"{plural(discarded, 'finding')} discarded"])
    unverified = len(result.unverified)
    said["unverified"] = (unverified, [f"{plural(unverified, 'finding')} unverified"])
    skipped = sum(1 for f in result.files if not f.reviewed)
    said["not reviewed"] = (skipped, [f"Not reviewed ({skipped:,})", f"{skipped:,} not reviewed"])
    reviewed = sum(1 for f in result.files if f.reviewed)
    said["reviewed"] = (reviewed, [f"{reviewed:,} reviewed"])
    partly = sum(1 for f in result.files if f.partly_reviewed)
    said["partly reviewed"] = (partly, [f"Partly reviewed ({partly:,})", f"{partly:,} partly"])
    rules = len(result.rule_files)
    said["rule files"] = (rules, [f"Rule files used ({rules:,})", f"{plural(rules, 'rule file')}"])
    return [
        f"{name} ({count:,})"
        for name, (count, wordings) in said.items()
        if count and not any(wording in text for wording in wordings)
    ]


SIZES = [1_000_000, 40_000, 12_000]


@pytest.mark.parametrize("seed", range(16))
def test_every_cut_keeps_every_count(seed: int) -> None:
    rng = random.Random(seed)
    result = review(rng)
    state = "<!-- reviewer:state " + "x" * rng.choice([10, 8_000]) + " -->"
    # Notes above the report (this run's scope, threads it could not resolve): one past
    # the whole comment's room makes the comment's own last cut apply.
    notes = tuple(
        "A note above the report. " * rng.choice([1, 40, 3_000]) for _ in range(rng.randint(0, 2))
    )
    redact = Redactor({})
    pages: dict[str, str] = {
        f"markdown report, {size:,} bytes": render_markdown(result, max_bytes=size, redact=redact)
        for size in SIZES
    }
    pages["GitHub summary comment"] = summary_comment(
        result, state_line=state, notes=notes, redact=redact
    )
    with markdown_dialect("gitlab"):
        pages["GitLab summary note"] = summary_comment(
            result, state_line=state, notes=notes, redact=redact
        )
    for where, text in pages.items():
        if "summary" in where:  # GitHub's limit; GitLab's (1,000,000) is above it
            assert len(text) <= 65_536, where
        else:
            assert len(text.encode("utf-8")) <= int(where.split()[2].replace(",", "")), where
        missing = missing_counts(text, result)
        assert missing == [], (where, missing, len(text), text[-1_000:])


@pytest.mark.parametrize("dialect", ["github", "gitlab"])
def test_three_thousand_findings_keep_every_count_in_the_summary_comment(dialect: str) -> None:
    """The issue's review: 3,000 findings, 2,950 of them below the threshold (max_findings
    50), 4,000 files, and 400 fixed and 400 dismissed ones with long reasons."""
    from tests.test_reports import _crowded_review

    size = {"title": 300, "body": 0, "path": 100, "reason": 60}
    result = dataclasses.replace(
        _crowded_review(),
        closed=tuple(_closed(n, "fixed", size) for n in range(400))
        + tuple(_closed(n + 1_000, "dismissed", size) for n in range(400)),
        incremental=True,
    )
    with markdown_dialect(dialect):
        body = summary_comment(result, state_line="<!-- reviewer:state " + "x" * 8_000 + " -->")
    assert len(body) <= 65_536
    assert missing_counts(body, result) == []
    assert "2,950 more below the reporting threshold" in body


def test_the_memorys_dropped_findings_below_the_threshold_count_on_every_run() -> None:
    """The bot's memory of a pull request (its summary comment) had no room for 2,878 of the
    2,950 findings below the reporting threshold: later runs still say 2,950, and where the
    ones it no longer lists are."""
    rng = random.Random(7)
    size = {"title": 0, "body": 1, "path": 0, "reason": 0}
    result = ReviewResult(
        "complete",
        "Summary.",
        tuple(_finding(n, "Reported", rng, size) for n in range(50)),
        "m",
        "a" * 40,
        "b" * 40,
        suppressed=tuple(_finding(n, "Suppressed", rng, size) for n in range(72)),
        suppressed_unlisted=2_878,
        incremental=True,
    )
    for text in (render_markdown(result), summary_comment(result, state_line="<!-- s -->")):
        assert "2,950 more below the reporting threshold" in text
        assert "2,878 of them" in text and "no longer" in text


def test_a_later_run_still_says_how_many_are_below_the_threshold(
    pr: PullRequest,  # noqa: F811
) -> None:
    """`reviewer github` twice on one pull request with 50 findings reported and 400 below
    the reporting threshold (max_findings 50): the summary comment's memory has no room for
    most of the 400, yet the second run's comment says 400 as the first did (before, it said
    only the ones the memory still listed, and the rest in a note of their own)."""
    pr.push("many", {"many.py": "".join(f"value_{n} = {n}\n" for n in range(450))})
    findings = [
        {"path": "many.py", "line": n + 1, "severity": ["high", "low"][n >= 50],
         "title": f"Problem {n}: the value is computed from an unchecked input", "body": "Why."}
        for n in range(450)
    ]  # fmt: skip
    for run in (1, 2):
        assert pr.run([submit_saying("Summary.", *findings)]).code == 0, run
        body = pr.summary()
        assert "400 more below the reporting threshold" in body, (run, body[-3_000:])
    state = body.rstrip().rsplit("\n", 1)[-1]
    assert '"xu":' in state and '"xu":0' not in state  # the memory did drop some
    assert "of them, found by earlier runs, are no longer listed one by one" in body
    # The reports the run leaves count them too: the JSON report's listed and unlisted ones,
    # SARIF's total (before, both were written before the memory was read, and said fewer).
    report = json.loads(Path(pr.runs[-1].outputs["report"]).read_text("utf-8"))
    assert report["suppressed_unlisted"] > 0
    assert len(report["suppressed"]) + report["suppressed_unlisted"] == 400
    sarif = json.loads(Path(pr.runs[-1].outputs["sarif"]).read_text("utf-8"))
    assert sarif["runs"][0]["properties"]["reviewer"]["suppressedFindings"] == 400
