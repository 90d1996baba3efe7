"""What a review costs: cached prompt tokens as the server reports them, the price (shipped
table or settings, never a look-alike's), the cost in every report, and `max_cost` held for
the whole review like the other budgets. Real repositories, the real openai client over
HTTP to the scripted fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.errors import ReviewerError
from reviewer.findings import Usage
from reviewer.loop.budget import ReviewBudget
from reviewer.settings.config import Settings
from reviewer.settings.pricing import Price, known_prices, price_for
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.test_budgets import investigating_model, split_change  # noqa: F401  (fixture)

# The usage block of OpenAI's chat completion, cached tokens included: protocols.md §4.2
# (`"prompt_tokens_details":{"cached_tokens":4}`), here with bigger numbers.
CACHED_USAGE = {
    "prompt_tokens": 10_000,
    "completion_tokens": 500,
    "total_tokens": 10_500,
    "prompt_tokens_details": {"cached_tokens": 6_000},
}
# A price set in the settings (USD per million tokens), so the sums below do not depend on
# the shipped table.
PRICES = '[prices."fake-model"]\ninput = 3.0\ncached_input = 0.3\noutput = 15.0\n'


@pytest.fixture
def change(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    repo.write("app.py", "def total(items):\n    return sum(items)\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", "def total(items):\n    return sum(i.price for i in items)\n")
    repo.commit("use prices")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("REVIEWER_MODEL", "fake-model")
    for name in ("REVIEWER_MAX_COST", "REVIEWER_MAX_TURNS", "REVIEWER_MAX_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    return repo


def with_settings(repo: GitRepo, text: str) -> None:
    """Settings committed on the base branch (where a review reads them)."""
    repo.git("checkout", "-q", "main")
    repo.write(".reviewer.toml", text)
    repo.commit("settings")
    repo.git("checkout", "-q", "feature")
    repo.git("rebase", "-q", "main")


def submit(**extra: Any) -> dict[str, Any]:
    return reply(
        tool_calls=[tool_call("submit_review", {"summary": "ok", "findings": []})], **extra
    )


def review(
    repo: GitRepo, llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, dict[str, Any], dict[str, str]]:
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    out = {name: tmp_path / f"r.{name}" for name in ("json", "terminal", "markdown", "sarif")}
    formats = [arg for name, path in out.items() for arg in ("--format", f"{name}={path}")]
    code = main(["review", "--repo", str(repo.root), "--base", "main", "--quiet", *formats, *args])
    texts = {name: path.read_text() for name, path in out.items()}
    return code, json.loads(texts["json"]), texts


def test_cached_prompt_tokens_are_counted_and_priced_exactly(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_settings(change, PRICES)
    read = reply(tool_calls=[tool_call("read_file", {"path": "app.py"})], usage=CACHED_USAGE)
    with FakeLLM([read, submit(usage=CACHED_USAGE)]) as llm:
        code, report, texts = review(change, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
    assert code == 0
    assert report["usage"] == {
        "prompt_tokens": 20_000, "completion_tokens": 1_000, "total_tokens": 21_000,
        "requests": 2, "cached_prompt_tokens": 12_000, "replies_read_from_text": 0,
    }  # fmt: skip
    # 8,000 uncached prompt tokens at $3, 12,000 cached at $0.30, 1,000 completion at $15.
    expected = (8_000 * 3.0 + 12_000 * 0.3 + 1_000 * 15.0) / 1_000_000
    assert report["cost"]["usd"] == pytest.approx(expected) == 0.0426
    assert report["cost"]["price"]["source"] == 'the settings ([prices."fake-model"])'
    line = "21,000 tokens (20,000 prompt, 12,000 of them cached + 1,000 completion) in 2 requests"
    for name in ("terminal", "markdown"):
        flat = " ".join(texts[name].split())
        assert line in flat and "cost $0.0426 (at $3.00 input, $0.30 cached" in flat, name
    sarif = json.loads(texts["sarif"])["runs"][0]["properties"]["reviewer"]
    assert sarif["costUsd"] == pytest.approx(expected)


def test_without_a_price_the_reports_show_tokens_only_and_say_so(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM([submit(usage=CACHED_USAGE)]) as llm:
        code, report, texts = review(change, llm, tmp_path, monkeypatch)
    assert code == 0 and report["usage"]["cached_prompt_tokens"] == 6_000
    assert report["cost"]["usd"] is None and report["cost"]["price"] is None
    said = "tokens only: no price is known for 'fake-model' (set [prices.\"fake-model\"])"
    assert report["cost"]["note"] == said
    for name in ("terminal", "markdown"):
        flat = " ".join(texts[name].split())
        assert "10,500 tokens" in flat and "$" not in flat.split("10,500 tokens", 1)[1], name
    assert json.loads(texts["sarif"])["runs"][0]["properties"]["reviewer"]["costUsd"] is None


def test_the_settings_override_the_shipped_price(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = known_prices()["gpt-4o"]
    with_settings(change, '[prices."gpt-4o"]\ninput = 1.0\noutput = 4.0\n')
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000}
    with FakeLLM([submit(usage=usage)]) as llm:
        code, report, _texts = review(change, llm, tmp_path, monkeypatch, "--model", "gpt-4o")
    assert code == 0 and shipped.input != 1.0
    # No cached price given: cached tokens would be billed at the input price.
    assert report["cost"]["price"]["cached_input"] == 1.0
    assert report["cost"]["usd"] == 5.0


def test_a_shipped_price_names_its_source_and_date(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 100_000}
    with FakeLLM([submit(usage=usage)]) as llm:
        code, report, _texts = review(change, llm, tmp_path, monkeypatch, "--model", "gpt-4o")
    price = known_prices()["gpt-4o"]
    assert code == 0 and report["cost"]["usd"] == pytest.approx(price.input + price.output / 10)
    assert "(checked 20" in report["cost"]["price"]["source"]


def test_a_model_is_priced_by_its_own_name_only() -> None:
    table = known_prices()
    assert table and all(p.source and "(checked " in p.source for p in table.values())
    # A snapshot the provider documents as the same model has the same price ...
    alias, snapshot = price_for("claude-haiku-4-5", {}), price_for("claude-haiku-4-5-20251001", {})
    assert alias and snapshot and (alias.input, alias.output) == (snapshot.input, snapshot.output)
    # ... a look-alike does not (gpt-4o-2024-05-13 was priced differently from gpt-4o), nor
    # does another spelling, a provider prefix or an unknown model.
    for name in ("gpt-4o-2024-05-13", "GPT-4o", "openai/gpt-4o", "gpt-4o-mini-2", "llama3", ""):
        assert price_for(name, {}) is None, name
    assert price_for("llama3", {"llama3": Price(input=0, output=0)}) is not None


def test_max_cost_holds_for_the_whole_review_at_concurrency_four(
    split_change: GitRepo,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with_settings(split_change, PRICES)
    # Each reply: 9,000 prompt + 1,000 completion tokens = $0.027 + $0.015 = $0.042.
    usage = {"prompt_tokens": 9_000, "completion_tokens": 1_000, "total_tokens": 10_000}
    monkeypatch.setenv("REVIEWER_MAX_COST", "0.25")
    with FakeLLM([investigating_model(3, usage)], on_exhausted="repeat_last") as llm:
        code, report, _texts = review(split_change, llm, tmp_path, monkeypatch)
        sent = len(llm.bodies)
    assert code == 2 and report["status"] == "incomplete"
    assert "max_cost = $0.25" in report["incomplete_reason"]
    # Each request holds the most it may cost while it is out, so four at once cannot
    # overshoot: what was spent stays within the budget.
    assert report["cost"]["usd"] <= 0.25 and sent == report["usage"]["requests"] >= 2
    skipped = [f for f in report["files"] if not f["reviewed"]]
    assert skipped and all("max_cost" in f["reason"] for f in skipped)


def test_max_cost_without_a_price_fails_before_any_request(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_COST", "1")
    with FakeLLM([submit()]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(["review", "--repo", str(change.root), "--base", "main", "--quiet"])
        assert llm.bodies == []
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "max_cost is set but no price is known for the model 'fake-model'" in err
    assert '[prices."fake-model"]' in err


def test_cost_reservations_release_and_settle_with_the_real_cost() -> None:
    settings = Settings(
        model="m", max_cost=0.10, prices={"m": Price(input=10.0, cached_input=1.0, output=20.0)}
    )
    budget = ReviewBudget(settings)
    # At most 5,000 x $10 + 2,000 x $20 per million = $0.09: a second one does not fit.
    held = budget.reserve(5_000, 2_000)
    assert not isinstance(held, str)
    refused = budget.reserve(5_000, 2_000)
    assert isinstance(refused, str) and "max_cost = $0.10" in refused
    # The server says most of the prompt came from its cache: $0.01 + $0.004 + $0.004.
    budget.settle(held, Usage(5_000, 200, 1, cached_prompt_tokens=4_000))
    assert budget.cost == pytest.approx(0.018) and budget.reserved_cost == 0
    assert isinstance(budget.reserve(5_000, 2_000), str)  # $0.018 + $0.09 > $0.10
    assert not isinstance(budget.reserve(5_000, 1_000), str)  # $0.018 + $0.07 fits


def test_max_cost_is_a_setting_with_a_clear_error() -> None:
    with pytest.raises(ReviewerError, match="max_cost"):
        ReviewBudget(Settings(model="unknown-model", max_cost=1.0))


# The review's model and a cheaper one that verifies the findings, each at its own price.
TWO_PRICES = (
    '[prices."fake-model"]\ninput = 1.0\ncached_input = 1.0\noutput = 2.0\n'
    '[prices."cheap-model"]\ninput = 0.1\ncached_input = 0.1\noutput = 0.2\n'
)
REVIEW_USAGE = {"prompt_tokens": 10_000, "completion_tokens": 1_000}
CHECK_USAGE = {"prompt_tokens": 5_000, "completion_tokens": 500}


def submit_finding(**extra: Any) -> dict[str, Any]:
    found = {"path": "app.py", "line": 2, "severity": "high", "category": "bug",
             "title": "Items without a price fail", "body": "An AttributeError."}  # fmt: skip
    arguments = {"summary": "ok", "findings": [found]}
    return reply(tool_calls=[tool_call("submit_review", arguments)], **extra)


def confirmed(**extra: Any) -> dict[str, Any]:
    arguments = {"verdict": "confirmed", "reason": "app.py:2 reads i.price."}
    return reply(tool_calls=[tool_call("submit_verdict", arguments)], **extra)


@pytest.mark.verification
def test_the_verification_is_priced_at_the_verify_models_price(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_settings(change, TWO_PRICES)
    monkeypatch.setenv("REVIEWER_VERIFY_MODEL", "cheap-model")
    script = [submit_finding(usage=REVIEW_USAGE), confirmed(usage=CHECK_USAGE)]
    with FakeLLM(script) as llm:
        code, report, texts = review(change, llm, tmp_path, monkeypatch)
        models = [body["model"] for body in llm.bodies]
    assert code == 0 and models == ["fake-model", "cheap-model"]
    assert report["findings"][0]["verification"]["verdict"] == "confirmed"
    # The review's tokens at $1/$2, the check's at $0.10/$0.20 a million (not at $1/$2).
    expected = (10_000 * 1.0 + 1_000 * 2.0 + 5_000 * 0.1 + 500 * 0.2) / 1_000_000
    assert report["cost"]["usd"] == pytest.approx(expected) == 0.0126
    checks = report["cost"]["verification"]
    assert checks["model"] == "cheap-model" and checks["price"]["output"] == 0.2
    assert (checks["usage"]["prompt_tokens"], checks["usage"]["requests"]) == (5_000, 1)
    for name in ("terminal", "markdown"):
        flat = " ".join(texts[name].split())
        assert "cost $0.0126 (at $1.00 input" in flat, name
        assert "verification by cheap-model at $0.10 input" in flat, name
    sarif = json.loads(texts["sarif"])["runs"][0]["properties"]["reviewer"]
    assert sarif["costUsd"] == pytest.approx(expected)


@pytest.mark.verification
def test_max_cost_holds_the_verification_at_its_own_price(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's $0.012 leaves $0.0006 of a $0.0126 budget: a check at the cheap model's
    price fits (at the review model's price it would not)."""
    with_settings(change, TWO_PRICES)
    monkeypatch.setenv("REVIEWER_VERIFY_MODEL", "cheap-model")
    monkeypatch.setenv("REVIEWER_MAX_OUTPUT_TOKENS", "500")
    monkeypatch.setenv("REVIEWER_MAX_COST", "0.0126")
    script = [submit_finding(usage=REVIEW_USAGE), confirmed(usage={"prompt_tokens": 2_000,
                                                                    "completion_tokens": 100})]
    with FakeLLM(script) as llm:
        code, report, _texts = review(change, llm, tmp_path, monkeypatch)
        sent = len(llm.bodies)
    assert code == 0 and sent == 2
    assert report["findings"][0]["verification"]["verdict"] == "confirmed"
    assert report["cost"]["usd"] <= 0.0126


@pytest.mark.verification
def test_max_cost_with_a_verify_model_without_a_price_is_refused_before_any_request(
    change: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    with_settings(change, TWO_PRICES)
    monkeypatch.setenv("REVIEWER_VERIFY_MODEL", "unpriced-model")
    monkeypatch.setenv("REVIEWER_MAX_COST", "1")
    with FakeLLM([submit_finding()]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(["review", "--repo", str(change.root), "--base", "main", "--quiet"])
        sent = len(llm.bodies)
    assert code == 2 and sent == 0
    err = capsys.readouterr().err
    assert "no price is known for the verify_model 'unpriced-model'" in err
