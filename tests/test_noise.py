"""Noise classes as data: each class of data/noise.toml does what the table says to a finding
a scripted model submits over real HTTP on a real git repository (discard, lower to info,
mark for verification), counted in every report; the model is told the same table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.checks.noise import ACTIONS, noise_table
from reviewer.cli.program import main
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo

OLD = "".join(f"value_{n} = {n}\n" for n in range(1, 61))
NEW = OLD.replace("value_50 = 50\n", "value_50 = compute(50)\n")


def finding(title: str, line: int = 50, **extra: Any) -> dict[str, Any]:
    return {"path": "app.py", "line": line, "severity": "medium", "category": "bug",
            "title": title, "body": "See the line.", **extra}  # fmt: skip


FINDINGS = [
    finding("compute is undefined here"),  # no class: kept as it is
    finding("Stale counter two screens up", line=5),  # untouched-code: verify
    # linter: discard
    finding("Trailing whitespace after the call", category="style",
            body="Trailing whitespace at the end of the line."),
    # linter, by its title: discard
    finding("Line too long", category=None,
            body="The line is 131 characters long; the limit is 100."),
    finding("Missing docstring for the module", body="The module is missing a docstring."),
    # speculative: info (its title and body say the suggestion and code, nothing else)
    finding("Consider `MAX_RETRIES = 3`", body="`MAX_RETRIES = 3`"),
    # A failure named: the words cannot decide, sent to verification.
    finding("Consider checking the result", body="compute raises on a bad input."),
    finding("Trailing whitespace hides an injected quote", category="security"),  # exempt
    # What the change does, no problem: change-description, discard (Qwen2.5-Coder-1.5B).
    finding("Function added", body="The function `compute` is added."),
    # The same words with a concrete failure: sent to verification.
    finding("Function added without a guard", line=48, body="compute(None) raises TypeError."),
]
EXPECTED = {  # title -> (where, severity, noise class)
    "compute is undefined here": ("findings", "medium", ""),
    "Stale counter two screens up": ("findings", "medium", "untouched-code"),
    "Trailing whitespace after the call": ("discarded", "medium", "linter"),
    "Line too long": ("discarded", "medium", "linter"),
    "Missing docstring for the module": ("suppressed", "info", "nit"),
    "Consider `MAX_RETRIES = 3`": ("suppressed", "info", "speculative"),
    "Consider checking the result": ("findings", "medium", "speculative"),
    "Trailing whitespace hides an injected quote": ("findings", "medium", ""),
    "Function added": ("discarded", "medium", "change-description"),
    "Function added without a guard": ("findings", "medium", "change-description"),
}


def changed(
    repo: GitRepo,
    monkeypatch: pytest.MonkeyPatch,
    old: str,
    new: str,
    path: str = "app.py",
    **env: str,
) -> None:
    """`path` changed from `old` to `new` on a feature branch; the model's settings."""
    repo.write(path, old)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(path, new)
    repo.commit("change")
    for name, value in {"NO_PROXY": "127.0.0.1", "OPENAI_API_KEY": "k",
                        "REVIEWER_MODEL": "fake-model", **env}.items():
        monkeypatch.setenv(name, value)  # fmt: skip


