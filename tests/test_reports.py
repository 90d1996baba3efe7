"""The reporters: terminal, Markdown, JSON and SARIF, from hand-built ReviewResults.

Each test checks a property a reader or a program relies on (no escape codes without colour,
fences that hold, mentions that do not ping, the JSON contract, SARIF that the official
schema accepts), not just that something was printed.
"""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest
from markdown_it import MarkdownIt

from reviewer import __version__
from reviewer.errors import ReviewerError
from reviewer.findings import (
    FileCoverage,
    Finding,
    LearningUse,
    ModelPrice,
    ReviewResult,
    RuleFileUse,
    Severity,
    Usage,
    sort_findings,
)
from reviewer.report import (
    FORMATS,
    parse_json,
    render,
    render_json,
    render_markdown,
    render_sarif,
    render_terminal,
    write_report,
    write_transcript,
)
from reviewer.report.json_schema import report_schema_text
from reviewer.report.markdown import DEFAULT_MAX_BYTES
from reviewer.report.mdtext import MENTION_BREAK, fence, inline_code, neutralize
from reviewer.report.sarif import FINGERPRINT_KEY, SECURITY_SEVERITY
from tests.conftest import acting_markdown

DATA = Path(__file__).parent / "data"
ANSI = re.compile(r"\x1b")
SHA_BASE = "1" * 40
SHA_HEAD = "2" * 40

NASTY_SUGGESTION = 'doc = """\n```python\nx = 1\n```\n"""\nquote = "`" + "``````"\n'
NASTY_BODY = (
    "Ping @octocat and @acme/security-team, mail me at dev@example.com.\n\n"
    "<!-- everything after this is hidden -->\n"
    "<details><summary>open me</summary>\n\n"
    "Inline `@decorator` and `<b>` stay code. &#64;octocat is an entity.\n\n"
    "```python\n# a fence the model never closes\n@app.route('/')\n"
)


def finding(**overrides: Any) -> Finding:
    base: dict[str, Any] = {
        "path": "src/app.py",
        "line": 10,
        "severity": Severity.MEDIUM,
        "title": "A finding",
        "body": "Something is off here.",
        "fingerprint": "f" * 16,
        "placement": "inline",
        "code": "x = compute()",
    }
    base.update(overrides)
    return Finding(**base)


FINDINGS = (
    finding(
        path="src/db.py",
        line=42,
        end_line=44,
        severity=Severity.CRITICAL,
        category="security",
        title="SQL built from user input",
        body=NASTY_BODY,
        suggestion=NASTY_SUGGESTION,
        fingerprint="aaaa000011112222",
        code='q = "SELECT " + name\ncur.execute(q)\nreturn cur.fetchone()',
    ),
    finding(
        path="src/db.py",
        line=99,
        end_line=101,
        severity=Severity.LOW,
        category="style",
        title="Long lines",
        body="Wrap them.",
        placement="summary",
        placement_note="lines 99-101 reach beyond the diff hunk",
        code="a\nb\nc",
        fingerprint="bbbb000011112222",
    ),
    finding(
        path="lib/auth.py",
        line=7,
        side="LEFT",
        severity=Severity.HIGH,
        category="bug",
        title="Removed the None check",
        body="Callers pass None.",
        code="if user is None:\n    raise ValueError",
        fingerprint="cccc000011112222",
    ),
    finding(
        path="lib/auth.py",
        line=30,
        severity=Severity.MEDIUM,
        category="security",
        title="Token compared with ==",
        body="Use `hmac.compare_digest`.",
        suggestion="return hmac.compare_digest(a, b)\n",
        fingerprint="dddd000011112222",
    ),
    finding(
        path="docs/guide ü.md",
        line=3,
        severity=Severity.INFO,
        category=None,
        title="Ünïcödé title ✓ with \u202eRTL override",
        body="日本語の説明。" * 40,
        placement="summary",
        placement_note="'docs/guide ü.md' is not changed by this review",
        fingerprint="",
        code="",
    ),
    finding(
        path="README.md",
        line=1,
        severity=Severity.HIGH,
        category="docs",
        title="Escape \x1b[31mred\x1b[0m in title",
        body="Body with \x1b]0;pwned\x07 escape.",
        fingerprint="eeee000011112222",
    ),
    finding(
        path="src/app.py",
        line=5,
        severity=Severity.LOW,
        category="performance",
        title="Loop",
        body="Hoist it.",
        suggestion="",
        fingerprint="ffff000011112222",
    ),
)

COMPLETE = ReviewResult(
    status="complete",
    summary="# Verdict\n\nMostly fine, @octocat. <script>alert(1)</script>",
    findings=FINDINGS,
    model="gpt-test",
    base=SHA_BASE,
    head=SHA_HEAD,
    files=(
        FileCoverage("src/db.py", "modified", True),
        FileCoverage("lib/auth.py", "modified", True),
        FileCoverage("src/app.py", "added", True),
        FileCoverage("README.md", "modified", True),
        FileCoverage("package-lock.json", "modified", False, "generated file"),
        FileCoverage("assets/logo.png", "added", False, "binary file"),
    ),
    usage=Usage(
        prompt_tokens=12_345, completion_tokens=2_345, requests=7, cached_prompt_tokens=10_000
    ),
    price=ModelPrice("gpt-test", 2.0, 0.5, 8.0, "the settings"),
    duration_seconds=83.4567,
    tool_calls=12,
    turns=8,
    suppressed=(finding(path="src/app.py", line=9, severity=Severity.INFO, title="Nit"),),
    rule_files=(
        RuleFileUse("AGENTS.md", ("lib/auth.py", "src/app.py", "src/db.py")),
        RuleFileUse(
            "src/AGENTS.md",
            ("src/app.py",),
            "cut to 11,990 of 20,000 characters (at most 12,000 per rule file)",
        ),
    ),
    learnings=(
        LearningUse(
            "L1", "src/**", "Queries go through db.run, which binds parameters.", 3,
            applied_to=("src/app.py", "src/db.py"), verifications=1,
            relied_on=("aaaa000011112222",),
        ),
        LearningUse("L2", "", "Logging uses structlog.", 4, cut="cut to 1,000 of 1,200 characters"),
    ),
    learnings_notes=("1 more learning left out (at most 100 are read)",),
)  # fmt: skip
INCOMPLETE = dataclasses.replace(
    COMPLETE,
    status="incomplete",
    incomplete_reason="the budget of 8 turns was spent before submit_review",
    findings=FINDINGS[:2],
)
CLEAN = ReviewResult(
    status="complete", summary="Nothing to report.", findings=(), model="m", base="main",
    head="working tree", files=(FileCoverage("a.py", "modified", True),),
)  # fmt: skip
EMPTY_INCOMPLETE = dataclasses.replace(
    CLEAN, status="incomplete", incomplete_reason="model unreachable", summary=""
)
RESULTS = {
    "complete": COMPLETE,
    "incomplete": INCOMPLETE,
    "clean": CLEAN,
    "empty-incomplete": EMPTY_INCOMPLETE,
}


