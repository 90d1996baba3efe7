"""The rdjson (reviewdog) and GitLab Code Quality reports: validated against their published
schemas (vendored in tests/data/rdjson and tests/data/codequality, see their READMEs), their
exact values on a small case, their fail-closed incomplete reviews, and `reviewer review`
writing them from a real review (real repository, the real openai client, the fake server).

Sources of the consumers' behaviour these tests imitate:
- reviewdog (github.com/reviewdog/reviewdog at 6c307503): parser/rdjson.go reads one
  `DiagnosticResult` with protojson (unknown fields discarded); proto/rdf/reviewdog.proto: a
  range whose start and end omit the column is line-wise, end line included; parser/diff.go
  writes its own suggestions that way, text without the final newline;
  service/gitlab/gitlab_mr_discussion.go `buildSingleSuggestion` posts
  ```` ```suggestion:-0+N ```` with N = end.line - start.line and the text plus a newline
  (pinned by its test `TestBuildSuggestions`); service/github/github.go
  `buildSingleSuggestion` requires the suggestion's lines to equal the comment's.
- GitLab: https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format (the
  documented fields; no byte order mark); lib/gitlab/ci/parsers/codequality/code_climate.rb
  validates each issue with app/validators/json_schemas/codeclimate.json and stops at the
  first invalid one; Gitlab::Ci::Reports::CodequalityReports keys issues by fingerprint.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reviewer.cli.program import main
from reviewer.findings import FileCoverage, ReviewResult, Severity, Verification
from reviewer.report import FORMATS, render, write_report
from reviewer.report.codequality import SEVERITIES as CODEQUALITY_SEVERITIES
from reviewer.report.rdjson import MAX_BODY_CHARS
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.test_reports import (
    CLEAN,
    COMPLETE,
    EMPTY_INCOMPLETE,
    INCOMPLETE,
    SHA_BASE,
    SHA_HEAD,
    finding,
)

DATA = Path(__file__).parent / "data"

# A result with every kind of finding and name: inline and summary-only, ranges, both sides
# (with and without a place in the new file), suggestions (replacing, deleting), security,
# an earlier run's finding, a name that is not UTF-8, one with spaces, a newline and a quote,
# and a review that did not finish.
ODD_FINDINGS = (
    *COMPLETE.findings,
    finding(
        path="bin/latin-\udce9.txt",
        line=2,
        severity=Severity.MEDIUM,
        category="bug",
        title="A name that is not UTF-8",
        fingerprint="1111222233334444",
    ),
    finding(
        path='dir with space/new\nline "q".py',
        line=4,
        end_line=6,
        severity=Severity.HIGH,
        category="security",
        title="Secret compared in Python",
        suggestion="a\nb\nc\n",
        fingerprint="5555666677778888",
        earlier=True,
    ),
    finding(
        path="lib/moved.py",
        line=20,
        end_line=22,
        side="LEFT",
        severity=Severity.CRITICAL,
        category="bug",
        title="Removed the lock",
        suggestion="never used for LEFT\n",
        new_file_line=18,
        fingerprint="9999aaaabbbbcccc",
    ),
)
ODD = dataclasses.replace(
    INCOMPLETE,
    findings=ODD_FINDINGS,
    files=(*COMPLETE.files, FileCoverage("bin/latin-\udce9.txt", "added", False, "did not finish")),
    incremental=True,
)
CASES = {
    "complete": COMPLETE,
    "incomplete": INCOMPLETE,
    "clean": CLEAN,
    "empty-incomplete": EMPTY_INCOMPLETE,
    "odd": ODD,
}


def rdjson(result: ReviewResult) -> dict[str, Any]:
    return json.loads(render(result, "rdjson"))


def codequality(result: ReviewResult) -> list[dict[str, Any]]:
    return json.loads(render(result, "codequality"))


# --- rdjson ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rdjson_schema() -> dict[str, Any]:
    return json.loads((DATA / "rdjson" / "DiagnosticResult.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def rdjson_validator(rdjson_schema: dict[str, Any]) -> jsonschema.Validator:
    validator_class = jsonschema.validators.validator_for(rdjson_schema)
    validator_class.check_schema(rdjson_schema)
    assert validator_class is jsonschema.Draft4Validator
    return validator_class(rdjson_schema)


def undeclared_keys(
    instance: Any, schema: dict[str, Any], root: dict[str, Any], where: str = "$"
) -> list[str]:
    """Keys of `instance` its schema does not declare: reviewdog's protojson would drop them
    without a word (the schema itself allows any property)."""
    while "$ref" in schema:
        schema = root["definitions"][schema["$ref"].removeprefix("#/definitions/")]
    found = []
    if isinstance(instance, dict):
        properties = schema.get("properties", {})
        for key, value in instance.items():
            if key not in properties:
                found.append(f"{where}.{key}")
            else:
                found += undeclared_keys(value, properties[key], root, f"{where}.{key}")
    elif isinstance(instance, list):
        for index, item in enumerate(instance):
            found += undeclared_keys(item, schema.get("items", {}), root, f"{where}[{index}]")
    return found


@pytest.mark.parametrize("case", sorted(CASES))
def test_rdjson_is_valid_against_reviewdogs_schema(
    case: str, rdjson_validator: jsonschema.Validator, rdjson_schema: dict[str, Any]
) -> None:
    text = render(CASES[case], "rdjson")
    document = json.loads(text)
    assert [e.message for e in rdjson_validator.iter_errors(document)] == []
    assert undeclared_keys(document, rdjson_schema, rdjson_schema) == []
    text.encode("utf-8")  # protojson refuses strings that are not valid UTF-8
    assert isinstance(document, dict), "rdjson is one DiagnosticResult, not JSON Lines"


def test_the_rdjson_checks_do_catch_mistakes(
    rdjson_validator: jsonschema.Validator, rdjson_schema: dict[str, Any]
) -> None:
    document = rdjson(COMPLETE)
    document["diagnostics"][0]["severity"] = "CRITICAL"
    document["diagnostics"][1]["location"]["range"]["start"]["line"] = "42"
    assert len(list(rdjson_validator.iter_errors(document))) == 2
    document = rdjson(COMPLETE)
    document["diagnostics"][0]["suggestion"] = document["diagnostics"][0].pop("suggestions")
    assert undeclared_keys(document, rdjson_schema, rdjson_schema) == [
        "$.diagnostics[0].suggestion"
    ]


SMALL = ReviewResult(
    status="complete",
    summary="Fine.",
    findings=(
        finding(
            path="app.py",
            line=3,
            end_line=5,
            severity=Severity.HIGH,
            category="bug",
            title="Off by one",
            body="The loop stops before `n`.",
            suggestion="for i in range(n + 1):\n    total += i\nreturn total\n",
            fingerprint="0123456789abcdef",
        ),
        finding(
            path="lib/old.py",
            line=7,
            side="LEFT",
            severity=Severity.LOW,
            category=None,
            title="Removed check",
            body="",
            placement="summary",
            new_file_line=6,
            fingerprint="fedcba9876543210",
        ),
    ),
    model="m",
    base=SHA_BASE,
    head=SHA_HEAD,
    files=(FileCoverage("app.py", "modified", True), FileCoverage("lib/old.py", "modified", True)),
)


def test_rdjson_values_of_a_small_review() -> None:
    assert rdjson(SMALL) == {
        "source": {"name": "reviewer"},
        "diagnostics": [
            {
                "message": "Off by one\n\nThe loop stops before `n`.",
                "location": {
                    "path": "app.py",
                    "range": {"start": {"line": 3}, "end": {"line": 5}},
                },
                "severity": "ERROR",
                "code": {"value": "bug"},
                "suggestions": [
                    {
                        "range": {"start": {"line": 3}, "end": {"line": 5}},
                        "text": "for i in range(n + 1):\n    total += i\nreturn total",
                    }
                ],
            },
            {
                "message": "Removed check\n\n(On removed line(s) 7 of the base version "
                "111111111111; shown at line 6 of the new file, where they were.)",
                "location": {
                    "path": "lib/old.py",
                    "range": {"start": {"line": 6}, "end": {"line": 6}},
                },
                "severity": "INFO",
                "code": {"value": "review"},
            },
        ],
    }
    linked = json.loads(render(SMALL, "rdjson", information_uri="https://example.com/r"))
    assert linked["source"] == {"name": "reviewer", "url": "https://example.com/r"}


def test_rdjson_severities() -> None:
    expected = {"critical": "ERROR", "high": "ERROR", "medium": "WARNING", "low": "INFO",
                "info": "INFO"}  # fmt: skip
    for severity in Severity:
        result = dataclasses.replace(SMALL, findings=(finding(severity=severity),))
        (diagnostic,) = rdjson(result)["diagnostics"]
        assert diagnostic["severity"] == expected[severity.value]


def apply_as_reviewdog_on_gitlab(lines: list[str], suggestion: dict[str, Any]) -> list[str]:
    """What GitLab does with the block reviewdog posts for a suggestion: ```suggestion:-0+N
    (N = end.line - start.line) on the start line, holding the text and a newline."""
    start, end = suggestion["range"]["start"], suggestion["range"]["end"]
    assert "column" not in start and "column" not in end, "line-wise: no columns"
    replaced = end["line"] - start["line"] + 1
    new = (suggestion["text"] + "\n").splitlines() if suggestion["text"] else []
    first = start["line"] - 1
    return lines[:first] + new + lines[first + replaced :]


def test_rdjson_suggestions_replace_exactly_the_findings_lines() -> None:
    source = [f"line {n}" for n in range(1, 61)]
    by_code = {d["code"]["value"]: d for d in rdjson(COMPLETE)["diagnostics"]}
    sql = by_code["security/critical"]
    (suggestion,) = sql["suggestions"]
    # GitHub's reporter needs the suggestion's lines to equal the comment's.
    assert suggestion["range"] == sql["location"]["range"]
    applied = apply_as_reviewdog_on_gitlab(source, suggestion)
    nasty = COMPLETE.findings[0].suggestion or ""
    assert applied == source[:41] + nasty.splitlines() + source[44:]
    # An empty suggestion deletes the lines.
    (deletion,) = by_code["performance"]["suggestions"]
    assert deletion == {"range": {"start": {"line": 5}, "end": {"line": 5}}, "text": ""}
    assert apply_as_reviewdog_on_gitlab(source, deletion) == source[:4] + source[5:]
    # A finding without a suggestion has none, and a LEFT one never does (old lines).
    assert "suggestions" not in by_code["style"] and "suggestions" not in by_code["bug"]
    (left,) = [d for d in rdjson(ODD)["diagnostics"] if "Removed the lock" in d["message"]]
    assert "suggestions" not in left


def test_rdjson_left_side_findings_point_into_the_new_file() -> None:
    by_code = {d["code"]["value"]: d for d in rdjson(COMPLETE)["diagnostics"]}
    # No place in the new file: the diagnostic names the file only.
    assert by_code["bug"]["location"] == {"path": "lib/auth.py"}
    assert "removed line(s) 7 of the base version 111111111111" in by_code["bug"]["message"]
    assert "the new file has no such place" in by_code["bug"]["message"]
    (left,) = [d for d in rdjson(ODD)["diagnostics"] if "Removed the lock" in d["message"]]
    assert left["location"]["range"] == {"start": {"line": 18}, "end": {"line": 18}}
    assert "removed line(s) 20-22" in left["message"]


def test_rdjson_messages_are_safe_markdown() -> None:
    # reviewdog pastes `message` into a Markdown comment (service/commentutil MarkdownComment).
    (sql,) = [
        d for d in rdjson(COMPLETE)["diagnostics"] if d["code"]["value"] == "security/critical"
    ]
    message = sql["message"]
    assert "@octocat" not in message and "@\u200doctocat" in message
    assert "<!--" not in message and "<details>" not in message
    assert message.count("```") % 2 == 0, "the model's open fence is closed"
    (escape,) = [d for d in rdjson(COMPLETE)["diagnostics"] if d["code"]["value"] == "docs"]
    assert "\x1b" not in escape["message"] and "\x07" not in escape["message"]
    huge = dataclasses.replace(SMALL, findings=(finding(body="word " * 10_000),))
    (diagnostic,) = rdjson(huge)["diagnostics"]
    assert len(diagnostic["message"]) < MAX_BODY_CHARS + 200
    assert "The text was cut at 20,000 characters." in diagnostic["message"]


