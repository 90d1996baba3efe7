# ruff: noqa: F811  (the fixtures imported from test_review and test_action)
"""Grounded and verified findings (issue 25, items 1-3): a finding's `quote` is checked
against the file (moved to it in its hunk, refused when it is nowhere), each finding is
checked by its own short loop that ends with `submit_verdict`, and nothing is lost: a
refuted finding is kept in the report's `discarded` list, one the verifier could not check
is kept and marked `unverified`. Scripted models over real HTTP; the GitHub side on the
fake GitHub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.llm.reply_size import reply_room
from reviewer.loop.tokens import estimate_request_tokens
from reviewer.settings.config import Settings
from reviewer.testing import FakeLLM, reply, server_error, tool_call
from reviewer.testing.fake_github import FakeGitHub
from tests.conftest import GitRepo
from tests.test_action import finding as pr_finding
from tests.test_action import (  # noqa: F401  (github and pr_repo are fixtures)
    github,
    pr_repo,
    run_action,
    submit,
)
from tests.test_action_runs import STATS, PullRequest, pr  # noqa: F401  (pr is a fixture)
from tests.test_review import env, feature, finding, run  # noqa: F401  (fixtures)

VERIFY = "submit_verdict"


def submit_review(*findings: dict[str, Any]) -> dict[str, Any]:
    arguments = {"summary": "Adds `average`.", "findings": list(findings)}
    return reply(tool_calls=[tool_call("submit_review", arguments)])


def verdict(value: str, reason: str = "The code shows it.", **extra: Any) -> dict[str, Any]:
    return reply(tool_calls=[tool_call(VERIFY, {"verdict": value, "reason": reason, **extra})])


def verdicts_by_title(answers: dict[str, dict[str, Any]]) -> Any:
    """A step for a verification request: the verdict for the finding its task names (the
    checks of several findings run at the same time, in no fixed order)."""

    def step(body: dict[str, Any]) -> dict[str, Any]:
        task = body["messages"][1]["content"]
        (title,) = [title for title in answers if title in task]
        return answers[title]

    return step


def offers_verdict(body: dict[str, Any]) -> bool:
    return any(tool["function"]["name"] == VERIFY for tool in body.get("tools") or [])


# --- 1. grounded findings ------------------------------------------------------------------


def test_a_finding_whose_quote_is_elsewhere_in_its_hunk_is_moved_there(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Cited on `def average(items):` (line 8); the quoted code is line 9, in the same hunk.
    quoted = finding(line=8, quote="return total(items)   /  len(items)", confidence=0.9)
    with FakeLLM([submit_review(quoted)]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
    assert code == 0 and report["status"] == "complete"
    (only,) = report["findings"]
    assert only["line"] == 9 and only["inline"] is True
    assert "moved from line 8 to line 9, where its quote is" in only["placement_note"]
    assert only["code"] == "    return total(items) / len(items)"
    assert only["confidence"] == 0.9


def test_a_finding_whose_quote_is_nowhere_in_the_file_is_refused_with_the_reason(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        submit_review(finding(quote="return sum(items) / count")),
        submit_review(finding(quote="return total(items) / len(items)")),
    ]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        feedback = llm.bodies[1]["messages"][-1]["content"]
    assert "submit_review was not accepted" in feedback
    assert "its quote is not in the file" in feedback
    assert code == 0 and [f["line"] for f in report["findings"]] == [9]


def test_a_quote_sent_again_after_it_was_refused_is_dropped_and_the_finding_kept(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Qwen2.5-Coder-1.5B found a real command injection, quoted `18: command: `, was told,
    # and sent the same quote again (bench/README.md): the second time the submission is
    # taken and the finding kept without its quote, as if written without one, so that
    # verification checks it; the review completes.
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    unquoted = finding(title="Average of nothing", quote="18: command: ", line=8)
    grounded = finding(quote="return total(items) / len(items)")
    script = [submit_review(unquoted, grounded), submit_review(unquoted, grounded)]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
    assert len(llm.requests) == 2
    assert code == 0 and report["status"] == "complete" and report["discarded"] == []
    kept = {f["title"]: f for f in report["findings"]}
    assert set(kept) == {"Average of nothing", "Division by zero on an empty list"}
    assert kept["Average of nothing"]["placement_note"].startswith(
        "its quote was not in the file, and the model sent it again after it was told so: "
        "kept without the quote"
    )
    assert kept["Division by zero on an empty list"]["placement_note"] == ""


@pytest.mark.parametrize(
    ("invalid", "problem"),
    [
        pytest.param(finding(line=90), "line 90 is past the end of 'app.py'", id="past-the-end"),
        pytest.param(
            finding(path="../outside.py"), "resolves outside the working directory", id="outside"
        ),
    ],
)
def test_a_finding_refused_and_sent_again_unchanged_is_discarded_and_the_review_completes(
    invalid: dict[str, Any],
    problem: str,
    feature: GitRepo,
    env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Qwen2.5-Coder-1.5B, asked for its answer held to the schema, sent the same refused
    # finding until max_seconds ended the review (bench/README.md): the second time, the
    # submission is taken without it and it is discarded with why; the others are posted.
    invalid = {**invalid, "title": "Refused twice"}
    grounded = finding(quote="return total(items) / len(items)")
    script = [submit_review(invalid, grounded), submit_review(invalid, grounded)]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        first_answer = next(m for m in llm.bodies[1]["messages"] if m["role"] == "tool")
        llm.assert_no_failures()
    assert problem in first_answer["content"]
    assert len(llm.requests) == 2
    assert code == 0 and report["status"] == "complete"
    assert [f["title"] for f in report["findings"]] == ["Division by zero on an empty list"]
    (discarded,) = report["discarded"]
    assert discarded["title"] == "Refused twice"
    assert discarded["reason"].startswith(
        "not accepted, and sent again unchanged after the model was told why: "
    )
    assert problem in discarded["reason"]


@pytest.mark.verification
def test_a_finding_kept_without_its_quote_is_checked_by_verification(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unquoted = finding(title="Average of nothing", quote="18: command: ", line=8)
    script = [
        submit_review(unquoted),
        submit_review(unquoted),
        verdict("refuted", "Line 8 is a def line; nothing there can fail."),
    ]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
    assert code == 0 and report["status"] == "complete" and report["findings"] == []
    (discarded,) = report["discarded"]
    assert discarded["title"] == "Average of nothing"
    assert discarded["reason"].startswith("refuted by verification")


def test_a_quote_with_other_quote_marks_or_written_as_one_line_is_grounded(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Qwen2.5-Coder-1.5B under llama.cpp (bench/README.md) wrote double quote marks as single
    # ones rather than escape them in JSON, and joined a `def` line and its docstring into
    # one quote. Both are the code of the file: grounded, not refused.
    repo.write("ops.py", "import os\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(
        "ops.py",
        'import os\n\n\ndef run_from_prompt():\n    """Run the command typed."""\n'
        '    os.system(input("command: "))\n',
    )
    repo.commit("Run a typed command")
    swapped = {
        "path": "ops.py",
        "line": 6,
        "severity": "critical",
        "title": "Runs any command typed",
        "body": "Shell injection.",
        "quote": "os.system(input('command: '))",
    }
    joined = "def run_from_prompt(): '''Run the command typed.'''"
    at_its_lines = {**swapped, "line": 4, "title": "Docstring", "quote": joined}
    # Cited on the blank line above: moved to the two lines the quote covers.
    above = {**at_its_lines, "line": 3, "title": "Name"}
    with FakeLLM([submit_review(swapped, at_its_lines, above)]) as llm:
        code, report = run(repo, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
    assert code == 0 and len(llm.requests) == 1
    placed = {f["title"]: (f["line"], f.get("end_line")) for f in report["findings"]}
    assert placed == {"Runs any command typed": (6, None), "Docstring": (4, None), "Name": (4, 5)}


def test_a_finding_without_a_quote_is_accepted_as_it_is(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM([submit_review(finding())]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
    assert code == 0 and report["findings"][0]["line"] == 9
    assert report["findings"][0]["confidence"] is None


# --- 2. and 3. the verification pass, nothing lost ------------------------------------------

@pytest.mark.verification
def test_verify_off_sends_no_verification_request(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    with FakeLLM([submit_review(finding())]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        bodies = llm.bodies
    assert code == 0 and len(bodies) == 1 and not any(offers_verdict(b) for b in bodies)
    (only,) = report["findings"]
    assert only["verification"] is None and report["discarded"] == []


@pytest.mark.verification
def test_by_default_each_finding_is_checked_by_its_own_loop_with_the_tools(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        submit_review(finding()),
        reply(tool_calls=[tool_call("read_file", {"path": "app.py"})]),
        verdict("confirmed", "app.py:9 divides by len(items), which is 0 for []."),
    ]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
        bodies = llm.bodies
    assert code == 0 and [offers_verdict(b) for b in bodies] == [False, True, True]
    # The verifier is told to refute, and sees the finding (as data) and its file's diff.
    system, task = (m["content"] for m in bodies[1]["messages"][:2])
    assert "try to refute the finding" in system
    assert "Division by zero on an empty list" in task and "def average" in task
    (only,) = report["findings"]
    assert only["verification"] == {
        "verdict": "confirmed",
        "reason": "app.py:9 divides by len(items), which is 0 for [].",
        "tool_calls": 1,
        "severity_before": None,
        "learning": "",
    }
    # What verification spent is the review's.
    assert report["usage"]["requests"] == 3 and report["tool_calls"] == 1


@pytest.mark.verification
def test_a_refuted_finding_is_discarded_not_posted_and_an_uncertain_one_is_posted_marked(
    github: FakeGitHub,
    pr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    refuted = pr_finding(title="Total is wrong", line=2, suggestion=None, confidence=0.4)
    uncertain = pr_finding()  # the division by zero, with its suggestion
    answers = {
        "Total is wrong": verdict("refuted", "sum(items) is the total; nothing is wrong."),
        "Division by zero": verdict("uncertain", "Callers may never pass an empty list."),
    }
    run = run_action(
        github,
        pr_repo.root,
        [submit(refuted, uncertain), verdicts_by_title(answers), verdicts_by_title(answers)],
        tmp_path,
        monkeypatch,
        capsys,
        REVIEWER_FAIL_ON="high",
        REVIEWER_MAX_RETRIES="0",
    )
    github.assert_no_failures()
    # Only the uncertain finding is on the pull request, saying so; it still gates.
    (comment,) = github.review_comments
    assert "Division by zero" in comment["body"]
    assert "uncertain" in comment["body"] and "Callers may never pass" in comment["body"]
    assert "Total is wrong" not in json.dumps(github.review_comments)
    assert run.code == 1 and run.outputs["findings"] == "1"
    # The refuted one is kept in the report, with the verdict's reason and its tool calls.
    report = json.loads(Path(run.outputs["report"]).read_text())
    (discarded,) = report["discarded"]
    assert discarded["title"] == "Total is wrong"
    assert discarded["verification"]["verdict"] == "refuted"
    assert discarded["verification"]["tool_calls"] == 0
    assert "refuted by verification: sum(items) is the total" in discarded["reason"]
    # The summaries say how many were discarded and where they are.
    (summary,) = [c for c in github.issue_comments if "reviewer:summary" in c["body"]]
    for text in (summary["body"], run.summary):
        said = " ".join(text.split())
        assert "1 finding discarded by the noise table, verification or min_confidence" in said
        assert "`discarded` list of the JSON report" in said


@pytest.mark.verification
def test_a_verifier_that_errors_leaves_the_finding_unverified_and_the_review_says_so(
    feature: GitRepo,
    env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_RETRIES", "0")
    script = [submit_review(finding()), server_error(status=500)]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch, "--fail-on", "high")
    # Kept, counted and gating: a check that could not run never hides a finding.
    assert code == 1 and report["status"] == "complete"
    (only,) = report["findings"]
    assert only["verification"]["verdict"] == "unverified"
    assert "the model failed" in only["verification"]["reason"]
    out = " ".join(capsys.readouterr().out.split())
    assert "1 finding unverified" in out


@pytest.mark.verification
@pytest.mark.parametrize("budget", ["max_tokens", "max_cost"])
def test_verification_stays_inside_the_reviews_budget(
    budget: str,
    feature: GitRepo,
    env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('[prices."fake-model"]\ninput = 1.0\ncached_input = 1.0\noutput = 1.0\n')
    monkeypatch.setenv("REVIEWER_VERIFY", "off")
    with FakeLLM([submit_review(finding())]) as llm:
        run(feature, llm, tmp_path, monkeypatch, "--config", str(config))
        (body,) = llm.bodies
    # Room for what the review's request reserves (its estimate and the reply room), and
    # less than any verification request reserves on top of what the review spent.
    limit = estimate_request_tokens(body["messages"], body["tools"]) + reply_room(Settings()) + 50
    monkeypatch.setenv("REVIEWER_VERIFY", "all")
    if budget == "max_tokens":
        monkeypatch.setenv("REVIEWER_MAX_TOKENS", str(limit))
    else:
        # 1 USD per million tokens: a dollar budget the same size as the token one.
        monkeypatch.setenv("REVIEWER_MAX_COST", str(limit / 1_000_000))
    with FakeLLM([submit_review(finding()), verdict("refuted")]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch, "--config", str(config))
        bodies = llm.bodies
    assert len(bodies) == 1  # the verification request was not sent
    assert code == 0 and report["status"] == "complete"
    (only,) = report["findings"]  # kept: it could not be checked
    assert only["verification"]["verdict"] == "unverified"
    assert f"({budget} = " in only["verification"]["reason"]
    assert report["usage"]["total_tokens"] <= limit


@pytest.mark.verification
def test_a_finding_under_min_confidence_is_discarded_without_a_check(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MIN_CONFIDENCE", "0.5")
    script = [submit_review(finding(confidence=0.3))]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch, "--fail-on", "high")
        bodies = llm.bodies
    assert code == 0 and len(bodies) == 1 and report["findings"] == []
    (discarded,) = report["discarded"]
    assert discarded["reason"] == "its confidence 0.3 is under min_confidence 0.5"


@pytest.mark.verification
def test_a_severity_floor_checks_only_findings_at_or_above_it(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_VERIFY", "high")
    low = finding(line=4, severity="low", title="Items may lack price", body="Plain numbers.")
    script = [submit_review(finding(), low), verdict("confirmed", "Seen.", severity="critical")]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
        bodies = llm.bodies
    assert code == 0 and len(bodies) == 2
    by_title = {f["title"]: f for f in report["findings"]}
    assert by_title["Items may lack price"]["verification"] is None
    checked = by_title["Division by zero on an empty list"]
    assert checked["severity"] == "critical"
    assert checked["verification"]["severity_before"] == "high"


@pytest.mark.verification
def test_a_finding_carried_from_an_earlier_run_is_not_checked_again(pr: PullRequest) -> None:
    first = pr.run([submit(pr_finding()), verdict("confirmed", "len([]) is 0 at app.py:6.")])
    assert first.code == 0, first.err
    assert [offers_verdict(body) for body in first.llm_bodies] == [False, True]
    pr.push("Add median", {"stats.py": STATS})
    # The second run's model finds nothing new: one request, no check of the carried one.
    second = pr.run([submit()])
    assert second.code == 0, second.err
    assert [offers_verdict(body) for body in second.llm_bodies] == [False]
    assert second.outputs["findings"] == "1"


def test_a_removed_line_is_grounded_in_the_base_version(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Line 4 of the base (`result += item`) is removed; its quote is checked at the base.
    good = finding(line=4, side="LEFT", quote="result += item", title="Lost the plain sum")
    bad = finding(line=4, side="LEFT", quote="result += item.price", title="Lost the plain sum")
    with FakeLLM([submit_review(bad), submit_review(good)]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        feedback = llm.bodies[1]["messages"][-1]["content"]
    assert "its quote is not in the file at the base revision" in feedback
    assert code == 0
    (only,) = report["findings"]
    assert (only["side"], only["line"], only["code"]) == ("LEFT", 4, "        result += item")


@pytest.mark.verification
def test_checks_have_their_own_bound_on_requests_not_the_reviews_max_turns(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """max_turns bounds the review's loops; each check is bounded by verify_tool_calls. A
    review that used its turns still has its findings checked (they were left unverified)."""
    monkeypatch.setenv("REVIEWER_MAX_TURNS", "1")
    titles = ["Division by zero on an empty list", "Average of strings", "Items may lack price"]
    found = [
        finding(title=titles[0]),
        finding(line=8, severity="medium", title=titles[1], body="Strings do not add up."),
        finding(line=4, severity="low", title=titles[2], body="Plain numbers."),
    ]
    answers = {title: verdict("confirmed", f"Seen: {title}.") for title in titles}
    step = verdicts_by_title(answers)
    with FakeLLM([submit_review(*found), step, step, step]) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        llm.assert_no_failures()
        sent = len(llm.bodies)
    assert code == 0 and report["status"] == "complete" and sent == 4
    verdicts = {f["title"]: f["verification"]["verdict"] for f in report["findings"]}
    assert verdicts == dict.fromkeys(titles, "confirmed")


@pytest.mark.verification
def test_a_check_ends_at_its_own_bound_on_requests(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verifier that keeps replying without a verdict is stopped after verify_tool_calls
    + 2 requests, and the finding is kept, unverified."""
    monkeypatch.setenv("REVIEWER_VERIFY_TOOL_CALLS", "1")
    read = reply(tool_calls=[tool_call("read_file", {"path": "app.py"})])
    script = [submit_review(finding()), read, read, read, verdict("refuted")]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        sent = len(llm.bodies)
    assert code == 0 and sent == 4  # the review, and the check's 3 requests
    (only,) = report["findings"]
    assert only["verification"]["verdict"] == "unverified"
    assert "the check's request bound (3: verify_tool_calls = 1" in only["verification"]["reason"]