def fence_state_at(markdown: str, marker: str) -> bool:
    """Whether the first line equal to `marker` is inside a code fence (CommonMark rules)."""
    open_marks = ""
    for line in markdown.split("\n"):
        if open_marks:
            stripped = line.strip()
            if set(stripped) == {open_marks[0]} and len(stripped) >= len(open_marks):
                open_marks = ""
            continue
        if line == marker:
            return False
        match = re.match(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})", line)
        if match:
            open_marks = match.group(1)
    return True  # not found outside a fence


# --- the common interface ------------------------------------------------------------


def test_registry_names_every_format() -> None:
    assert set(FORMATS) == {"terminal", "markdown", "json", "sarif", "rdjson", "codequality"}


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("case", sorted(RESULTS))
def test_every_format_renders_every_result(name: str, case: str) -> None:
    text = render(RESULTS[case], name)
    assert text.endswith("\n") and text.strip()
    assert text == render(RESULTS[case], name), "rendering is deterministic"


def test_render_passes_only_the_options_a_format_takes() -> None:
    assert render(COMPLETE, "json", color=True, width=80) == render_json(COMPLETE)
    assert render(COMPLETE, "terminal", color=True, max_bytes=5) == render_terminal(
        COMPLETE, color=True
    )
    with pytest.raises(ReviewerError, match="unknown report format 'html'"):
        render(COMPLETE, "html")


def test_write_report_to_a_new_folder_and_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "reports" / "deep" / "review.sarif"
    write_report(COMPLETE, "sarif", target, color=True)
    assert target.read_text(encoding="utf-8") == render_sarif(COMPLETE)
    assert [p.name for p in target.parent.iterdir()] == ["review.sarif"], "no temp file left"
    write_report(COMPLETE, "markdown", "-")
    assert capsys.readouterr().out == render_markdown(COMPLETE)


def test_write_report_failure_is_a_reviewer_error(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(ReviewerError, match="cannot write the report"):
        write_report(COMPLETE, "json", tmp_path / "taken")


def test_write_transcript_is_json_lines(tmp_path: Path) -> None:
    entries = [{"type": "assistant", "message": {"content": "hé"}}, {"type": "tool_result"}]
    write_transcript(entries, tmp_path / "t.jsonl")
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == entries


# --- terminal ------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(RESULTS))
def test_terminal_has_no_escape_codes_without_colour(case: str) -> None:
    # The model's own escape sequences (in FINDINGS) are shown as markers, not sent.
    assert not ANSI.search(render_terminal(RESULTS[case]))


def test_terminal_colour_styles_but_never_passes_the_models_escapes() -> None:
    text = render_terminal(COMPLETE, color=True)
    assert "\x1b[" in text
    assert "\x1b]0;pwned" not in text and "\x1b[31mred" not in text
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert plain == render_terminal(COMPLETE), "colour only wraps the same text"


def test_terminal_groups_by_file_most_severe_file_first() -> None:
    text = render_terminal(COMPLETE)
    headers = re.findall(r"^── (.+?) \(\d+ findings?\)", text, flags=re.MULTILINE)
    # db.py has the critical; README.md and lib/auth.py both top out at high (path order).
    assert headers == ["src/db.py", "README.md", "lib/auth.py", "src/app.py", "docs/guide ü.md"]
    db = text.index("── src/db.py")
    assert (
        db
        < text.index("src/db.py:42-44")
        < text.index("src/db.py:99-101")
        < text.index("── README.md")
    )


def test_terminal_header_states_the_verdict_first() -> None:
    text = render_terminal(INCOMPLETE)
    first_finding = text.index("── ")
    assert text.index("REVIEW INCOMPLETE") < first_finding
    assert text.index("the budget of 8 turns was spent") < first_finding
    assert "Findings: 2 (1 critical, 0 high, 0 medium, 1 low, 0 info)" in text
    assert "Files:    4 reviewed, 2 not reviewed" in text
    complete = render_terminal(COMPLETE)
    assert "Status:   complete" in complete and "INCOMPLETE" not in complete
    assert "1 more below the reporting threshold" in complete


def test_terminal_clean_and_empty_incomplete_are_told_apart() -> None:
    assert "No findings." in render_terminal(CLEAN)
    text = render_terminal(EMPTY_INCOMPLETE)
    assert "not a clean result" in text and "No findings." not in text


def test_terminal_finding_details() -> None:
    text = render_terminal(COMPLETE)
    assert '    42 | q = "SELECT " + name\n    43 | cur.execute(q)\n    44 | return' in text
    assert "     99 | a\n    100 | b\n    101 | c" in text, "numbers right-aligned"
    assert "style · summary only · lines 99-101 reach beyond the diff hunk" in text
    assert "bug · removed lines (base version) · on a changed line" in text
    assert "inline comment" not in text  # a local report has no comments
    assert 'Suggested replacement for line(s) 42-44:\n    + doc = """\n    + ```python' in text
    assert "Suggested replacement for line(s) 5:\n    (delete these lines)" in text
    assert "<U+202E>RTL override" in text and "\u202e" not in text
    assert "package-lock.json: generated file" in text
    assert (
        "14,690 tokens (12,345 prompt, 10,000 of them cached + 2,345 completion) in 7 requests"
        " · cost $0.0284 (at $2.00 input, $0.50 cached, $8.00 output per million tokens)"
    ) in " ".join(text.split())
    assert "12 tool calls · 8 turns · 1m 23s" in text
    assert "# Verdict" not in text and "  Verdict" in text, "Markdown shown as text"


@pytest.mark.parametrize("fmt", ["sarif", "rdjson", "codequality"])
def test_the_formats_another_tool_displays_show_invisible_characters(fmt: str) -> None:
    """GitHub's code scanning shows a SARIF result's message, reviewdog posts rdjson's as a
    comment, GitLab's widget shows Code Quality's description: people read them, so a bidi
    override in a title is shown as `<U+202E>` there too (Trojan source, CVE-2021-42574).
    The JSON report is data and keeps the text exact. (rdjson and Code Quality are Markdown,
    where `<` is written `&lt;`.)"""
    text = render(COMPLETE, fmt)
    assert "\u202e" not in text
    assert "<U+202E>RTL override" in text.replace("&lt;", "<").replace("&gt;", ">")
    assert "\u202e" in render(COMPLETE, "json") or "\\u202e" in render(COMPLETE, "json")


def display_width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@pytest.mark.parametrize("width", [60, 100, 140])
def test_terminal_wraps_to_the_width(width: int) -> None:
    words = "word " * 200
    result = dataclasses.replace(
        COMPLETE,
        summary=f"{words}\n\n- {words}\n1. {words}\n\n" + "日本語の説明。" * 100,
        findings=(
            finding(title="t " * 80, body=words, code="y = 1 " * 60, suggestion="z " * 90),
            finding(title="長い" * 50, body="x" * 500, code="漢字" * 100, line=99),
        ),
    )
    text = render_terminal(result, width=width)
    assert max(display_width(line) for line in text.splitlines()) <= width
    assert "x" * (width - 10) in text, "a long word is split, not dropped"


def test_terminal_keeps_urls_and_paths_whole() -> None:
    url = "https://example.com/" + "a" * 150
    result = dataclasses.replace(CLEAN, summary=f"See {url} for more.")
    assert url in render_terminal(result, width=60)


# --- Markdown ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    ["", "plain", "```", "a ```` b", "`", "``````\n```\n", "~~~\n```py\n", "x\n"],
)
def test_fence_is_longer_than_any_backtick_run_inside(content: str) -> None:
    block = fence(content, "suggestion")
    opening, *inner, closing = block.split("\n")
    marks = opening.removesuffix("suggestion")
    assert set(marks) == {"`"} and closing == marks
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    assert len(marks) == max(3, longest + 1)
    assert "\n".join(inner) == content.removesuffix("\n"), "content unchanged"


