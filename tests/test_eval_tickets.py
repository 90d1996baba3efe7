# ruff: noqa: F811  (the fixture imported from test_eval)
"""An evaluation's tickets and its cache: the verification stage is shown a case's tickets
exactly as the review was (cut by the review's own function), and the cache never serves an
answer made under other prompts than the run's, the verification's included. The scripted
reviewer and verifier over real HTTP (tests/test_eval_verification_counts.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reviewer.context.tickets.read import MAX_TICKET_CHARS
from reviewer.settings import prompts
from tests.test_eval import RULES, SAMPLE, Models, env, run_eval  # noqa: F401  (env: fixture)
from tests.test_eval_verification_counts import OVER_REFUND, VERIFY, reviewer_and_verifier

CASE = "refund-exceeds-charge"
BEYOND = "Beyond the cut: refunds of gift cards follow other rules."


def asked_of(models: Models) -> tuple[list[str], list[str]]:
    """The first messages of the reviews and of the checks the scripted model was sent."""
    bodies = [r.body for r in models.reviewer.requests]
    tasks = [(VERIFY in json.dumps(b.get("tools")), b["messages"][1]["content"]) for b in bodies]
    return [t for check, t in tasks if not check], [t for check, t in tasks if check]


def one_case(tmp_path: Path, edit: Any = None) -> Path:
    """The sample dataset with only the refund case, edited by `edit(case)`."""
    data = json.loads(SAMPLE.read_text())
    data["cases"] = [c for c in data["cases"] if c["id"] == CASE]
    if edit is not None:
        edit(data["cases"][0])
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(data))
    return path


def test_the_verifier_is_shown_a_cases_ticket_cut_as_the_review_was(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("REVIEWER_VERIFY", "all")

    def long_ticket(case: dict[str, Any]) -> None:
        (ticket,) = case["tickets"]
        ticket["text"] += "\n\n" + "Notes from support, kept for the record.\n" * 150 + BEYOND
        assert len(ticket["text"]) > MAX_TICKET_CHARS

    dataset = one_case(tmp_path, long_ticket)
    with Models({}, RULES, reviewer_and_verifier()) as models:
        code, results = run_eval(tmp_path, str(dataset))
        reviews, checks = asked_of(models)
    assert code == 0, results.get("errors")
    assert len(reviews) == 1 and len(checks) == 1 and OVER_REFUND["title"] in checks[0]
    for task in (reviews[0], checks[0]):
        assert "A refund never makes the total refunded exceed" in task
        assert "(Only the start of this ticket is shown: " in task
        assert BEYOND not in task


def test_a_changed_verification_prompt_is_not_served_from_the_cache(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The verification stage runs apart from the review (one cached review serves every
    verify setting); its answer depends on its own prompts, so they are in its key."""
    monkeypatch.setenv("REVIEWER_VERIFY", "all")
    shipped = tmp_path / "prompts"
    shutil.copytree(prompts.prompts_dir(), shipped)
    monkeypatch.setattr(prompts, "prompts_dir", lambda: shipped)
    dataset = one_case(tmp_path)
    with Models({}, RULES, reviewer_and_verifier()) as models:
        code, first = run_eval(tmp_path, str(dataset), out="first")
        assert code == 0 and len(asked_of(models)[1]) == 1
    verify_task = shipped / "verify_task.md.j2"
    verify_task.write_text(verify_task.read_text() + "\nJudge amounts in cents.\n")
    with Models({}, RULES, reviewer_and_verifier()) as models:
        code, second = run_eval(tmp_path, str(dataset), out="second")
        reviews, checks = asked_of(models)
    assert code == 0, second.get("errors")
    (run,) = second["cases"]
    # The review itself did not change: it comes from the cache; its check is made again.
    assert reviews == [] and run["review"]["verification"]["from_cache"] is False
    assert len(checks) == 1 and "Judge amounts in cents." in checks[0]
    assert first["reviewer"]["prompt_hashes"] != second["reviewer"]["prompt_hashes"]