@pytest.mark.verification
def test_the_transcript_holds_each_check_marked_as_the_verification_of_its_finding(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_CONCURRENCY", "1")  # the checks in order, most severe first
    low = finding(line=4, severity="low", title="Items may lack price", body="Plain numbers.")
    script = [
        submit_review(low, finding()),
        reply(tool_calls=[tool_call("read_file", {"path": "app.py"})]),
        verdict("confirmed", "app.py:9 divides by len(items)."),
        verdict("refuted", "Every item has a price here."),
    ]
    transcript = tmp_path / "t.jsonl"
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch, "--transcript", str(transcript))
        llm.assert_no_failures()
    assert code == 0 and len(report["findings"]) == 1 and len(report["discarded"]) == 1
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    kinds = [e["type"] for e in entries]
    review_end = kinds.index("end")
    checks = [e for e in entries if e["type"] == "verification"]
    assert [(c["finding"], c["title"], c["line"]) for c in checks] == [
        (1, "Division by zero on an empty list", 9),
        (2, "Items may lack price", 4),
    ]
    first = kinds.index("verification", review_end)
    second = kinds.index("verification", first + 1)
    # The first check's messages: its system and task, the read, the verdict.
    body = entries[first + 1 : second]
    assert "try to refute the finding" in body[0]["message"]["content"]
    assert any(e["type"] == "tool_result" and e["result"]["name"] == "read_file" for e in body)
    assert body[-1] == {"type": "end", "verification": 1, "verdict": "confirmed",
                        "reason": "app.py:9 divides by len(items)."}  # fmt: skip
    assert entries[-1] == {"type": "end", "verification": 2, "verdict": "refuted",
                           "reason": "Every item has a price here."}  # fmt: skip