def test_inline_code_survives_backticks() -> None:
    assert inline_code("a`b") == "``a`b``"
    assert inline_code("`x`") == "`` `x` ``"


def test_markdown_fences_hold_the_suggestion_and_code() -> None:
    text = render_markdown(COMPLETE)
    expected = fence(NASTY_SUGGESTION, "python")
    assert expected in text and expected.startswith("```````python\n")
    assert fence(FINDINGS[0].code, "python") in text
    assert "Suggested change: delete line(s) 5." in text


def test_markdown_neutralizes_mentions_and_html() -> None:
    text = render_markdown(COMPLETE)
    assert not re.search(r"(?<![\w`])@(octocat|acme/)", text), "a live mention is left"
    assert f"@{MENTION_BREAK}octocat" in text and f"@{MENTION_BREAK}acme/security-team" in text
    assert "dev@example.com" in text, "an e-mail address is not a mention"
    assert "`@decorator`" in text and "`<b>`" in text, "inline code is left as written"
    assert "<!--" not in text and "<script>" not in text and "<details><summary>open" not in text
    # The character reference is decoded by the parser, and what it spells is made inert.
    assert "&lt;!--" in text and "&#64;octocat" not in text


@pytest.mark.parametrize(
    ("attack", "live"),
    [
        ("`x\n<!-- a comment interrupts the paragraph `", "<!--"),
        ("\\`@octocat` (an escaped backtick opens no code span)", "@octocat"),
        ("_@octocat_ in emphasis", "@octocat"),
        ("x.@octocat after punctuation", "@octocat"),
        ("<details><summary>fold the rest", "<details>"),
        ("</details> closes the report's own", "</details>"),
        ("&#60;!-- by a character reference", "&#60;"),
    ],
)
def test_neutralize_resists_bypasses(attack: str, live: str) -> None:
    assert live not in neutralize(attack)


def last_block(markdown: str) -> str:
    tokens = MarkdownIt("commonmark").parse(markdown)
    return tokens[-3].type if len(tokens) >= 3 else ""


@pytest.mark.parametrize(
    "attack",
    [
        "- item\n  ```\n<!-- the list ends, so does its fence\n  ```",
        "- ```\n  x\n  ```\n<!-- after a fence opened on the item's line",
        "  ```\n  x\n```\n<!-- after an indented top-level fence",
        "> ```\n> <!-- in a quote",
        "1. ~~~\n<!-- after a tilde fence in an ordered item",
        "a `span that\ncrosses a line` @octocat <img src=x>",
        "| a | b |\n|---|---|\n| `x | @org/team <details> |\n| y` | z |",
        "```\nnever closed <!--",
    ],
)
def test_neutralize_fences_inside_containers(attack: str) -> None:
    out = neutralize(attack + "\n\n@octocat <b>")
    assert acting_markdown(out) == []
    # Nothing is left open: a heading after it is a heading.
    assert last_block(out + "\n\n### next section") == "heading_open"


def test_neutralize_leaves_code_as_written() -> None:
    text = "Use `<T>` and ``a ` @b``.\n\n```\n<!-- @c -->\n```"
    assert neutralize(text) == text
    assert neutralize("mail dev@example.com") == "mail dev@example.com"


def test_markdown_closes_a_fence_the_model_left_open() -> None:
    text = render_markdown(COMPLETE)
    for marker in (
        "### Findings",
        "### Files",
        "#### 2. 🟠 High `README.md:1`: Escape \ufffd\\[31mred\ufffd\\[0m in title",
    ):
        assert not fence_state_at(text, marker), marker
    # Inside the model's fence, the code is left alone.
    assert "@app.route('/')" in text


