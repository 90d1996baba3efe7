"""`reviewer review --dry-run`: everything up to the first model request, and no request.
A fake server that records every request shows none is sent; the same change reviewed for
real then sends exactly the parts the plan listed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.loop.tokens import estimate_request_tokens
from reviewer.review.submission import submit_review_schema
from reviewer.testing import FakeLLM
from reviewer.tools import tool_schemas
from tests.conftest import GitRepo
from tests.test_batching import body, make_change, split_review_env, submit_for_task

PLAN_KEYS = {
    "dry_run", "format", "version", "reviewer_version", "base", "head", "model", "parts",
    "files", "rule_files", "settings", "estimate",
}  # fmt: skip
_FILE = re.compile(r"^### (\S+) \(", re.MULTILINE)


@pytest.fixture
def split(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A change a 16,000-token window splits into parts, a lock file and settings."""
    files = {f"pkg{d}/mod{n}.py": body(120, f"p{d}m{n}") for d in range(4) for n in range(3)}
    files["pkg0/test_mod0.py"] = body(30, "t")
    files["yarn.lock"] = "lock\n"
    repo.write(".reviewer.toml", '[prices."fake-model"]\ninput = 1.0\noutput = 2.0\n')
    make_change(repo, files)
    split_review_env(monkeypatch, REVIEWER_MAX_TURNS="90")
    monkeypatch.delenv("OPENAI_API_KEY")  # a dry run needs none
    return repo