def test_rdjson_names_files_as_the_json_report_does() -> None:
    paths = {d["location"]["path"] for d in rdjson(ODD)["diagnostics"]}
    assert '"bin/latin-\\351.txt"' in paths, "not UTF-8: git's quoted form"
    assert 'dir with space/new\nline "q".py' in paths and "docs/guide ü.md" in paths
    json_paths = {f["path"] for f in json.loads(render(ODD, "json"))["findings"]}
    assert paths - {"package-lock.json"} <= json_paths


def test_rdjson_incomplete_review_is_an_error_diagnostic_first() -> None:
    first, *rest = rdjson(INCOMPLETE)["diagnostics"]
    assert first["severity"] == "ERROR" and first["code"] == {"value": "review-incomplete"}
    assert first["message"].startswith("The review is incomplete: the budget of 8 turns was ")
    assert "(2 changed files not reviewed)" in first["message"]
    assert first["location"] == {
        "path": "src/db.py",
        "range": {"start": {"line": 1}, "end": {"line": 1}},
    }
    assert len(rest) == len(INCOMPLETE.findings)
    (only,) = rdjson(EMPTY_INCOMPLETE)["diagnostics"]
    assert only["code"]["value"] == "review-incomplete" and "model unreachable" in only["message"]
    assert all(d["code"]["value"] != "review-incomplete" for d in rdjson(COMPLETE)["diagnostics"])
    assert rdjson(CLEAN) == {"source": {"name": "reviewer"}, "diagnostics": []}