def test_neutralize_raises_the_models_headings() -> None:
    assert neutralize("# Big\n```\n# not a heading\n```", min_heading=4) == (
        "#### Big\n\n```\n# not a heading\n```"
    )


def test_markdown_incomplete_banner_counts_and_order() -> None:
    text = render_markdown(INCOMPLETE)
    assert text.startswith("## ⚠️ AI review: review incomplete\n")
    assert "> [!WARNING]\n> **This review is incomplete:** the budget of 8 turns" in text
    assert "| 1 | 0 | 0 | 1 | 0 | 2 |" in text
    complete = render_markdown(COMPLETE)
    assert "[!WARNING]" not in complete
    assert complete.startswith("## 🔴 AI review: 7 findings, highest critical\n")
    titles = re.findall(r"^#### \d+\. \S+ (\w+)", complete, flags=re.MULTILINE)
    ranks = [Severity(t.lower()).rank for t in titles]
    assert ranks == sorted(ranks, reverse=True) and len(ranks) == 7
    assert "#### Verdict" in complete, "the model's heading sits below the page's"
    assert "- `package-lock.json`: generated file" in complete
    assert "1 more below the reporting threshold" in complete


def test_markdown_clean_review() -> None:
    text = render_markdown(CLEAN)
    assert text.startswith("## ✅ AI review: no findings")
    assert "No findings." in text
    assert "not a clean result" in render_markdown(EMPTY_INCOMPLETE)


def test_markdown_default_cap_is_githubs_step_summary_limit() -> None:
    assert DEFAULT_MAX_BYTES == 1_000_000 < 1024 * 1024


def test_markdown_size_cap_keeps_the_most_severe_findings() -> None:
    many = tuple(
        finding(
            path=f"src/f{i:04}.py",
            line=i + 1,
            title=f"Finding {i}",
            body="Ünï " * 1500,
            severity=list(Severity)[i % 5],
        )
        for i in range(1000)
    )
    big = dataclasses.replace(COMPLETE, findings=many, summary="s " * 10_000)
    text = render_markdown(big)
    assert len(text.encode("utf-8")) <= DEFAULT_MAX_BYTES
    # Long texts are cut before any finding is left out, and the page says so.
    assert len(re.findall(r"^#### \d+\. ", text, flags=re.MULTILINE)) == 1000
    assert "cut to fit the size limit: the JSON report has the whole text" in text
    assert not fence_state_at(text, "### Files")
    small = render_markdown(big, max_bytes=50_000)
    assert len(small.encode("utf-8")) <= 50_000 and "### Files" in small
    assert "This report was cut to stay under 50,000 bytes" in small
    assert "The JSON report has all of them." in small
    shown = re.findall(r"^#### \d+\. \S+ (\w+)", small, flags=re.MULTILINE)
    assert 0 < len(shown) < 1000 and shown[0] == "Critical"


def test_summary_only_findings_outlast_inline_ones_and_the_summary() -> None:
    def many(inline: bool, start: int) -> list[Finding]:
        return [
            finding(
                path=f"src/{'in' if inline else 'out'}{i}.py",
                line=i + 1,
                title=f"{'Inline' if inline else 'Summary-only'} {i}",
                body="word " * 400,
                severity=Severity.HIGH,
                placement="inline" if inline else "summary",
            )
            for i in range(start, start + 60)
        ]

    big = dataclasses.replace(
        COMPLETE,
        findings=(*many(True, 0), *many(False, 100)),
        summary="long summary " * 20_000,
        suppressed=COMPLETE.findings,
    )
    text = render_markdown(big, max_bytes=40_000, full_list="See the job summary.")
    assert len(text.encode("utf-8")) <= 40_000
    assert all(f"Summary-only {i}" in text for i in range(100, 160))
    assert "summary cut to fit the size limit" in text
    assert "have an inline comment on the pull request" in text and "See the job summary." in text
    assert f"_{len(COMPLETE.findings)} more below the reporting threshold" in text


def test_markdown_size_cap_cuts_a_huge_summary_last() -> None:
    result = dataclasses.replace(CLEAN, summary="Ä" * 3_000_000)
    text = render_markdown(result, max_bytes=100_000)
    assert len(text.encode("utf-8")) <= 100_000
    assert "summary cut to fit the size limit" in text and "### Files" in text


def test_markdown_size_cap_with_thousands_of_skipped_files() -> None:
    skipped = tuple(
        FileCoverage(f"vendor/pkg{i:05}/module.js", "added", False, "vendored: " + "x" * 60)
        for i in range(40_000)
    )
    result = dataclasses.replace(COMPLETE, files=skipped)
    text = render_markdown(result)
    assert len(text.encode("utf-8")) <= DEFAULT_MAX_BYTES
    assert "and 39,800 more" in text and "#### 1. 🔴 Critical" in text


UNREACHABLE = (
    "did not finish: the model failed: cannot reach the model endpoint at "
    "http://127.0.0.1:9/v1: [Errno 111] Connection refused; start the server or check "
    "OPENAI_BASE_URL"
)


def test_files_not_reviewed_for_one_reason_are_listed_under_it_once() -> None:
    failed = [f"src/pkg{n // 10}/mod{n}.py" for n in range(95)]
    files = (
        *(FileCoverage(path, "added", False, UNREACHABLE) for path in failed),
        FileCoverage("package-lock.json", "modified", False, "lock file"),
    )
    result = dataclasses.replace(INCOMPLETE, files=files)
    terminal = render_terminal(result).split("Not reviewed (96)", 1)[1]
    terminal = terminal.split("Rule files used", 1)[0]
    assert terminal.count("Connection refused") == 1
    assert "(95 files):" in terminal and "  package-lock.json: lock file" in terminal
    assert all(f"\n    {path}\n" in terminal for path in failed)
    assert len(terminal.splitlines()) < 95 + 12  # a line a file, the reason once
    markdown = render_markdown(result).split("### Files", 1)[1]
    assert markdown.count("Connection refused") == 1
    assert "**Not reviewed (96):**" in markdown and "(95 files):" in markdown
    assert all(f"\n  - `{path}`\n" in markdown for path in failed)
    assert "- `package-lock.json`: lock file" in markdown
    # The JSON report keeps one reason per file (its contract).
    reasons = {f["path"]: f["reason"] for f in json.loads(render_json(result))["files"]}
    assert all(reasons[path] == UNREACHABLE for path in failed)


