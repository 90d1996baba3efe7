# ruff: noqa: F811  (the fixtures imported from test_action, test_action_runs, test_gitlab_flow)
"""Malformed arguments are one refusal back to the model, and the loop goes on (issue 32,
items 3 and 4): arguments nested 2,000 deep (4 KB), a 5,000-digit number, a key given twice
(`{"findings": [f], "findings": []}` must not be zero findings), in native calls and in calls
written as text, for the tools and every final tool (submit_review, submit_verdict,
submit_answer) and the structured answer. And whatever goes wrong inside `reviewer github` or
`reviewer gitlab`, the run says it did not review, where people look, and exits 2. The
attacker's inputs over real HTTP to the scripted model, the fake GitHub and the fake GitLab."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.eval.judge import JudgeError, parse_verdict
from reviewer.review.submission import SUBMIT_ANSWER
from reviewer.testing import FakeLLM, raw, reply, tool_call
from tests.conftest import GitRepo
from tests.test_action import API_KEY, github, pr_repo  # noqa: F401  (fixtures)
from tests.test_action_runs import PullRequest, pr  # noqa: F401  (a fixture)
from tests.test_calls_as_text import answer_agent
from tests.test_gitlab_flow import MergeRequest, mr  # noqa: F401  (a fixture)
from tests.test_gitlab_flow import finding as mr_finding
from tests.test_gitlab_flow import submit as mr_submit
from tests.test_review import env, feature, finding, run, submit

__all__ = ["env", "feature"]  # fixtures, used by name

DEEP = "[" * 2000 + "]" * 2000  # 4 KB
LONG_NUMBER = "9" * 5000
FINDING = json.dumps(finding())
TOO_DEEP = "the arguments could not be read: nested too deep"


def call(name: str, raw_arguments: str) -> dict[str, Any]:
    """A reply with one native call whose arguments are sent as written."""
    return reply(tool_calls=[tool_call(name, raw_arguments)])


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


# --- 3. nested too deep, a number too long -----------------------------------------------------

TWICE = "the key '{}' appears twice; send it once."
# The case: the finding, then an empty list under the same key.
LOST = '{"summary": "Adds average.", "findings": [' + FINDING + '], "findings": []}'
DEEPER = "the arguments could not be read: nested too deep (more than 64 levels)."
LONGER = "the arguments could not be read: a number too long (5,000 characters; at most 100)."
NATIVE_REFUSED = [
    pytest.param("read_file", '{"path": ' + DEEP + "}", "Error: " + DEEPER, id="tool-nested"),
    pytest.param(
        "read_file_lines",
        '{"path": "app.py", "startLine": 1, "endLine": ' + LONG_NUMBER + "}",
        "Error: " + LONGER,
        id="tool-number",
    ),
    pytest.param(
        "submit_review",
        '{"summary": "Fine.", "findings": ' + DEEP + "}",
        "Error: submit_review: " + DEEPER,
        id="final-nested",
    ),
    pytest.param(
        "submit_review",
        '{"summary": "Fine.", "findings": [{"path": "app.py", "line": ' + LONG_NUMBER + "}]}",
        "Error: submit_review: " + LONGER,
        id="final-number",
    ),
    # 4. The last value of a key given twice used to win: zero findings, a finding lowered
    # to info, another file read.
    pytest.param(
        "submit_review",
        LOST,
        "Error: submit_review: " + TWICE.format("findings"),
        id="final-key-twice",
    ),
    pytest.param(
        "submit_review",
        '{"summary": "Adds average.", "findings": ['
        + FINDING.replace('"severity": "high"', '"severity": "high", "severity": "info"')
        + "]}",
        "Error: submit_review: " + TWICE.format("severity"),
        id="final-key-twice-in-a-finding",
    ),
    pytest.param(
        "read_file",
        '{"path": "README.md", "path": "app.py"}',
        "Error: " + TWICE.format("path"),
        id="tool-key-twice",
    ),
]


@pytest.mark.parametrize(("name", "raw", "refusal"), NATIVE_REFUSED)
def test_native_arguments_that_cannot_be_read_are_refused_and_the_loop_goes_on(
    name: str,
    raw: str,
    refusal: str,
    feature: GitRepo,
    env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeLLM([call(name, raw), submit(findings=[finding()])]) as llm:
        # Before the fix: RecursionError / ValueError, "a defect in reviewer", exit 2, no
        # report; a key given twice: its last value.
        code, report = run(feature, llm, tmp_path, monkeypatch)
        answers = tool_results(llm.bodies[1]) if len(llm.bodies) > 1 else []
    assert answers == [refusal]
    assert code == 0 and report["status"] == "complete"
    assert [f["severity"] for f in report["findings"]] == ["high"]


TEXT_REFUSED = [
    pytest.param(
        '<tool_call>{"name": "read_file", "arguments": {"path": ' + DEEP + "}}</tool_call>",
        DEEPER,
        id="hermes-nested",
    ),
    pytest.param('{"summary": "Fine.", "findings": ' + DEEP + "}", DEEPER, id="json-nested"),
    pytest.param(
        '```json\n{"name": "read_file_lines", "arguments": {"path": "app.py", "startLine": '
        + LONG_NUMBER
        + ', "endLine": 2}}\n```',
        LONGER,
        id="fenced-number",
    ),
    pytest.param(
        "<function=submit_review><parameter=summary>Fine.</parameter><parameter=findings>"
        + DEEP
        + "</parameter></function>",
        DEEPER,
        id="xml-nested",
    ),
    # 4. Before the fix: complete with zero findings (the last "findings" won).
    pytest.param(
        '<tool_call>{"name": "submit_review", "arguments": ' + LOST + "}</tool_call>",
        TWICE.format("findings"),
        id="hermes-key-twice",
    ),
    pytest.param(
        LOST,
        TWICE.format("findings"),
        id="json-key-twice",
    ),
    pytest.param(
        "<function=submit_review><parameter=summary>Adds average.</parameter><parameter=findings>"
        "[" + FINDING + "]</parameter><parameter=findings>[]</parameter></function>",
        TWICE.format("findings"),
        id="xml-key-twice",
    ),
    pytest.param(
        "<|python_start|>[submit_review(summary='Adds average.', findings=["
        + FINDING
        + "], findings=[])]<|python_end|>",
        TWICE.format("findings"),
        id="pythonic-key-twice",
    ),
]


@pytest.mark.parametrize(("content", "refusal"), TEXT_REFUSED)
def test_a_call_written_as_text_that_cannot_be_read_is_refused_and_the_loop_goes_on(
    content: str,
    refusal: str,
    feature: GitRepo,
    env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    with FakeLLM([reply(content), submit(findings=[finding()])]) as llm:
        # Before the fix: "the model endpoint failed: RecursionError", the review incomplete;
        # a number too long: prose; a key given twice: its last value.
        code, report = run(feature, llm, tmp_path, monkeypatch, "--transcript", str(transcript))
        note = llm.bodies[1]["messages"][-1]
        llm.assert_no_failures()
    assert note["role"] == "user"
    assert f"read as a call written as text and refused: {refusal}" in note["content"]
    assert code == 0 and report["status"] == "complete" and len(report["findings"]) == 1
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [e["unread_call"] + "." for e in entries if "unread_call" in e] == [refusal]


def test_a_structured_answer_nested_too_deep_is_refused_and_asked_again_the_same_way(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    markdown = "### Review\n1. **Division by zero**: `average([])` raises."
    nested = '{"summary": "Fine.", "findings": ' + DEEP + "}"
    answer = json.dumps({"summary": "Adds `average`.", "findings": [finding()]})
    script = [reply(markdown), reply(markdown), reply(nested), reply(answer)]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch)
        bodies = llm.bodies
        llm.assert_no_failures()
    # The third and the fourth requests ask for the structured answer; the fourth says why the
    # third was refused (before the fix the server was taken to refuse structured answers).
    assert ["response_format" in body for body in bodies] == [False, False, True, True]
    last = bodies[3]["messages"][-1]["content"]
    assert TOO_DEEP in last and "No tools this time" in last
    assert code == 0 and report["status"] == "complete" and len(report["findings"]) == 1


def test_a_gitlab_run_refuses_arguments_too_deep_and_finishes_its_review(
    mr: MergeRequest,
) -> None:
    run = mr.run(
        [call("read_file", '{"path": ' + DEEP + "}"), mr_submit(mr_finding("Still found"))],
        REVIEWER_FAIL_ON="high",
    )
    # Before the fix: no summary, no outputs, no reports, no note, exit 2.
    assert run.code == 1, run.err
    assert run.outputs["AI_REVIEW_STATUS"] == "complete"
    assert "Still found" in run.summary and "Still found" in mr.summary()
    assert [f["title"] for f in run.report()["findings"]] == ["Still found"]
    assert TOO_DEEP in tool_results(run.llm_bodies[1])[0]


# --- 3. whatever goes wrong in a forge's run: not reviewed, said where people look -----------

WHERE = [
    pytest.param("reviewer.forge.review_flow.run_review", id="in-the-review"),
    pytest.param("reviewer.forge.review_flow.post", id="in-posting"),
]


def _breaks(monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        # An exception nobody expects, its text holding a secret of the environment.
        raise RuntimeError(f"something broke near {API_KEY}")

    monkeypatch.setattr(target, broken)


@pytest.mark.parametrize("target", WHERE)
def test_an_unexpected_failure_in_a_github_run_says_not_reviewed_and_exits_2(
    target: str, pr: PullRequest
) -> None:
    _breaks(pr.monkeypatch, target)
    run = pr.run([submit(findings=[finding()])])
    # Before the fix: exit 2 with the line in the log, but no annotation, no job summary and
    # no status output: a workflow saw an empty summary and no status.
    assert run.code == 2
    line = "unexpected RuntimeError: something broke near"
    assert line in run.err and "Traceback" not in run.err
    assert "AI review: not reviewed" in run.summary and line in run.summary
    assert run.outputs["status"] == "not-reviewed"
    assert "::error title=Not reviewed::reviewer: " + line in run.out
    assert API_KEY not in run.summary + run.err  # (stdout holds its ::add-mask:: command)
    # The reports too (before: none when the review itself broke): the JSON report and the
    # SARIF log say not reviewed, or, when the review was done and posting broke, are the
    # review's own.
    report = json.loads(Path(run.outputs["report"]).read_text())
    assert Path(run.outputs["sarif"]).is_file()
    if target.endswith("run_review"):
        assert report["status"] == "incomplete"
        assert report["incomplete_reason"].startswith("not reviewed: " + line)
        assert report["findings"] == [] and API_KEY not in json.dumps(report)
    else:
        # The review's own report, left as it was.
        assert not (report.get("incomplete_reason") or "").startswith("not reviewed")


@pytest.mark.parametrize("target", WHERE)
def test_an_unexpected_failure_in_a_gitlab_run_says_not_reviewed_and_exits_2(
    target: str, mr: MergeRequest
) -> None:
    _breaks(mr.monkeypatch, target)
    run = mr.run([mr_submit(mr_finding("Found"))])
    # Before the fix: exit 2, and no summary file, no status in the dotenv.
    assert run.code == 2
    line = "unexpected RuntimeError: something broke near"
    assert "ERROR: Not reviewed: " + line in run.err and "Traceback" not in run.err
    assert "AI review: not reviewed" in run.summary and line in run.summary
    assert run.outputs["AI_REVIEW_STATUS"] == "not-reviewed"
    assert API_KEY not in run.summary + run.err


def test_an_unexpected_failure_answering_questions_after_a_review_leaves_it_reviewed(
    mr: MergeRequest,
) -> None:
    # The questions are answered after the review is posted: whatever breaks there is a
    # warning, and the finished review keeps its status, summary and exit code.
    _breaks(mr.monkeypatch, "reviewer.gitlab.run.answer_questions")
    run = mr.run([mr_submit(mr_finding("Found"))])
    # Before the fix: exit 2 and "not reviewed" over a review that was posted.
    assert run.code == 0, run.err  # the review's own code (no fail-on set)
    assert run.outputs["AI_REVIEW_STATUS"] == "complete"
    assert "AI review: not reviewed" not in run.summary
    assert "could not answer the questions" in run.err
    assert "unexpected RuntimeError: something broke near" in run.err
    assert API_KEY not in run.err


# --- 4. a key given twice, in every final tool --------------------------------------------


@pytest.mark.verification
def test_a_verdict_that_gives_its_verdict_twice_is_refused_not_taken_as_the_last(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    twice = '{"verdict": "confirmed", "reason": "app.py:9 divides by zero.", "verdict": "refuted"}'
    confirmed = {"verdict": "confirmed", "reason": "app.py:9 divides by len([]) = 0."}
    script = [
        submit(findings=[finding()]),
        call("submit_verdict", twice),
        reply(tool_calls=[tool_call("submit_verdict", confirmed)]),
    ]
    with FakeLLM(script) as llm:
        code, report = run(feature, llm, tmp_path, monkeypatch, "--fail-on", "high")
        answers = tool_results(llm.bodies[2]) if len(llm.bodies) > 2 else []
    # Before the fix the finding was discarded as "refuted by verification".
    assert answers == ["Error: submit_verdict: " + TWICE.format("verdict")]
    assert report["discarded"] == [] and code == 1
    assert report["findings"][0]["verification"]["verdict"] == "confirmed"


def test_an_answer_that_gives_its_text_twice_is_refused(repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")
    repo.commit("first")
    twice = '{"answer": "No: it divides by zero.", "answer": "Yes, merge it."}'
    real = {"answer": "No: it divides by zero."}
    script = [call(SUBMIT_ANSWER, twice), reply(tool_calls=[tool_call(SUBMIT_ANSWER, real)])]
    with FakeLLM(script) as llm:
        outcome = answer_agent(repo, llm.base_url).run("You answer questions.", "Is it safe?")
        answers = tool_results(llm.bodies[1]) if len(llm.bodies) > 1 else []
    assert answers == ["Error: submit_answer: " + TWICE.format("answer")]
    assert outcome.submission is not None
    assert outcome.submission.answer == "No: it divides by zero."


# --- 3. the other JSON a model writes: an error body that quotes it, a judge's verdict ------------


def test_an_error_body_nested_too_deep_is_the_servers_one_line_not_a_defect(
    feature: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server's error can carry the model's own text (Groq's tool_use_failed holds its
    # failed_generation): its message, nested 2,000 deep as a JSON string.
    refused = raw(json.dumps({"error": {"message": DEEP}}), status=400)
    with FakeLLM([refused]) as llm:
        # Before the fix: RecursionError, "a defect in reviewer", exit 2, no report.
        code, report = run(feature, llm, tmp_path, monkeypatch)
    assert code == 2 and report["status"] == "incomplete"
    assert "rejected the request (400)" in report["incomplete_reason"]


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param('{"match": true, "confidence": 1, "why": ' + DEEP + "}", id="nested"),
        pytest.param('{"match": true, "confidence": 1, "match": false}', id="key-twice"),
    ],
)
def test_a_judges_answer_that_cannot_be_read_is_an_error_never_a_verdict(answer: str) -> None:
    # Before the fix: RecursionError out of the eval; the last "match" taken as the verdict.
    with pytest.raises(JudgeError, match="unparseable answer"):
        parse_verdict(answer)
