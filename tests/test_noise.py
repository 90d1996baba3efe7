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
            "title": title, "body": "It goes wrong.", **extra}  # fmt: skip


FINDINGS = [
    finding("compute is undefined here"),  # no class: kept as it is
    finding("Stale counter two screens up", line=5),  # untouched-code: verify
    finding("Trailing whitespace after the call", category="style"),  # linter: discard
    finding("Line too long", category=None),  # linter, by its title: discard
    finding("Missing docstring for the module"),  # nit: info
    finding("Consider a named constant", body="It would read better."),  # speculative: info
    finding("Consider checking the result", body="compute raises on a bad input."),  # kept
    finding("Trailing whitespace hides an injected quote", category="security"),  # exempt
    # What the change does, no problem: change-description, discard (Qwen2.5-Coder-1.5B).
    finding("Function added", body="The function `compute` is added."),
    # The same words with a concrete failure: kept.
    finding("Function added without a guard", line=48, body="compute(None) raises TypeError."),
]
EXPECTED = {  # title -> (where, severity, noise class)
    "compute is undefined here": ("findings", "medium", ""),
    "Stale counter two screens up": ("findings", "medium", "untouched-code"),
    "Trailing whitespace after the call": ("discarded", "medium", "linter"),
    "Line too long": ("discarded", "medium", "linter"),
    "Missing docstring for the module": ("suppressed", "info", "nit"),
    "Consider a named constant": ("suppressed", "info", "speculative"),
    "Consider checking the result": ("findings", "medium", ""),
    "Trailing whitespace hides an injected quote": ("findings", "medium", ""),
    "Function added": ("discarded", "medium", "change-description"),
    "Function added without a guard": ("findings", "medium", ""),
}


@pytest.fixture
def reviewed(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, Path], list[dict[str, Any]]]:
    repo.write("app.py", OLD)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", NEW)
    repo.commit("change")
    for name, value in {"NO_PROXY": "127.0.0.1", "OPENAI_API_KEY": "k",
                        "REVIEWER_MODEL": "fake-model", "REVIEWER_MIN_SEVERITY": "low"}.items():
        monkeypatch.setenv(name, value)  # fmt: skip
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
    assert not any(by_title[t]["force_verify"] for t in EXPECTED if t != untouched["title"])
    reasons = {d["title"]: d["reason"] for d in report["discarded"]}
    for title in ("Trailing whitespace after the call", "Line too long"):
        assert reasons[title].startswith("discarded: what a linter or formatter reports")
    assert reasons["Function added"] == (
        'discarded: a description of what the change does, with no problem in it ("Function '
        "added\") (title says 'function added', names no concrete failure)"
    )
    assert "category style" in by_title["Trailing whitespace after the call"]["reason"]
    assert "title says 'line too long'" in by_title["Line too long"]["reason"]
    assert by_title["Missing docstring for the module"]["noise_note"].startswith(
        "lowered from medium to info"
    )
    assert "starts with 'consider', names no concrete failure" in (
        by_title["Consider a named constant"]["noise_note"]
    )
    assert {row["name"]: row["count"] for row in report["noise"]} == {
        "untouched-code": 1, "linter": 2, "change-description": 1, "nit": 1, "speculative": 1
    }  # fmt: skip
    assert report["counts"]["medium"] == 5 and report["counts"]["info"] == 0
    line = "noise table: 1 sent to verification (untouched-code), 2 discarded (linter), "
    line += "1 discarded (change-description), 1 lowered to info (nit), "
    line += "1 lowered to info (speculative)"
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
    repo.write("app.py", OLD)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", NEW)
    repo.commit("change")
    for name, value in {"NO_PROXY": "127.0.0.1", "OPENAI_API_KEY": "k",
                        "REVIEWER_MODEL": "fake-model"}.items():
        monkeypatch.setenv(name, value)  # fmt: skip
    style = finding("Trailing whitespace after the call", category="style", severity="critical")
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