def test_every_readable_report_lists_the_rule_files_used() -> None:
    terminal = render_terminal(COMPLETE, width=200)
    section = terminal.split("Rule files used (2)\n", 1)[1]
    assert section.splitlines()[1:3] == [
        "  AGENTS.md: 3 changed files",
        "  src/AGENTS.md: 1 changed file; cut to 11,990 of 20,000 characters (at most 12,000 "
        "per rule file)",
    ]
    markdown = render_markdown(COMPLETE)
    assert "**Rule files used (2),** read at the base revision:" in markdown
    assert "- `AGENTS.md`: 3 changed files\n" in markdown
    assert "- `src/AGENTS.md`: 1 changed file; cut to 11,990 of 20,000 characters" in markdown
    assert "Rule files" not in render_terminal(CLEAN) + render_markdown(CLEAN)
    doc = json.loads(render_json(COMPLETE))
    assert doc["rule_files"][1] == {
        "path": "src/AGENTS.md",
        "applied_to": ["src/app.py"],
        "cut": "cut to 11,990 of 20,000 characters (at most 12,000 per rule file)",
    }
    assert parse_json(render_json(COMPLETE)).rule_files == COMPLETE.rule_files


def test_markdown_template_ships_inside_the_package() -> None:
    template = files("reviewer.report").joinpath("templates/review.md.j2")
    assert template.is_file()


# --- JSON ----------------------------------------------------------------------------

TOP_KEYS = {
    "format", "version", "reviewer_version", "status", "incomplete_reason", "summary",
    "findings", "suppressed", "counts", "highest_severity", "model", "base", "head", "files",
    "usage", "duration_seconds", "tool_calls", "turns", "rule_files", "cost", "fixed",
    "dismissed", "states", "discarded", "noise", "context", "learnings", "learnings_notes",
    "learning_proposals", "suppressed_unlisted",
}  # fmt: skip
CLOSED_KEYS = {"fingerprint", "path", "severity", "category", "title", "rule"}
FINDING_KEYS = {
    "path", "line", "end_line", "side", "severity", "category", "title", "body", "suggestion",
    "fingerprint", "inline", "placement_note", "on_unchanged_lines", "code", "earlier",
    "suggestion_dropped", "merged_from", "noise", "noise_action", "noise_note", "force_verify",
    "confidence", "verification", "ticket", "ticket_quote",
}  # fmt: skip
VERIFICATION_KEYS = {"verdict", "reason", "tool_calls", "severity_before", "learning"}
FILE_KEYS = {
    "path", "status", "reviewed", "reason", "earlier", "partly_reviewed", "shown_lines"
}  # fmt: skip
USAGE_KEYS = {
    "prompt_tokens", "completion_tokens", "total_tokens", "requests", "cached_prompt_tokens",
    "replies_read_from_text",
}  # fmt: skip
COUNT_KEYS = {"critical", "high", "medium", "low", "info"}
RULE_FILE_KEYS = {"path", "applied_to", "cut"}
TICKET_KEYS = {"key", "url", "title", "status", "read", "why", "cut"}
LEARNING_KEYS = {"id", "scope", "text", "line", "cut", "applied_to", "verifications", "relied_on"}
PROPOSAL_KEYS = {"line", "file", "fingerprint", "path", "title", "by", "how", "reason"}


def test_json_contract_key_sets_are_pinned() -> None:
    doc = json.loads(render_json(COMPLETE))
    assert set(doc) == TOP_KEYS
    assert doc["format"] == "reviewer-report" and doc["version"] == 1
    assert all(set(f) == FINDING_KEYS for f in doc["findings"] + doc["suppressed"])
    assert all(set(f) == FILE_KEYS for f in doc["files"])
    assert set(doc["usage"]) == USAGE_KEYS and set(doc["counts"]) == COUNT_KEYS
    assert doc["rule_files"] and all(set(r) == RULE_FILE_KEYS for r in doc["rule_files"])
    assert doc["learnings"] and all(set(r) == LEARNING_KEYS for r in doc["learnings"])


def test_json_context_tickets_and_intent_findings_round_trip(
    report_validator: jsonschema.Validator,
) -> None:
    """`context.tickets` names every ticket the change names, read or why not; an intent
    finding carries the ticket's words it relies on. Both read back, and the document is
    valid against the shipped schema; a report without `context` (version 1 before it) is
    still read."""
    from dataclasses import replace

    from reviewer.findings import TicketUse

    tickets = (
        TicketUse("PAY-42", "https://jira.test/browse/PAY-42", "Refunds", "In Progress", True,
                  cut="300,000 characters, the first 4,000 shown"),
        TicketUse("#12", "https://github.com/acme/shop/issues/12",
                  why="GitHub could not find it (404)"),
    )  # fmt: skip
    intent = replace(FINDINGS[0], category="intent", ticket="PAY-42",
                     ticket_quote="A refund never exceeds the charge.")  # fmt: skip
    result = replace(COMPLETE, findings=(intent, *FINDINGS[1:]), tickets=tickets)
    doc = json.loads(render_json(result))
    report_validator.validate(doc)
    assert [set(t) for t in doc["context"]["tickets"]] == [TICKET_KEYS, TICKET_KEYS]
    assert doc["context"]["tickets"][1]["why"] == "GitHub could not find it (404)"
    shown = next(f for f in doc["findings"] if f["category"] == "intent")
    assert shown["ticket_quote"] == "A refund never exceeds the charge."
    back = parse_json(render_json(result))
    assert back.tickets == tickets and intent in back.findings
    del doc["context"]
    assert parse_json(json.dumps(doc)).tickets == ()


