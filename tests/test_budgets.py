"""Budgets are promises about money: max_turns, max_tokens and max_tool_calls hold for the
whole review, however many parts it is split into and however many run at once. When one
is spent the review ends incomplete (exit 2), naming the setting, and every file it did not
reach is listed as not reviewed, with that reason."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.findings import Usage
from reviewer.loop.budget import ReviewBudget
from reviewer.settings.config import Settings
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.test_batching import body, make_change, split_review_env

USAGE = {"prompt_tokens": 9_000, "completion_tokens": 1_000, "total_tokens": 10_000}


def investigating_model(tools_per_part: int, usage: dict[str, int] | None = None) -> Any:
    """A model that, in each part, calls `read_file` on the part's first file
    `tools_per_part` times (different ranges, so no answer comes from the cache), then
    submits. Every reply reports `usage` when given."""

    def step(request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        done = sum(1 for m in messages if m["role"] == "tool")
        extra = {"usage": usage} if usage else {}
        if done < tools_per_part:
            task = messages[1]["content"].split("## The diff", 1)[1]
            path = task.split("### ", 1)[1].split(" (", 1)[0]
            args = {"path": path, "startLine": done + 1, "endLine": done + 1}
            return reply(tool_calls=[tool_call("read_file_lines", args)], **extra)
        submit = {"summary": "ok", "findings": []}
        return reply(tool_calls=[tool_call("submit_review", submit)], **extra)

    return step


@pytest.fixture
def split_change(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A change of 18 files that a 16,000-token window splits into several parts."""
    make_change(
        repo, {f"pkg{d}/mod{n}.py": body(120, f"p{d}m{n}") for d in range(6) for n in range(3)}
    )
    split_review_env(monkeypatch, REVIEWER_CONCURRENCY="4")
    for name in ("REVIEWER_MAX_TURNS", "REVIEWER_MAX_TOKENS", "REVIEWER_MAX_TOOL_CALLS"):
        monkeypatch.delenv(name, raising=False)
    return repo


def review(
    repo: GitRepo, llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, Any]]:
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    out = tmp_path / "r.json"
    code = main(
        ["review", "--repo", str(repo.root), "--base", "main", "--quiet", "--format", f"json={out}"]
    )
    return code, json.loads(out.read_text())


def parts_of(repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    with FakeLLM([investigating_model(0)], on_exhausted="repeat_last") as llm:
        code, report = review(repo, llm, tmp_path, monkeypatch)
        assert code == 0 and report["status"] == "complete"
        return len(llm.bodies)


def test_max_turns_holds_for_the_whole_review(
    split_change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = parts_of(split_change, tmp_path, monkeypatch)
    assert parts >= 4
    # Each part needs three requests (two tool calls, then the review): more than allowed.
    monkeypatch.setenv("REVIEWER_MAX_TURNS", str(parts + 2))
    with FakeLLM([investigating_model(2)], on_exhausted="repeat_last") as llm:
        code, report = review(split_change, llm, tmp_path, monkeypatch)
        sent = len(llm.bodies)
    assert code == 2 and report["status"] == "incomplete"
    assert sent == parts + 2 == report["usage"]["requests"]
    reason = report["incomplete_reason"]
    # One clause for the parts the budget stopped, not one per part.
    assert reason.count("model-request budget") == 1 and " parts" in reason, reason
    skipped = [f for f in report["files"] if not f["reviewed"]]
    assert skipped and all("max_turns" in f["reason"] for f in skipped)


def test_max_tokens_holds_for_the_whole_review_even_at_concurrency_four(
    split_change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_TOKENS", "60000")
    with FakeLLM([investigating_model(3, USAGE)], on_exhausted="repeat_last") as llm:
        code, report = review(split_change, llm, tmp_path, monkeypatch)
    assert code == 2 and report["status"] == "incomplete"
    # Each request holds its estimated size while it is out, so four at once cannot
    # overshoot: what was spent stays within the budget.
    assert report["usage"]["total_tokens"] <= 60_000
    assert "max_tokens" in report["incomplete_reason"]
    skipped = [f for f in report["files"] if not f["reviewed"]]
    assert skipped and all("max_tokens = 60,000" in f["reason"] for f in skipped)


def test_max_tool_calls_holds_for_the_whole_review(
    split_change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_TOOL_CALLS", "3")
    with FakeLLM([investigating_model(2)], on_exhausted="repeat_last") as llm:
        code, report = review(split_change, llm, tmp_path, monkeypatch)
        results = [
            m["content"] for b in llm.bodies for m in b["messages"][-2:] if m["role"] == "tool"
        ]
    ran = {r for r in results if "tool-call budget" not in r}
    refused = [r for r in results if "review's tool-call budget (3) is spent" in r]
    assert len(ran) <= 3 and refused
    # The model is told the budget is spent and still submits: the review is complete.
    assert code == 0 and report["status"] == "complete"


def test_reservations_keep_concurrent_requests_inside_the_token_budget() -> None:
    settings = Settings(max_tokens=100_000)
    budget = ReviewBudget(settings)
    granted = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(20):
            held = budget.reserve(8_000, 2_000)
            if isinstance(held, str):
                assert "max_tokens = 100,000" in held
                return
            with lock:
                granted.append(held)
            budget.settle(held, Usage(9_000, 1_000, 1))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.tokens <= 100_000 and budget.reserved == 0
    assert len(granted) == 10


def test_a_failed_request_releases_its_reservation() -> None:
    budget = ReviewBudget(Settings(max_tokens=20_000, max_turns=3))
    held = budget.reserve(15_000, 1_000)
    assert not isinstance(held, str)
    assert isinstance(budget.reserve(5_000, 1_000), str)
    budget.settle(held, None)
    assert not isinstance(budget.reserve(5_000, 1_000), str)
    assert not isinstance(budget.reserve(1, 1), str)
    refused = budget.reserve(1, 1)
    assert isinstance(refused, str) and "max_turns = 3" in refused and budget.requests == 3


def test_the_tools_of_one_reply_run_at_the_same_time_and_answer_in_order(
    split_change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer.loop.tool_runs

    real = reviewer.loop.tool_runs.run_tool

    # Four distinct calls meet at a barrier: it opens only if they run at the same time (one
    # after another, the first would wait alone until the barrier's safety bound breaks it).
    together = threading.Barrier(4, timeout=60)

    def slow(*args: Any, **kwargs: Any) -> Any:
        together.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(reviewer.loop.tool_runs, "run_tool", slow)
    monkeypatch.setenv("REVIEWER_CONTEXT_WINDOW", "128000")  # one part
    paths = [f"pkg{d}/mod0.py" for d in range(4)]
    calls = [tool_call("read_file_lines", {"path": p, "startLine": 1, "endLine": 1}) for p in paths]
    calls.append(calls[0])  # the same call twice in one reply: answered from the first
    submit = reply(tool_calls=[tool_call("submit_review", {"summary": "ok", "findings": []})])
    with FakeLLM([reply(tool_calls=calls), submit]) as llm:
        code, _report = review(split_change, llm, tmp_path, monkeypatch)
        answers = [m["content"] for m in llm.bodies[1]["messages"] if m["role"] == "tool"]
    assert code == 0
    assert not together.broken  # the four tools ran at once
    assert [a.split(": ", 1)[1] for a in answers[:4]] == [
        body(120, f"p{d}m0").splitlines()[0] for d in range(4)
    ]
    assert answers[4].startswith("[Same call as before") and answers[4].endswith(answers[0])