@pytest.fixture
def reviewed(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, Path], list[dict[str, Any]]]:
    changed(repo, monkeypatch, OLD, NEW, REVIEWER_MIN_SEVERITY="low")
    outputs = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "markdown", "terminal", "sarif")}
    arguments = {"summary": "Reviewed.", "findings": FINDINGS}
    with FakeLLM([reply(tool_calls=[tool_call("submit_review", arguments)])]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        for fmt, path in outputs.items():
            args += ["--format", f"{fmt}={path}"]
        code = main(args)
        llm.assert_no_failures()
        bodies = llm.bodies
    return code, outputs, bodies


def test_each_noise_class_does_what_the_table_says(reviewed: Any) -> None:
    code, outputs, _bodies = reviewed
    assert code == 0
    report = json.loads(outputs["json"].read_text())
    where = {
        f["title"]: (key, f["severity"], f["noise"])
        for key in ("findings", "suppressed", "discarded")
        for f in report[key]
    }
    assert where == EXPECTED
    by_title = {
        f["title"]: f for key in ("findings", "suppressed", "discarded") for f in report[key]
    }
    untouched = by_title["Stale counter two screens up"]
    assert untouched["force_verify"] is True and "none of its lines is in the diff" in (
        untouched["noise_note"]
    )
    verified = {
        untouched["title"], "Consider checking the result", "Function added without a guard"
    }  # fmt: skip
    assert {t for t in EXPECTED if by_title[t]["force_verify"]} == verified
    reasons = {d["title"]: d["reason"] for d in report["discarded"]}
    for title in ("Trailing whitespace after the call", "Line too long"):
        assert reasons[title].startswith("discarded: what a linter or formatter reports")
    assert reasons["Function added"] == (
        'discarded: a description of what the change does, with no problem in it ("Function '
        "added\") (title says 'function added', names no concrete failure)"
    )
    assert "title says 'trailing whitespace'" in (
        by_title["Trailing whitespace after the call"]["reason"]
    )
    assert "title says 'line too long'" in by_title["Line too long"]["reason"]
    assert by_title["Missing docstring for the module"]["noise_note"].startswith(
        "lowered from medium to info"
    )
    assert "starts with 'consider', names no concrete failure" in (
        by_title["Consider `MAX_RETRIES = 3`"]["noise_note"]
    )
    assert {row["name"]: (row["count"], row["undecided"]) for row in report["noise"]} == {
        "untouched-code": (1, 0), "linter": (2, 0), "change-description": (2, 1),
        "nit": (1, 0), "speculative": (2, 1),
    }  # fmt: skip
    assert report["counts"]["medium"] == 5 and report["counts"]["info"] == 0
    line = "noise table: 1 sent to verification (untouched-code), 2 discarded (linter), "
    line += "1 discarded (change-description), "
    line += "1 sent to verification instead (change-description), 1 lowered to info (nit), "
    line += "1 lowered to info (speculative), 1 sent to verification instead (speculative)"
    terminal = " ".join(outputs["terminal"].read_text().split())
    assert line in terminal and "`discarded` list" in terminal
    markdown = outputs["markdown"].read_text()
    assert "**Noise:** " + line in markdown
    assert "Trailing whitespace after the call" not in markdown  # never shown as a finding
    sarif = json.loads(outputs["sarif"].read_text())
    titles = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
    assert not any("Trailing whitespace after the call" in t for t in titles)


def test_a_discarded_finding_never_gates(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changed(repo, monkeypatch, OLD, NEW)
    style = finding("Trailing whitespace after the call", category="style", severity="critical",
                    body="Trailing whitespace at the end of the line.")  # fmt: skip
    arguments = {"summary": "Reviewed.", "findings": [style]}
    out = tmp_path / "r.json"
    with FakeLLM([reply(tool_calls=[tool_call("submit_review", arguments)])]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        assert main([*args, "--fail-on", "low", "--format", f"json={out}"]) == 0
    report = json.loads(out.read_text())
    assert report["findings"] == [] and len(report["discarded"]) == 1


def test_the_model_is_told_the_table(reviewed: Any) -> None:
    _code, _outputs, bodies = reviewed
    system = bodies[0]["messages"][0]["content"]
    for noise_class in noise_table().classes:
        assert f"- {noise_class.description}: {ACTIONS[noise_class.action]}" in system


# --- words cannot decide against a concrete failure (issue 32, item 2) ---------------------
#
# Each row: (title, category, severity, body) -> (where, severity, class, what was done).
# A red team's titles first, each way round: real failures phrased with the table's noise
# words (discarded or lowered before), noise phrased with failure words, negations, words
# inside identifiers, other cases and Unicode lookalikes; then the plain noise the table
# still decides.
NEUTRAL = "See the line."
RED_TEAM: list[tuple[tuple[str, str | None, str, str], tuple[str, str, str, str]]] = [
    # Real titles the table discarded or lowered (issue 32).
    (("SQL injection via string formatting", None, "high", NEUTRAL),
     ("findings", "high", "linter", "verify")),
    (("Shell injection: whitespace in filename splits arguments", None, "high", NEUTRAL),
     ("findings", "high", "linter", "verify")),
    (("Command injection in run()", "style", "critical", "`os.system(input())` runs it."),
     ("findings", "critical", "linter", "verify")),
    (("New function added without authorization check", None, "high", NEUTRAL),
     ("findings", "high", "change-description", "verify")),
    (("Path traversal in download()", "bug", "critical",
      "Consider that a name with ../ reads any file."),
     ("findings", "critical", "speculative", "verify")),
    (("Docstring claims input is escaped, but it is not: stored XSS", None, "critical",
      NEUTRAL), ("findings", "critical", "nit", "verify")),
    # A real bug in noise words and no failure word the list knows: the title says more.
    (("Whitespace in filename splits arguments", None, "high", NEUTRAL),
     ("findings", "high", "linter", "verify")),
    (("Unused import hides that validate() is not called", None, "high", NEUTRAL),
     ("findings", "high", "nit", "verify")),
    (("Line too long: the 131-char query concatenates user input", "style", "high", NEUTRAL),
     ("findings", "high", "linter", "verify")),
    # A remark's title, a failure in the body.
    (("Missing docstring", None, "medium", "load() returns None and the caller crashes."),
     ("findings", "medium", "nit", "verify")),
    (("Method added", None, "high", "`delete_all()` runs without a permission check."),
     ("findings", "high", "change-description", "verify")),
    # A category alone is not evidence; a body's "consider" is not the title's.
    (("Rename the helper for clarity", "style", "low", NEUTRAL),
     ("findings", "low", "linter", "verify")),
    (("Unchecked size in read_chunk()", "bug", "high", "Consider a bound on the size."),
     ("findings", "high", "speculative", "verify")),
    # A title that starts "Consider ..." and says more: the words cannot decide (the words
    # after "Consider" were never read). A security finding is never in a class.
    (("Consider: SQL injection in build_query() lets any user read every table", "security",
      "critical", NEUTRAL), ("findings", "critical", "", "")),
    (("Consider: build_query() lets any user read every table", "bug", "critical", NEUTRAL),
     ("findings", "critical", "speculative", "verify")),
    (("You might want to check who may call delete_all()", None, "high", NEUTRAL),
     ("findings", "high", "speculative", "verify")),
    (("Consider a named constant", None, "low", "It would read better."),
     ("findings", "low", "speculative", "verify")),
    # A remark's title, a body that says more than the remark, with no failure word the
    # list knows: never discarded or lowered by the title's words.
    (("Style nit", "style", "high",
      "This string is passed to os.system with user input: command injection."),
     ("findings", "high", "linter", "verify")),
    (("Trailing whitespace", "style", "high",
      "This string reaches `os.system` with what the user typed."),
     ("findings", "high", "linter", "verify")),
    (("Missing docstring on delete_all()", None, "high", "Anyone can call `delete_all()` here."),
     ("findings", "high", "nit", "verify")),
    (("Test added", None, "high", "The test deletes the production database when run."),
     ("findings", "high", "change-description", "verify")),
    (("Consider `RETRY_LIMIT`", None, "high",
      "Any user can read every table through `build_query()`."),
     ("findings", "high", "speculative", "verify")),
    # Other cases, lookalikes, invisible characters: the failure is still seen, or the text
    # cannot be read, so it is verified.
    (("SQL INJECTION VIA STRING FORMATTING", None, "high", NEUTRAL),
     ("findings", "high", "linter", "verify")),
    (("SQL \u0456njection via string formatting", None, "high", NEUTRAL),  # a Cyrillic i
     ("findings", "high", "linter", "verify")),
    (("SQL in\u200bjection via string formatting", None, "high", NEUTRAL),  # zero-width space
     ("findings", "high", "linter", "verify")),
    (("\U0001d412\U0001d410\U0001d40b injection via formatting", None, "high", NEUTRAL),
     ("findings", "high", "linter", "verify")),  # mathematical bold SQL
    (("Shell \u0131njection: whitespace splits the name", None, "high", NEUTRAL),
     ("findings", "high", "linter", "verify")),  # a Turkish dotless i
    # Noise phrased with a failure word, a negation: not trusted either way, verified.
    (("Consider renaming for readability; no crash", None, "medium", NEUTRAL),
     ("findings", "medium", "speculative", "verify")),
    (("Trailing whitespace; does not leak anything", "style", "low", NEUTRAL),
     ("findings", "low", "linter", "verify")),
    (("No injection risk: formatting only", None, "low", NEUTRAL),
     ("findings", "low", "linter", "verify")),
    # A noise word inside an identifier is not that word: no class, kept as it is.
    (("`whitespace_split()` passes the name to the shell unquoted", None, "high", NEUTRAL),
     ("findings", "high", "", "")),
    (("formatting_helper drops the last row", None, "medium", NEUTRAL),
     ("findings", "medium", "", "")),
    # Plain noise, title and body only the remark: still decided by the table.
    (("Line too long (131 > 100)", "style", "low",
      "The line is 131 characters long; the limit is 100."),
     ("discarded", "low", "linter", "discard")),
    (("LINE TOO LONG (131 > 100)", None, "low", NEUTRAL),
     ("discarded", "low", "linter", "discard")),
    (("\uff2c\uff49\uff4e\uff45 \uff54\uff4f\uff4f \uff4c\uff4f\uff4e\uff47", None, "low",
      NEUTRAL), ("discarded", "low", "linter", "discard")),  # fullwidth
    (("Trailing whitespace after the call", "style", "medium",
      "Trailing whitespace at the end of the line."),
     ("discarded", "medium", "linter", "discard")),
    (("Function added", None, "low", "The function `compute` is added."),
     ("discarded", "low", "change-description", "discard")),
    (("New function added", None, "low", NEUTRAL),
     ("discarded", "low", "change-description", "discard")),
    (("Missing docstring for the module", None, "medium", "The module is missing a docstring."),
     ("findings", "info", "nit", "info")),
    (("Unused import `os`", None, "low", "`os` is an unused import."),
     ("findings", "info", "nit", "info")),
    (("Consider `MAX_RETRIES = 3`", None, "low", "`MAX_RETRIES = 3`"),
     ("findings", "info", "speculative", "info")),
]  # fmt: skip

MANY_OLD = "".join(f"value_{n} = {n}\n" for n in range(1, len(RED_TEAM) + 1))
MANY_NEW = "".join(f"value_{n} = compute({n})\n" for n in range(1, len(RED_TEAM) + 1))


def red_team_review(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script_tail: list[Any]
) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """One review whose model submits every RED_TEAM finding, each on a line of its own
    (every line is changed: none is untouched code, no two overlap)."""
    changed(repo, monkeypatch, MANY_OLD, MANY_NEW, REVIEWER_MIN_SEVERITY="info")
    findings = [
        finding(title, line=number, category=category, severity=severity, body=body)
        for number, ((title, category, severity, body), _) in enumerate(RED_TEAM, 1)
    ]
    out = tmp_path / "r.json"
    review = tool_call("submit_review", {"summary": "R.", "findings": findings})
    with FakeLLM([reply(tool_calls=[review]), *script_tail]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        code = main([*args, "--format", f"json={out}"])
        llm.assert_no_failures()
        bodies = llm.bodies
    return code, json.loads(out.read_text()), bodies


def test_words_never_decide_against_a_concrete_failure(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, report, _bodies = red_team_review(repo, tmp_path, monkeypatch, [])
    assert code == 0 and report["status"] == "complete"
    where = {
        f["title"]: (key, f["severity"], f["noise"], f.get("noise_action"))
        for key in ("findings", "suppressed", "discarded")
        for f in report[key]
    }
    expected = {title: outcome for (title, *_), outcome in RED_TEAM}
    assert len(expected) == len(RED_TEAM)  # one finding per title
    assert {t: where.get(t) for t in expected} == expected
    by_title = {f["title"]: f for key in ("findings", "discarded") for f in report[key]}
    for (title, *_), (_where, _severity, _class, action) in RED_TEAM:
        assert by_title[title]["force_verify"] is (action == "verify"), title
    # The note says what was not done, and why the words could not decide.
    notes = {t: by_title[t]["noise_note"] for t in expected}
    assert notes["SQL injection via string formatting"] == (
        "to be verified, not discarded: what a linter or formatter reports: formatting, "
        "whitespace, line length, naming style (title says 'formatting', but it names a "
        "concrete failure ('injection'))"
    )
    assert "but its title says more ('filename')" in (
        notes["Whitespace in filename splits arguments"]
    )
    assert "but only its category says so, and a category is not evidence" in (
        notes["Rename the helper for clarity"]
    )
    assert "not plain text" in notes["SQL \u0456njection via string formatting"]
    assert "to be verified, not lowered to info" in notes["Path traversal in download()"]
    assert "but its title says more ('lets')" in (
        notes["Consider: build_query() lets any user read every table"])  # fmt: skip
    assert "to be verified, not discarded" in notes["Trailing whitespace"]
    assert "but its body says more ('reaches')" in notes["Trailing whitespace"]
    assert "but its body says more ('Anyone')" in notes["Missing docstring on delete_all()"]
    decided = sum(1 for _f, (_w, _s, _c, a) in RED_TEAM if a in ("discard", "info"))
    rows = {row["name"]: (row["count"], row["undecided"]) for row in report["noise"]}
    undecided = sum(u for _c, u in rows.values())
    assert sum(c for c, _u in rows.values()) - undecided == decided
    assert undecided == sum(1 for _f, (_w, _s, c, a) in RED_TEAM if c and a == "verify")


@pytest.mark.verification
def test_what_the_words_cannot_decide_is_checked_by_the_verifier(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # verify = "critical": a finding below it is checked only when the table sends it.
    monkeypatch.setenv("REVIEWER_VERIFY", "critical")
    sent = sum(
        1 for _f, (_w, severity, _c, action) in RED_TEAM
        if action == "verify" or severity == "critical"
    )  # fmt: skip
    confirmed = reply(
        tool_calls=[tool_call("submit_verdict", {"verdict": "confirmed", "reason": "It is."})]
    )
    code, report, bodies = red_team_review(
        repo, tmp_path, monkeypatch, [confirmed] * sent
    )
    assert code == 0 and len(bodies) == 1 + sent
    checked = {f["title"] for f in report["findings"] if f["verification"]}
    assert "Command injection in run()" in checked and "Rename the helper for clarity" in checked
    assert "Line too long (131 > 100)" not in checked
    assert all(f["verification"] is None for f in report["discarded"])