def test_json_discarded_and_verification_round_trip() -> None:
    from dataclasses import replace

    from reviewer.findings import Verification

    kept = replace(
        FINDINGS[0],
        confidence=0.8,
        verification=Verification("uncertain", "Callers may check.", 2, Severity.HIGH),
    )
    refuted = replace(
        FINDINGS[1],
        verification=Verification("refuted", "A guard at line 3.", 1),
        discard_reason="refuted by verification: A guard at line 3.",
    )
    result = replace(COMPLETE, findings=(kept, *FINDINGS[1:]), discarded=(refuted,))
    doc = json.loads(render_json(result))
    (discarded,) = doc["discarded"]
    assert set(discarded) == FINDING_KEYS | {"reason"}
    assert set(discarded["verification"]) == VERIFICATION_KEYS
    assert discarded["verification"]["verdict"] == "refuted"
    shown = next(f for f in doc["findings"] if f["fingerprint"] == kept.fingerprint)
    assert shown["confidence"] == 0.8 and shown["verification"]["severity_before"] == "high"
    back = parse_json(render_json(result))
    assert back.discarded == (refuted,) and kept in back.findings


def test_json_fixed_dismissed_and_states_round_trip() -> None:
    from dataclasses import replace

    from reviewer.findings import ClosedFinding

    fixed = ClosedFinding(
        "a" * 16, Severity.HIGH, "bug", "src/a.py", "Off by one", "fixed", "c" * 40
    )
    dismissed = ClosedFinding(
        "b" * 16, Severity.CRITICAL, "security", "src/b.py", "SQL injection", "dismissed",
        by="carol", how="reacted 👎",
    )  # fmt: skip
    result = replace(COMPLETE, closed=(fixed, dismissed))
    doc = json.loads(render_json(result))
    assert set(doc["fixed"][0]) == CLOSED_KEYS | {"commit"}
    assert set(doc["dismissed"][0]) == CLOSED_KEYS | {"by", "how", "reason"}
    assert doc["dismissed"][0]["rule"] == "security/critical"
    assert doc["states"]["b" * 16] == {
        "state": "dismissed", "rule": "security/critical", "severity": "critical",
        "how": "reacted 👎",
    }  # fmt: skip
    assert doc["states"]["a" * 16]["state"] == "fixed"
    for f in result.findings:
        assert doc["states"][f.fingerprint]["state"] == ("open" if f.earlier else "new")
    assert set(parse_json(render_json(result)).closed) == {fixed, dismissed}
    # A 👎 gives no reason: nothing to propose.
    assert doc["learning_proposals"] == []


def test_json_proposes_a_learning_for_a_dismissal_with_a_reason() -> None:
    from dataclasses import replace

    from reviewer.findings import ClosedFinding

    said = ClosedFinding(
        "b" * 16, Severity.HIGH, "bug", "src/pay/refund.py", "Amount may be negative",
        "dismissed", by="carol", how="replied “won't fix”",
        reason="the amount is validated upstream, key ghp_" + "A1b2" * 9,
    )  # fmt: skip
    ignored = replace(said, fingerprint="c" * 16, by="entry 1", how="ignore file", reason="x")
    doc = json.loads(render(replace(COMPLETE, closed=(said, ignored)), "json"))
    (proposal,) = doc["learning_proposals"]
    assert set(proposal) == PROPOSAL_KEYS
    assert proposal["line"] == (
        "- `src/pay/refund.py`: the amount is validated upstream, key [REDACTED]"
    )
    assert (proposal["file"], proposal["by"], proposal["path"]) == (
        ".reviewer/learnings.md", "carol", "src/pay/refund.py")  # fmt: skip
    assert proposal["fingerprint"] == "b" * 16 and "[REDACTED]" in proposal["reason"]


def test_json_values() -> None:
    doc = json.loads(render_json(COMPLETE))
    assert doc["status"] == "complete" and doc["incomplete_reason"] == ""
    assert doc["highest_severity"] == "critical" and doc["reviewer_version"] == __version__
    assert doc["counts"] == {"critical": 1, "high": 2, "medium": 1, "low": 2, "info": 1}
    assert doc["usage"] == {
        "prompt_tokens": 12_345, "completion_tokens": 2_345, "total_tokens": 14_690, "requests": 7,
        "cached_prompt_tokens": 10_000, "replies_read_from_text": 0,
    }  # fmt: skip
    # 2,345 uncached prompt tokens at $2, 10,000 cached at $0.50, 2,345 completion at $8.
    assert doc["cost"]["usd"] == round((2_345 * 2.0 + 10_000 * 0.5 + 2_345 * 8.0) / 1e6, 6)
    assert doc["cost"]["price"]["source"] == "the settings" and doc["cost"]["note"] == ""
    no_price = json.loads(render_json(CLEAN))["cost"]
    assert no_price["usd"] is None and no_price["price"] is None
    assert no_price["note"] == "tokens only: no price is known for 'm' (set [prices.\"m\"])"
    assert doc["duration_seconds"] == 83.457
    assert [f["fingerprint"] for f in doc["findings"]][:1] == ["aaaa000011112222"]
    left = next(f for f in doc["findings"] if f["side"] == "LEFT")
    assert left["line"] == 7 and left["end_line"] is None and left["inline"] is True
    summary_only = next(f for f in doc["findings"] if f["line"] == 99)
    assert (
        summary_only["inline"] is False and "beyond the diff hunk" in summary_only["placement_note"]
    )
    clean = json.loads(render_json(CLEAN))
    assert clean["highest_severity"] is None and clean["findings"] == []
    incomplete = json.loads(render_json(INCOMPLETE))
    assert incomplete["status"] == "incomplete" and "budget" in incomplete["incomplete_reason"]


def test_json_keys_are_sorted_and_text_is_unicode() -> None:
    text = render_json(COMPLETE)
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert "日本語" in text


@pytest.fixture(scope="module")
def report_validator() -> jsonschema.Validator:
    schema_file = files("reviewer.report").joinpath("schema/report-v1.json")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_json_schema_file_matches_the_models() -> None:
    shipped = files("reviewer.report").joinpath("schema/report-v1.json").read_text("utf-8")
    assert shipped == report_schema_text(), (
        "the report models changed: regenerate reviewer/report/schema/report-v1.json from "
        "reviewer.report.json_schema.report_schema_text(), and bump VERSION if not compatible"
    )


@pytest.mark.parametrize("case", sorted(RESULTS))
def test_json_reports_are_schema_valid(case: str, report_validator: jsonschema.Validator) -> None:
    report_validator.validate(json.loads(render_json(RESULTS[case])))