def test_rdjson_leaves_suppressed_findings_out() -> None:
    messages = [d["message"] for d in rdjson(COMPLETE)["diagnostics"]]
    assert len(messages) == len(COMPLETE.findings)
    assert not any(m.startswith("Nit") for m in messages)


# --- GitLab Code Quality ---------------------------------------------------------------


@pytest.fixture(scope="module")
def documented_validator() -> jsonschema.Validator:
    schema_file = DATA / "codequality" / "code-quality-report.schema.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def gitlab_validator() -> jsonschema.Validator:
    schema = json.loads((DATA / "codequality" / "gitlab-codeclimate.json").read_text("utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize("case", sorted(CASES))
def test_codequality_is_valid_against_gitlabs_documented_fields_and_parser(
    case: str, documented_validator: jsonschema.Validator, gitlab_validator: jsonschema.Validator
) -> None:
    text = render(CASES[case], "codequality")
    assert not text.startswith("\ufeff") and text.startswith("[")
    issues = json.loads(text)
    assert [e.message for e in documented_validator.iter_errors(issues)] == []
    for issue in issues:  # GitLab's parser validates issue by issue
        assert [e.message for e in gitlab_validator.iter_errors(issue)] == []
    prints = [issue["fingerprint"] for issue in issues]
    assert len(set(prints)) == len(prints), "GitLab keeps one issue per fingerprint"


def test_the_codequality_schemas_do_catch_mistakes(
    documented_validator: jsonschema.Validator, gitlab_validator: jsonschema.Validator
) -> None:
    issues = codequality(COMPLETE)
    issues[0]["severity"] = "high"
    del issues[1]["check_name"]
    del issues[2]["location"]["lines"]
    issues[3]["location"]["path"] = "/abs/path.py"
    assert len(list(documented_validator.iter_errors(issues))) == 4
    del issues[4]["fingerprint"]
    assert len(list(gitlab_validator.iter_errors(issues[4]))) == 1


def test_codequality_values_of_a_small_review() -> None:
    assert codequality(SMALL) == [
        {
            "description": "Off by one",
            "check_name": "reviewer/bug",
            "fingerprint": "0123456789abcdef",
            "severity": "critical",
            "location": {"path": "app.py", "lines": {"begin": 3, "end": 5}},
        },
        {
            "description": "Removed check (on removed line(s) 7 of the base version "
            "111111111111; line 6 of the new file)",
            "check_name": "reviewer/review",
            "fingerprint": "fedcba9876543210",
            "severity": "minor",
            "location": {"path": "lib/old.py", "lines": {"begin": 6}},
        },
    ]


def test_codequality_severities_map_one_to_one() -> None:
    assert CODEQUALITY_SEVERITIES == {
        Severity.CRITICAL: "blocker",
        Severity.HIGH: "critical",
        Severity.MEDIUM: "major",
        Severity.LOW: "minor",
        Severity.INFO: "info",
    }
    for severity in Severity:
        result = dataclasses.replace(SMALL, findings=(finding(severity=severity),))
        (issue,) = codequality(result)
        assert issue["severity"] == CODEQUALITY_SEVERITIES[severity]


def test_codequality_fingerprints_are_the_findings_and_stay_unique() -> None:
    issues = {i["description"]: i for i in codequality(COMPLETE)}
    assert issues["SQL built from user input"]["fingerprint"] == "aaaa000011112222"
    assert issues["SQL built from user input"]["check_name"] == "reviewer/security/critical"
    # A finding made without one gets the stable, line-independent fingerprint.
    unicode_issue = issues["Ünïcödé title ✓ with &lt;U+202E&gt;RTL override"]
    moved = dataclasses.replace(COMPLETE.findings[4], line=300)
    (again,) = codequality(dataclasses.replace(SMALL, findings=(moved,)))
    assert unicode_issue["fingerprint"] == again["fingerprint"]
    # Two findings with one fingerprint (never from the pipeline) both survive in GitLab.
    twice = (finding(line=1, fingerprint="abab"), finding(line=9, fingerprint="abab"))
    prints = [i["fingerprint"] for i in codequality(dataclasses.replace(SMALL, findings=twice))]
    assert prints[0] == "abab" and prints[1] != "abab" and len(prints[1]) == 16


def test_codequality_left_side_and_odd_names() -> None:
    issues = codequality(ODD)
    by_title = {i["description"].split(" (on ")[0]: i for i in issues}
    assert by_title["Removed the None check"]["location"] == {
        "path": "lib/auth.py",
        "lines": {"begin": 1},
    }
    assert by_title["Removed the lock"]["location"]["lines"] == {"begin": 18}
    assert by_title["A name that is not UTF-8"]["location"]["path"] == '"bin/latin-\\351.txt"'
    assert by_title["Secret compared in Python"]["location"] == {
        "path": 'dir with space/new\nline "q".py',
        "lines": {"begin": 4, "end": 6},
    }
    assert "\x1b" not in by_title["Escape \ufffd\\[31mred\ufffd\\[0m in title"]["description"]


def test_codequality_incomplete_review_is_a_blocker_issue() -> None:
    first, *rest = codequality(INCOMPLETE)
    assert first["severity"] == "blocker" and first["check_name"] == "reviewer/review-incomplete"
    assert "the budget of 8 turns was spent before submit_review" in first["description"]
    assert first["location"] == {"path": "src/db.py", "lines": {"begin": 1}}
    assert len(rest) == len(INCOMPLETE.findings)
    # The same incomplete review gives the same issue; another head gives a new one, so the
    # merge request widget shows it as new whatever the target branch's report holds.
    assert codequality(INCOMPLETE)[0] == first
    other_head = dataclasses.replace(INCOMPLETE, head="3" * 40)
    assert codequality(other_head)[0]["fingerprint"] != first["fingerprint"]
    (only,) = codequality(EMPTY_INCOMPLETE)
    assert only["location"]["path"] == "a.py"
    assert codequality(CLEAN) == []
    nothing = dataclasses.replace(EMPTY_INCOMPLETE, files=())
    assert codequality(nothing)[0]["location"] == {"path": ".", "lines": {"begin": 1}}


def test_codequality_file_has_no_byte_order_mark(tmp_path: Path) -> None:
    target = tmp_path / "gl-code-quality-report.json"
    write_report(COMPLETE, "codequality", target)
    data = target.read_bytes()
    assert data.startswith(b"[\n") and json.loads(data.decode("utf-8")) == codequality(COMPLETE)


def test_every_format_is_registered() -> None:
    assert {"rdjson", "codequality"} <= set(FORMATS)


# --- from a real review -------------------------------------------------------------------

APP = "def total(items):\n    return sum(items)\n"
AVERAGE = "\n\ndef average(items):\n    return total(items) / len(items)\n"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("REVIEWER_MODEL", "fake-model")
    for name in ("REVIEWER_FAIL_ON", "REVIEWER_MAX_TURNS", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    yield


def submit_average_finding(line: int) -> dict[str, Any]:
    finding_ = {
        "path": "app.py",
        "line": line,
        "severity": "high",
        "category": "bug",
        "title": "Division by zero on an empty list",
        "body": "`average([])` raises ZeroDivisionError.",
        "suggestion": "    return total(items) / len(items) if items else 0.0\n",
    }
    arguments = {"summary": "Adds `average`.", "findings": [finding_]}
    return reply(tool_calls=[tool_call("submit_review", arguments)])


def review(
    repo: GitRepo, script: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, *args: str
) -> int:
    with FakeLLM(script, on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(["review", "--repo", str(repo.root), "--base", "main", "--quiet", *args])
        llm.assert_no_failures()
    return code


def test_review_writes_rdjson_and_codequality(
    repo: GitRepo,
    env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    rdjson_validator: jsonschema.Validator,
    documented_validator: jsonschema.Validator,
) -> None:
    repo.write("app.py", APP)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", APP + AVERAGE)
    repo.commit("Add average")
    quality = tmp_path / "gl-code-quality-report.json"
    capsys.readouterr()
    args = ("--format", "rdjson", "--format", f"codequality={quality}")
    code = review(repo, [submit_average_finding(6)], monkeypatch, *args)
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert list(rdjson_validator.iter_errors(document)) == []
    (diagnostic,) = document["diagnostics"]
    assert diagnostic["location"] == {
        "path": "app.py",
        "range": {"start": {"line": 6}, "end": {"line": 6}},
    }
    assert diagnostic["suggestions"][0]["text"] == (
        "    return total(items) / len(items) if items else 0.0"
    )
    issues = json.loads(quality.read_text(encoding="utf-8"))
    assert list(documented_validator.iter_errors(issues)) == []
    (issue,) = issues
    assert issue["location"] == {"path": "app.py", "lines": {"begin": 6}}
    assert issue["severity"] == "critical" and issue["check_name"] == "reviewer/bug"

    # The next push moves the code down three lines: the finding moves, its fingerprint not.
    repo.write("app.py", "import math\n\n\n" + APP + AVERAGE)
    repo.commit("Import math")
    moved = tmp_path / "moved.json"
    code = review(
        repo, [submit_average_finding(9)], monkeypatch, "--format", f"codequality={moved}"
    )
    assert code == 0
    (moved_issue,) = json.loads(moved.read_text(encoding="utf-8"))
    assert moved_issue["location"]["lines"] == {"begin": 9}
    assert moved_issue["fingerprint"] == issue["fingerprint"]


def test_an_incomplete_review_fails_closed_in_both_formats(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("app.py", APP)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", APP + AVERAGE)
    repo.commit("Add average")
    monkeypatch.setenv("REVIEWER_MAX_TURNS", "2")
    looping = reply(tool_calls=[tool_call("list_files", {})])
    rd, quality = tmp_path / "review.rdjson", tmp_path / "quality.json"
    args = ("--format", f"rdjson={rd}", "--format", f"codequality={quality}")
    assert review(repo, [looping], monkeypatch, *args) == 2
    (diagnostic,) = json.loads(rd.read_text(encoding="utf-8"))["diagnostics"]
    assert diagnostic["severity"] == "ERROR"
    assert "model-request budget (max_turns = 2)" in diagnostic["message"]
    (issue,) = json.loads(quality.read_text(encoding="utf-8"))
    assert issue["severity"] == "blocker" and issue["location"]["path"] == "app.py"


def test_codequality_descriptions_are_neutralized_like_every_other_sink() -> None:
    # The description carried the model's title raw (`<b>`, `@octocat`).
    hostile = dataclasses.replace(
        SMALL, findings=(finding(title="Use <b>bold</b> and ping @octocat"),)
    )
    (issue,) = codequality(hostile)
    assert "<b>" not in issue["description"] and "@octocat" not in issue["description"]
    assert "@\u200doctocat" in issue["description"]


# --- how sure a finding is, in every format (issue 25) ------------------------------------

# Confirmed with a changed severity, and uncertain with a reason that tries Markdown and a
# mention; a finding without either stays as it was.
SURE = finding(
    title="Confirmed leak",
    fingerprint="c0ffee0000000001",
    confidence=0.9,
    verification=Verification("confirmed", "db.py:9 never closes it.", 2, Severity.MEDIUM),
    severity=Severity.HIGH,
)
DOUBT = finding(
    line=12,
    title="Maybe a race",
    fingerprint="c0ffee0000000002",
    confidence=0.4,
    verification=Verification("uncertain", "Callers may lock first @team <b>x</b>.", 1),
)
PLAIN = finding(line=20, title="Plain", fingerprint="c0ffee0000000003")
VERIFIED = dataclasses.replace(COMPLETE, findings=(SURE, DOUBT, PLAIN))


def test_every_machine_format_says_how_sure_each_finding_is(
    rdjson_validator: jsonschema.Validator,
    rdjson_schema: dict[str, Any],
    documented_validator: jsonschema.Validator,
    gitlab_validator: jsonschema.Validator,
) -> None:
    from tests.test_reports import sarif_run

    # SARIF: the result's property bag.
    sarif = {r["message"]["text"].split("\n")[0]: r["properties"]
             for r in sarif_run(VERIFIED)["results"]}  # fmt: skip
    assert sarif["Confirmed leak"]["confidence"] == 0.9
    assert sarif["Confirmed leak"]["verification"] == {
        "verdict": "confirmed", "reason": "db.py:9 never closes it.", "toolCalls": 2,
        "severityBefore": "medium"}  # fmt: skip
    assert sarif["Maybe a race"]["verification"]["verdict"] == "uncertain"
    assert "confidence" not in sarif["Plain"] and "verification" not in sarif["Plain"]
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert [e.message for e in validator.iter_errors(json.loads(render(VERIFIED, "sarif")))] == []
    # rdjson: the message's last line, as in our own comments, made safe.
    document = rdjson(VERIFIED)
    assert [e.message for e in rdjson_validator.iter_errors(document)] == []
    assert undeclared_keys(document, rdjson_schema, rdjson_schema) == []
    messages = {d["message"].split("\n")[0]: d["message"] for d in document["diagnostics"]}
    assert messages["Confirmed leak"].endswith(
        "(confidence 0.9 · verification: confirmed, severity was medium: db.py:9 never "
        "closes it.)"
    )
    doubt = messages["Maybe a race"].splitlines()[-1]
    assert doubt.startswith("(confidence 0.4 · verification: uncertain: Callers may lock")
    assert "<b>" not in doubt and "@team" not in doubt
    assert "confidence" not in messages["Plain"]
    # Code Quality: the end of the description, no reason; the fingerprint unchanged.
    issues = codequality(VERIFIED)
    assert [e.message for e in documented_validator.iter_errors(issues)] == []
    assert all(list(gitlab_validator.iter_errors(issue)) == [] for issue in issues)
    described = {i["fingerprint"]: i["description"] for i in issues}
    assert described["c0ffee0000000001"] == (
        "Confirmed leak [confidence 0.9 · verification: confirmed, severity was medium]"
    )
    doubt_issue = "Maybe a race [confidence 0.4 · verification: uncertain]"
    assert described["c0ffee0000000002"] == doubt_issue
    assert described["c0ffee0000000003"] == "Plain"
