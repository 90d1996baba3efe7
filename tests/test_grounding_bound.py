"""Grounding a quote in a huge file is bounded (issue 32, item 7): a quote is compared with
at most MAX_COMPARED_LINES lines of its file, those around the cited line, and a quote not
found there is not called "nowhere": the finding is kept, its placement note says how far
the quote was looked for, and it is sent to verification. Counted, never timed: the lines
folded for comparison, the base file's reads. A scripted model over real HTTP, a real git
repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reviewer.change import lines as change_lines
from reviewer.checks import grounding
from reviewer.cli.program import main
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.test_noise import changed

LINES = grounding.MAX_COMPARED_LINES + 50_000
HEAD_LINE = "header = 'the first line of the file'\n"
BASE = HEAD_LINE + "pass\n" * (LINES - 1)
CHANGED = BASE[: -len("pass\n")] + "run(input())\n"


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[tuple[Any, ...]]:
    """Every call of `module.name`, by its arguments."""
    calls: list[tuple[Any, ...]] = []
    real: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def finding(title: str, quote: str, **more: Any) -> dict[str, Any]:
    return {"path": "big.py", "line": LINES, "severity": "high", "category": "security",
            "title": title, "body": "`run(input())` runs what the user types.",
            "quote": quote, **more}  # fmt: skip


@pytest.mark.verification
def test_a_quote_not_in_the_lines_compared_is_kept_said_and_verified(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The attacker's input: a huge file, and quotes that are nowhere (or far from the cited
    # line), which cost a pass over every line, six times over, per finding.
    changed(repo, monkeypatch, BASE, CHANGED, "big.py", REVIEWER_VERIFY="critical")
    folded = counting(monkeypatch, grounding, "fold")
    reads = counting(monkeypatch, change_lines, "read_text")
    findings = [
        finding("Command injection", "this line is in no file at all"),
        # In the file, but at line 1, outside the lines compared around the cited one.
        finding("Header quoted far away", HEAD_LINE.strip()),
        # Two findings on the removed line: the base file is read once.
        finding("Removed guard", "pass", side="LEFT"),
        finding("Lost check", "pass", side="LEFT", severity="medium"),
    ]
    verdict = tool_call("submit_verdict", {"verdict": "uncertain", "reason": "Not settled."})
    script = [
        reply(tool_calls=[tool_call("submit_review", {"summary": "R.", "findings": findings})]),
        *[reply(tool_calls=[verdict])] * 2,
    ]
    out = tmp_path / "r.json"
    with FakeLLM(script) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        code = main([*args, "--format", f"json={out}"])
        llm.assert_no_failures()
    report = json.loads(out.read_text())
    assert code == 0 and report["status"] == "complete"
    by_title = {f["title"]: f for f in report["findings"]}
    low, high = grounding.compared_lines(LINES, LINES)
    said = (
        f"its quote was not found in lines {low:,}-{high:,} of the file's {LINES:,} (at most "
        f"{grounding.MAX_COMPARED_LINES:,} lines are compared); the rest was not compared"
    )
    for title in ("Command injection", "Header quoted far away"):
        kept = by_title[title]
        assert kept["placement_note"] == said, kept["placement_note"]
        assert kept["force_verify"] is True
        assert kept["verification"]["verdict"] == "uncertain"  # checked below the floor
    for title in ("Removed guard", "Lost check"):  # at the cited line, in the lines compared
        assert by_title[title]["force_verify"] is False, by_title[title]["placement_note"]
    # Counted: each quote is compared with at most the bound's lines (folded once each,
    # plus the quote's own), never the whole file, let alone six times over.
    compared = len(folded) - sum(len(f["quote"].splitlines()) for f in findings)
    assert compared <= len(findings) * grounding.MAX_COMPARED_LINES
    assert compared >= 2 * grounding.MAX_COMPARED_LINES  # the two bounded searches ran
    # big.py read once at the head and once at the base, whatever the number of findings.
    assert [str(call[1]) for call in reads].count("big.py") == 2


def test_the_lines_compared_are_the_whole_file_or_the_bound_around_the_cited_line() -> None:
    lines = ["x = 1"] * 10
    assert grounding.compared_lines(len(lines), 5) == (1, 10)
    assert grounding.compared_lines(LINES, 1) == (1, grounding.MAX_COMPARED_LINES)
    assert grounding.compared_lines(LINES, LINES) == (
        LINES - grounding.MAX_COMPARED_LINES + 1,
        LINES,
    )