def test_json_schema_rejects_a_broken_report(report_validator: jsonschema.Validator) -> None:
    doc = json.loads(render_json(COMPLETE))
    doc["findings"][0]["severity"] = "blocker"
    doc["extra"] = 1
    assert len(list(report_validator.iter_errors(doc))) == 2


@pytest.mark.parametrize("case", sorted(RESULTS))
def test_json_round_trips(case: str) -> None:
    result = RESULTS[case]
    text = render_json(result)
    back = parse_json(text)
    expected = dataclasses.replace(
        result,
        findings=tuple(sort_findings(result.findings)),
        suppressed=tuple(sort_findings(result.suppressed)),
        duration_seconds=round(result.duration_seconds, 3),
    )
    assert back == expected
    assert render_json(back) == text


def test_json_parse_refuses_other_versions_and_unknown_keys() -> None:
    doc = json.loads(render_json(CLEAN))
    with pytest.raises(pydantic.ValidationError):
        parse_json(json.dumps({**doc, "version": 2}))
    with pytest.raises(pydantic.ValidationError):
        parse_json(json.dumps({**doc, "surprise": True}))


# --- SARIF ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_schema() -> dict[str, Any]:
    return json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sarif_validator(sarif_schema: dict[str, Any]) -> jsonschema.Validator:
    # validator_for honours the schema's own $schema (draft 2020-12). No check_schema: the
    # upstream file has a `(?i)` pattern Python's re refuses (see tests/data/README.md).
    return jsonschema.validators.validator_for(sarif_schema)(sarif_schema)


def sarif_run(result: ReviewResult) -> dict[str, Any]:
    log = json.loads(render_sarif(result))
    (run,) = log["runs"]
    return run


@pytest.mark.parametrize("case", sorted(RESULTS))
def test_sarif_is_valid_against_the_official_schema(
    case: str, sarif_validator: jsonschema.Validator
) -> None:
    log = json.loads(render_sarif(RESULTS[case]))
    errors = [e.message for e in sarif_validator.iter_errors(log)]
    assert errors == []


def test_the_sarif_schema_does_catch_mistakes(sarif_validator: jsonschema.Validator) -> None:
    log = json.loads(render_sarif(COMPLETE))
    log["runs"][0]["results"][0]["level"] = "fatal"
    del log["runs"][0]["invocations"][0]["executionSuccessful"]
    log["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"] = {"startLine": 0}
    assert len(list(sarif_validator.iter_errors(log))) == 3


def test_sarif_log_and_driver(sarif_schema: dict[str, Any]) -> None:
    log = json.loads(render_sarif(COMPLETE))
    assert log["$schema"] == sarif_schema["$id"] and log["version"] == "2.1.0"
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "reviewer" and driver["version"] == __version__
    assert "informationUri" not in driver  # no known public page; never another project's
    linked = json.loads(render_sarif(COMPLETE, information_uri="https://example.com/reviewer"))
    assert linked["runs"][0]["tool"]["driver"]["informationUri"] == "https://example.com/reviewer"
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert all(rule["help"]["text"] and rule["help"]["markdown"] for rule in rules.values())
    assert set(rules) == {
        "security/critical", "security/medium", "style", "bug", "review", "docs", "performance"
    }  # fmt: skip
    assert all(rule["shortDescription"]["text"] for rule in rules.values())
    run = log["runs"][0]
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_levels_map_from_severity() -> None:
    expected = {"critical": "error", "high": "error", "medium": "warning", "low": "note",
                "info": "note"}  # fmt: skip
    results = sarif_run(COMPLETE)["results"]
    assert len(results) == len(FINDINGS)
    for result in results:
        assert result["level"] == expected[result["properties"]["severity"]]


def test_sarif_fingerprints_and_locations() -> None:
    results = sarif_run(COMPLETE)["results"]
    for result in results:
        assert re.fullmatch(r"[0-9a-f]{16}", result["partialFingerprints"][FINGERPRINT_KEY])
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%" and " " not in artifact["uri"]
    first = results[0]
    assert first["partialFingerprints"][FINGERPRINT_KEY] == "aaaa000011112222"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["endLine"]) == (42, 44)
    assert first["message"]["text"].startswith("SQL built from user input\n\n")
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "docs/guide%20%C3%BC.md" in uris


def test_sarif_left_side_has_a_region_where_the_lines_were() -> None:
    # GitHub code scanning needs `region.startLine` on every result: sarif-sdk's rule GH1003,
    # microsoft/sarif-sdk src/Sarif.Multitool.Library/Rules/
    # GH1003.ProvideRequiredRegionProperties.cs.
    (left,) = [r for r in sarif_run(COMPLETE)["results"] if r["properties"]["side"] == "LEFT"]
    assert left["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert "removed line(s) 7 of the base version 111111111111" in left["message"]["text"]
    assert "the new revision has no such lines" in left["message"]["text"]
    assert "fixes" not in left
    (left_one,) = [f for f in COMPLETE.findings if f.side == "LEFT"]
    placed = dataclasses.replace(left_one, new_file_line=12)
    result = dataclasses.replace(COMPLETE, findings=(placed,))
    (only,) = sarif_run(result)["results"]
    assert only["locations"][0]["physicalLocation"]["region"] == {"startLine": 12}
    assert "the region is line 12 of the new file, where they were" in only["message"]["text"]


def test_every_sarif_result_has_a_region_start_line() -> None:
    for result in sarif_run(COMPLETE)["results"]:
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_sarif_security_severity_only_on_security() -> None:
    run = sarif_run(COMPLETE)
    for result in run["results"]:
        is_security = result["properties"]["category"] == "security"
        assert ("security-severity" in result["properties"]) == is_security
        if is_security:
            severity = Severity(result["properties"]["severity"])
            assert result["properties"]["security-severity"] == SECURITY_SEVERITY[severity]
            float(result["properties"]["security-severity"])
    for rule in run["tool"]["driver"]["rules"]:
        is_security = rule["id"].startswith("security/")
        assert ("security-severity" in rule["properties"]) == is_security
        assert ("security" in rule["properties"]["tags"]) == is_security
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert rules["security/critical"]["properties"]["security-severity"] == "9.5"
    assert rules["security/medium"]["properties"]["security-severity"] == "5.5"


def test_sarif_fixes_replace_whole_lines() -> None:
    results = {r["partialFingerprints"][FINGERPRINT_KEY]: r for r in sarif_run(COMPLETE)["results"]}
    (change,) = results["aaaa000011112222"]["fixes"][0]["artifactChanges"]
    (replacement,) = change["replacements"]
    assert replacement["deletedRegion"] == {"startLine": 42, "endLine": 44}
    assert replacement["insertedContent"]["text"] == NASTY_SUGGESTION.removesuffix("\n")
    deletion = results["ffff000011112222"]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert deletion["insertedContent"]["text"] == ""
    assert "fixes" not in results["bbbb000011112222"]


def test_sarif_incomplete_review_is_not_a_successful_execution() -> None:
    (invocation,) = sarif_run(INCOMPLETE)["invocations"]
    assert invocation["executionSuccessful"] is False
    errors = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "error"]
    assert len(errors) == 1 and "budget of 8 turns" in errors[0]["message"]["text"]
    skipped = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "warning"]
    assert {n["message"]["text"] for n in skipped} == {
        "Not reviewed: package-lock.json: generated file",
        "Not reviewed: assets/logo.png: binary file",
    }
    (clean,) = sarif_run(CLEAN)["invocations"]
    assert clean == {"executionSuccessful": True}
    assert sarif_run(CLEAN)["results"] == [] and sarif_run(CLEAN)["tool"]["driver"]["rules"] == []