def dry_run(repo: GitRepo, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "plan.json"
    code = main(
        ["review", "--repo", str(repo.root), "--base", "main", "--quiet", "--dry-run",
         "--format", f"json={out}", *args]
    )  # fmt: skip
    return code, json.loads(out.read_text()) if out.exists() else {}


def test_a_dry_run_asks_no_model_and_writes_its_plan(
    split: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    with FakeLLM([]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code, plan = dry_run(split, tmp_path, "--fail-on", "high")
        assert llm.bodies == [] and llm.requests == []
    assert code == 0
    assert set(plan) == PLAN_KEYS and plan["dry_run"] is True and plan["version"] == 1
    assert plan["model"] == "fake-model" and len(plan["parts"]) >= 3
    planned = sorted(path for part in plan["parts"] for path in part["files"])
    reviewed = sorted(f["path"] for f in plan["files"] if f["reviewed"])
    assert planned == reviewed and "yarn.lock" not in planned
    assert {"path": "yarn.lock", "status": "added", "reviewed": False, "reason": "lock file",
            "earlier": False, "partly_reviewed": False,
            "shown_lines": []} in plan["files"]  # fmt: skip
    assert plan["rule_files"] == []
    settings = plan["settings"]
    assert settings["fail_on"] == {"value": "high", "source": "the command line"}
    assert settings["context_window"] == {
        "value": 16000,
        "source": "the environment (REVIEWER_CONTEXT_WINDOW)",
    }
    # OPENAI_* variables are named as they are (they were labelled REVIEWER_*).
    assert settings["base_url"]["source"] == "the environment (OPENAI_BASE_URL)"
    assert settings["prices"]["value"] == {
        "fake-model": {"input": 1.0, "cached_input": None, "output": 2.0}
    }
    assert settings["prices"]["source"].startswith(".reviewer.toml at ")
    assert settings["max_seconds"] == {"value": 900.0, "source": "default"}
    assert settings["api_key"]["value"] is None
    estimate = plan["estimate"]
    first = sum(part["first_request_tokens"] for part in plan["parts"])
    assert estimate["requests"] == {"low": len(plan["parts"]), "high": 90}
    assert estimate["tokens"]["low"] > first and estimate["tokens"]["high"] == 90 * 16_000
    cost = estimate["cost_usd"]
    assert 0 < cost["low"] < cost["high"] and estimate["note"] == ""
    text = capsys.readouterr().out
    assert "(no model was asked)" in text and "skipped yarn.lock: lock file" in text
    assert f"Parts: {len(plan['parts'])}" in text and "Rule files: none" in text
    assert 'fail_on = "high"  (the command line)' in text and "Estimate: " in text


def test_the_plans_parts_are_the_parts_a_real_run_sends(
    split: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, plan = dry_run(split, tmp_path)
    assert code == 0
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with FakeLLM([submit_for_task], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        real = main(["review", "--repo", str(split.root), "--base", "main", "--quiet",
                     "--format", f"json={tmp_path / 'r.json'}"])  # fmt: skip
        first_requests = [b for b in llm.bodies if len(b["messages"]) == 2]
    assert real == 0
    sent = sorted(
        sorted(_FILE.findall(b["messages"][1]["content"].split("## The diff", 1)[1]))
        for b in first_requests
    )
    assert sent == sorted(sorted(part["files"]) for part in plan["parts"])
    # The estimate is of exactly what was sent.
    tools = [*tool_schemas(), submit_review_schema()]
    assert sorted(estimate_request_tokens(b["messages"], tools) for b in first_requests) == sorted(
        part["first_request_tokens"] for part in plan["parts"]
    )


def test_a_dry_run_without_a_price_shows_tokens_only(
    split: GitRepo, tmp_path: Path, capsys
) -> None:
    code, plan = dry_run(split, tmp_path, "--model", "unpriced-model")
    assert code == 0 and plan["estimate"]["cost_usd"] is None
    assert "no price is known for 'unpriced-model'" in plan["estimate"]["note"]
    assert "tokens only: no price is known" in capsys.readouterr().out


def test_a_dry_run_refuses_what_a_real_run_would_refuse(
    split: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_COST", "1")
    code, plan = dry_run(split, tmp_path, "--model", "unpriced-model")
    assert code == 2 and plan == {}
    assert '[prices."unpriced-model"]' in capsys.readouterr().err
    monkeypatch.delenv("REVIEWER_MAX_COST")
    sarif = main(["review", "--repo", str(split.root), "--base", "main", "--dry-run",
                  "--format", f"sarif={tmp_path / 'x.sarif'}"])  # fmt: skip
    assert sarif == 2 and "plan as terminal or json, not sarif" in capsys.readouterr().err


def test_a_dry_run_says_when_the_budgets_cannot_cover_the_change(
    split: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_TURNS", "2")
    monkeypatch.setenv("REVIEWER_MAX_COST", "0.001")
    code, plan = dry_run(split, tmp_path)
    parts, estimate = len(plan["parts"]), plan["estimate"]
    assert code == 0 and parts > 2
    assert f"{parts} parts need {parts} requests and max_turns = 2" in estimate["note"]
    assert (
        "and max_cost = $0.001" in estimate["note"] and "would stop incomplete" in estimate["note"]
    )
    # Never more than the budgets let a real run spend.
    assert estimate["requests"] == {"low": 2, "high": 2}
    assert estimate["cost_usd"]["high"] == 0.001


def test_the_plan_lists_the_rule_files_a_real_run_uses(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("AGENTS.md", "# Agents\n\n## Code review\n\nMoney is in integer cents.\n")
    repo.write("pkg0/AGENTS.md", "Every function here is pure.\n")
    make_change(repo, {"pkg0/mod.py": body(20, "a"), "pkg1/mod.py": body(20, "b")})
    split_review_env(monkeypatch)
    monkeypatch.delenv("OPENAI_API_KEY")
    code, plan = dry_run(repo, tmp_path)
    assert code == 0
    assert plan["rule_files"] == [
        {"path": "AGENTS.md", "applied_to": ["pkg0/mod.py", "pkg1/mod.py"], "cut": ""},
        {"path": "pkg0/AGENTS.md", "applied_to": ["pkg0/mod.py"], "cut": ""},
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with FakeLLM([submit_for_task], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        real = main(["review", "--repo", str(repo.root), "--base", "main", "--quiet",
                     "--format", f"json={tmp_path / 'r.json'}"])  # fmt: skip
    assert real == 0
    assert json.loads((tmp_path / "r.json").read_text())["rule_files"] == plan["rule_files"]