def test_sarif_leaves_suppressed_findings_out_but_counts_them() -> None:
    run = sarif_run(COMPLETE)
    assert run["properties"]["reviewer"]["suppressedFindings"] == 1
    assert all(r["message"]["text"] != "Nit\n\nSomething is off here." for r in run["results"])


def _crowded_review() -> ReviewResult:
    """3,000 findings of which 2,950 are suppressed (max_findings 50), 3,000 reviewed files
    and 1,000 not reviewed, with long enough texts that no report can hold all of it."""
    reported = tuple(
        Finding(
            path=f"src/module_{n:04}.py",
            line=n + 1,
            severity=Severity.HIGH,
            title=f"Reported finding {n}",
            body="A body long enough to matter. " * 40,
            fingerprint=f"{n:016x}",
        )
        for n in range(50)
    )
    suppressed = tuple(
        dataclasses.replace(f, title=f"Suppressed finding {n}", fingerprint=f"{n + 50:016x}")
        for n, f in enumerate(reported * 59)
    )
    files = tuple(FileCoverage(f"src/module_{n:04}.py", "modified", True) for n in range(3_000))
    files += tuple(
        FileCoverage(f"vendor/{'deep/' * 30}pkg_{n:04}.js", "added", False, "vendored")
        for n in range(1_000)
    )
    return ReviewResult(
        "complete",
        "Summary. " * 3_000,
        reported,
        "m",
        "a" * 40,
        "b" * 40,
        files,
        suppressed=suppressed,
    )


def test_every_count_stays_when_the_summary_comment_is_cut_to_fit() -> None:
    from reviewer.forge.memory import MAX_STATE_CHARS
    from reviewer.report.github import summary_comment

    result = _crowded_review()
    assert len(result.suppressed) == 2_950
    state = "<!-- reviewer:state " + "x" * (MAX_STATE_CHARS - 30) + " -->"
    body = summary_comment(result, state_line=state)
    assert len(body) <= 65_536
    shown = len(re.findall(r"^#### \d+\. ", body, flags=re.MULTILINE))
    assert shown < 50  # it was cut
    assert "Not reviewed (1,000)" in body  # not the number of names listed
    assert "No changed files" not in body
    assert "3,000 reviewed" in body.split("### Files")[1]  # the files' own section counts them
    assert "2,950 more below the reporting threshold" in body
    assert f"{50 - shown} of 50 findings are not shown here" in body
    # Where the lists are, for what the comment leaves out.
    below = body.split("below the reporting threshold", 1)[1].split("\n", 1)[0]
    assert "job summary" in below and "JSON report" in below


def test_every_count_stays_when_the_markdown_report_is_cut_to_fit() -> None:
    text = render_markdown(_crowded_review(), max_bytes=40_000)
    assert len(text.encode("utf-8")) <= 40_000
    assert "Not reviewed (1,000)" in text
    assert "No changed files" not in text
    assert "3,000 reviewed" in text.split("### Files")[1]
    assert "2,950 more below the reporting threshold" in text


def test_counts_stay_even_when_the_last_resort_cut_is_needed() -> None:
    # Not-reviewed files with names near git's limit: 200 listed names alone exceed the cap,
    # so the report is cut as text; the counts must still be on it.
    result = dataclasses.replace(
        _crowded_review(),
        files=tuple(
            FileCoverage(f"vendor/{'d' * 200}/{'e' * 200}/f_{n:04}.js", "added", False, "vendored")
            for n in range(1_000)
        ),
    )
    text = render_markdown(result, max_bytes=30_000)
    assert len(text.encode("utf-8")) <= 30_000
    assert "2,950" in text and "1,000 not reviewed" in text


def test_sarif_run_carries_tokens_and_cost() -> None:
    props = sarif_run(COMPLETE)["properties"]["reviewer"]
    assert (props["tokens"], props["cachedPromptTokens"]) == (14_690, 10_000)
    assert props["costUsd"] == round(COMPLETE.cost_usd or 0, 6) and props["costUsd"] > 0
    assert sarif_run(CLEAN)["properties"]["reviewer"]["costUsd"] is None


def test_a_review_with_nothing_suppressed_does_not_mention_the_threshold() -> None:
    # "_0 more below the reporting threshold, not listed here to fit the size limit_" was on
    # every summary comment of a review with no suppressed findings.
    from reviewer.report.github import summary_comment

    clean = dataclasses.replace(COMPLETE, suppressed=())
    for text in (render_markdown(clean), summary_comment(clean, state_line="", notes=())):
        assert "below the reporting threshold" not in text
    one = render_markdown(dataclasses.replace(COMPLETE, suppressed=COMPLETE.findings[:1]))
    assert "1 more below the reporting threshold" in one
