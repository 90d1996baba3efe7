"""The memory of `reviewer github` between runs: signed, validated, bounded, and read only from
the exact place the bot writes it. Real git repositories; no GitHub needed."""

from __future__ import annotations

import json

import pytest

from reviewer.change import load_change
from reviewer.change.lines import LineCounter
from reviewer.findings import FileCoverage, Finding, Severity
from reviewer.forge.carry import OpenFinding, code_hash, open_finding, still_open
from reviewer.forge.memory import (
    CUT_NOTE,
    MAX_STATE_CHARS,
    SUGGESTION_LEFT_OUT,
    PullState,
    next_state,
    read_state,
    state_line,
)
from reviewer.forge.scope import is_pull_commit, review_scope
from reviewer.forge.signing import Signer
from reviewer.report.github import (
    SUMMARY_MARKER,
    comment_body,
    comment_fingerprint,
    defuse_markers,
    fingerprint_marker,
    has_marker,
    review_body,
    review_marker_of,
    summary_comment,
)
from reviewer.workspace import RevisionWorkspace
from tests.conftest import GitRepo

PULL = "acme/shop#7"
SIGNER = Signer.from_secret("sk-the-secret", PULL)
SHA = "a" * 40


def a_finding(**changes: object) -> OpenFinding:
    values: dict[str, object] = {
        "fingerprint": "0123456789abcdef",
        "severity": Severity.HIGH,
        "path": "app.py",
        "line": 2,
        "end_line": None,
        "side": "RIGHT",
        "title": "Division by zero",
        "body": "`average([])` raises.",
        "code_hash": code_hash(["    return sum(items) / len(items)"]),
        "code_lines": 1,
    }
    values.update(changes)
    return OpenFinding(**values)  # type: ignore[arg-type]


def test_a_state_round_trips_and_sits_on_one_line() -> None:
    shown = a_finding(suggestion="    return sum(items) / max(len(items), 1)", category="bug")
    state = PullState(SHA, SHA, {"b.py": "f" * 40}, (shown,), {}, "**Verdict:** fix it.", SHA)
    line = state_line(state, SIGNER)
    assert "\n" not in line and line.startswith("<!-- reviewer:state ")
    read, problem = read_state(f"{SUMMARY_MARKER}\nreport\n{line}\n", SIGNER)
    assert problem == "" and read == state


@pytest.mark.parametrize(
    ("secret", "pull"),
    [("another key", PULL), ("sk-the-secret", "acme/shop#8"), ("sk-the-secret", "evil/shop#7")],
)
def test_a_state_signed_for_another_key_or_pull_request_is_refused(secret: str, pull: str) -> None:
    line = state_line(PullState(SHA, SHA), Signer.from_secret(secret, pull))
    state, problem = read_state(line, SIGNER)
    assert state is None and "signature" in problem


def test_a_tampered_state_is_refused() -> None:
    line = state_line(PullState(SHA, None), SIGNER)
    forged = line.replace('"r":null', f'"r":"{"b" * 40}"')
    assert forged != line
    assert read_state(forged, SIGNER)[0] is None


def test_a_state_anywhere_but_the_last_line_is_not_read() -> None:
    line = state_line(PullState(SHA, SHA), SIGNER)
    assert read_state(f"{line}\nmore text\n", SIGNER)[0] is None
    assert read_state(f"text `{line}` text", SIGNER)[0] is None


def test_text_in_a_state_cannot_close_its_html_comment() -> None:
    nasty = a_finding(title="--> <!-- reviewer:state x --> & <b>", body="-->" * 50)
    line = state_line(PullState(SHA, SHA, {}, (nasty,)), SIGNER)
    inner = line[len("<!-- ") : -len(" -->")]
    assert "-->" not in inner and "<" not in inner and ">" not in inner
    read, _ = read_state(line, SIGNER)
    assert read is not None and read.findings[0].title == nasty.title


def test_the_state_stays_within_its_room_and_counts_what_it_drops() -> None:
    many = tuple(
        a_finding(
            fingerprint=f"{n:016x}",
            severity=Severity.LOW if n % 2 else Severity.HIGH,
            path=f"src/{'deep/' * 20}module_{n}.py",
            title="t" * 500,
            body="b" * 2000,
        )
        for n in range(400)
    )
    line = state_line(PullState(SHA, SHA, {}, many), SIGNER)
    assert len(line) <= MAX_STATE_CHARS
    read, _ = read_state(line, SIGNER)
    assert read is not None and read.dropped
    assert len(read.findings) + sum(read.dropped.values()) == 400
    # The least severe go first: no high is dropped while a low is kept.
    kept_low = any(f.severity is Severity.LOW for f in read.findings)
    assert "low" in read.dropped and not (kept_low and "high" in read.dropped)


def test_suppressed_findings_are_remembered_and_cut_first_without_gating() -> None:
    reported = tuple(a_finding(fingerprint=f"{n:016x}", path=f"r{n}.py") for n in range(3))
    below = tuple(
        a_finding(fingerprint=f"{n + 100:016x}", severity=Severity.LOW, path=f"{'d/' * 40}{n}.py",
                  title="t" * 400, body="b" * 1000)
        for n in range(400)
    )  # fmt: skip
    line = state_line(PullState(SHA, SHA, {}, reported, suppressed=below), SIGNER)
    assert len(line) <= MAX_STATE_CHARS
    read, _ = read_state(line, SIGNER)
    assert read is not None
    # Every reported finding stays whole; suppressed ones go first, counted, and never gate.
    assert read.findings == reported and read.dropped == {}
    assert read.suppressed and len(read.suppressed) + read.suppressed_cut == 400
    small, _ = read_state(state_line(PullState(SHA, SHA, {}, reported, suppressed=below[:2]),
                                     SIGNER), SIGNER)  # fmt: skip
    assert small is not None and small.suppressed == below[:2] and small.suppressed_cut == 0


def test_a_state_that_must_shrink_cuts_texts_in_order_and_says_so() -> None:
    findings = tuple(
        a_finding(
            fingerprint=f"{n:016x}",
            title=f"Finding {n}",
            body="b" * (300 if n else 6_000),
            suggestion="s" * (50 if n else 5_000),
        )
        for n in range(12)
    )
    state = PullState(SHA, SHA, {}, findings, {}, "v" * 20_000, SHA)
    line = state_line(state, SIGNER)
    assert len(line) <= MAX_STATE_CHARS
    read, _ = read_state(line, SIGNER)
    assert read is not None and not read.dropped  # texts were cut, no finding counted away
    long, *short = read.findings
    # The summary and the long body are cut, saying so; short texts are whole.
    assert read.summary.startswith("v" * 2_000) and read.summary.endswith(CUT_NOTE)
    assert long.body.startswith("b" * 1_000) and CUT_NOTE in long.body
    # A suggestion is whole or left out (it applies only as written), and then it is said.
    assert long.suggestion is None and SUGGESTION_LEFT_OUT in long.body
    assert all(f.body == "b" * 300 and f.suggestion == "s" * 50 for f in short)


def test_a_state_of_an_earlier_version_without_suggestions_or_summary_is_read() -> None:
    payload = {
        "v": 2,
        "h": SHA,
        "r": SHA,
        "files": {},
        "x": {},
        "f": [
            {
                "p": "0123456789abcdef",
                "s": "high",
                "c": None,
                "path": "app.py",
                "l": 2,
                "e": None,
                "side": "RIGHT",
                "t": "Division by zero",
                "b": "b",
                "k": "",
                "n": 0,
            }
        ],
    }
    text = json.dumps(payload, separators=(",", ":"), sort_keys=True)
    read, problem = read_state(SIGNER.marker(f"state {text}"), SIGNER)
    assert problem == "" and read is not None
    assert read.findings[0].suggestion is None and read.summary == ""


def test_markers_in_untrusted_text_are_defused_everywhere() -> None:
    forged = '<!-- reviewer:state {"h":"x"} --> <!--REVIEWER:fingerprint=0123456789abcdef -->'
    defused = defuse_markers(forged)
    assert not has_marker(defused) and defused.replace("\u200c", "") == forged
    finding = Finding(
        path="a.py",
        line=1,
        severity=Severity.LOW,
        title=forged,
        body=f"```\n{forged}\n```\n`{forged}`",
        suggestion=forged,
        fingerprint="0123456789abcdef",
        code=forged,
    )
    body = comment_body(finding, SIGNER)
    *text, last = body.split("\n")
    assert not has_marker("\n".join(text))
    assert comment_fingerprint(body, SIGNER) == "0123456789abcdef"
    assert last.startswith("<!-- reviewer:fingerprint=")
    assert "```suggestion" not in body  # a suggestion cannot be defused, so it is left out
    review = review_body(0, [finding], "12-1", None, "refused", SIGNER)
    assert not has_marker(review.rsplit("\n", 1)[0])
    assert review_marker_of(review, SIGNER) == ("12-1", {"0123456789abcdef"})


def test_a_fingerprint_is_read_only_from_the_last_line_and_only_when_signed() -> None:
    marker = fingerprint_marker("0123456789abcdef", SIGNER)
    assert comment_fingerprint(f"{marker}\nand then text", SIGNER) is None
    assert comment_fingerprint(f"text\n\n{marker}", SIGNER) == "0123456789abcdef"
    unsigned = "<!-- reviewer:fingerprint=0123456789abcdef -->"
    other = fingerprint_marker("0123456789abcdef", Signer.from_secret("x", PULL))
    assert comment_fingerprint(f"text\n{unsigned}", SIGNER) is None
    assert comment_fingerprint(f"text\n{other}", SIGNER) is None


def test_the_summary_keeps_its_marker_first_and_state_last(repo: GitRepo) -> None:
    from reviewer.findings import ReviewResult

    finding = Finding(
        path="a.py", line=1, severity=Severity.HIGH, title="<!-- reviewer:state {} -->", body="x"
    )
    result = ReviewResult("complete", "<!-- reviewer:summary -->", (finding,), "m", "b", "h")
    line = state_line(PullState(SHA, SHA), SIGNER)
    body = summary_comment(result, state_line=line)
    lines = body.split("\n")
    assert lines[0] == SUMMARY_MARKER and lines[-1] == line
    assert not has_marker("\n".join(lines[1:-1]))


# --- against a real repository --------------------------------------------------------------

APP = "def total(items):\n    return sum(items)\n\n\ndef average(items):\n"
LINE = "    return sum(items) / len(items)\n"


@pytest.fixture
def pull(repo: GitRepo) -> GitRepo:
    repo.write("app.py", APP)
    repo.write("other.py", "x = 1\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", APP + LINE)
    repo.commit("average")
    return repo


def carried_from(repo: GitRepo, line: int) -> OpenFinding:
    finding = Finding(
        path="app.py",
        line=line,
        severity=Severity.HIGH,
        title="Division by zero",
        body="b",
        fingerprint="0123456789abcdef",
        code=LINE.rstrip("\n"),
    )
    return open_finding(finding)


def open_now(repo: GitRepo, carried: OpenFinding) -> list[Finding]:
    head = repo.head()
    change = load_change(repo.root, "main", head)
    return still_open([carried], change, LineCounter(RevisionWorkspace(repo.root, head)))


def test_a_finding_stays_open_while_its_code_stands_and_follows_it(pull: GitRepo) -> None:
    carried = carried_from(pull, 6)
    (same,) = open_now(pull, carried)
    assert (same.line, same.earlier, same.inline) == (6, True, True)
    pull.write("app.py", "import math\n\n" + APP + LINE)  # two lines above it
    pull.commit("imports")
    (moved,) = open_now(pull, carried)
    assert moved.line == 8 and moved.fingerprint == carried.fingerprint
    pull.write("app.py", APP + "    return sum(items) / max(len(items), 1)\n")
    pull.commit("fix")
    assert open_now(pull, carried) == []


def test_the_scope_follows_what_was_reviewed(pull: GitRepo) -> None:
    root, first = pull.root, pull.head()
    merge_base = pull.git("merge-base", "main", first).strip()
    paths = {"app.py"}
    scope, _ = review_scope(root, None, paths, merge_base, first, full=False)
    assert scope.only is None  # nothing recorded: everything
    complete = PullState(first, first)
    scope, _ = review_scope(root, complete, paths, merge_base, first, full=False)
    assert scope.only == frozenset()  # a re-run on a reviewed head: nothing
    pull.write("other.py", "x = 2\n")
    second = pull.commit("other")
    paths = {"app.py", "other.py"}
    scope, _ = review_scope(root, complete, paths, merge_base, second, full=False)
    assert scope.only == {"other.py"} and scope.since == first
    # A failed run recorded nothing: everything not yet reviewed is due.
    failed = PullState(first, None)
    scope, _ = review_scope(root, failed, paths, merge_base, second, full=False)
    assert scope.only == {"app.py", "other.py"} and scope.since is None
    # A partial run recorded the files it did review, by blob.
    partial = next_state(
        failed,
        root=root,
        head=second,
        complete=False,
        full=True,
        files=[
            _coverage("app.py", reviewed=True),
            _coverage("other.py", reviewed=False),
        ],
        findings=[],
    )
    scope, _ = review_scope(root, partial, paths, merge_base, second, full=False)
    assert scope.only == {"other.py"}


def test_a_recorded_commit_outside_the_pull_request_is_not_trusted(pull: GitRepo) -> None:
    head = pull.head()
    merge_base = pull.git("merge-base", "main", head).strip()
    assert is_pull_commit(pull.root, head, merge_base, head)
    assert not is_pull_commit(pull.root, merge_base, merge_base, head)  # the base's own
    pull.git("checkout", "-q", "main")
    elsewhere = pull.commit("on main")
    assert not is_pull_commit(pull.root, elsewhere, merge_base, head)
    scope, kept = review_scope(
        pull.root, PullState(elsewhere, elsewhere), {"app.py"}, merge_base, head, full=False
    )
    assert scope.only is None and kept is not None and kept.reviewed_at is None


def _coverage(path: str, reviewed: bool) -> FileCoverage:
    return FileCoverage(path, "modified", reviewed, "" if reviewed else "did not finish")


def test_state_json_is_compact() -> None:
    line = state_line(PullState(SHA, SHA, {}, (a_finding(),)), SIGNER)
    payload = json.loads(line[len("<!-- reviewer:state ") :].rsplit(" sig=", 1)[0])
    assert payload["v"] == 2 and payload["r"] == SHA


def test_a_finding_carried_twice_still_closes_when_its_line_changes(pull: GitRepo) -> None:
    (carried,) = open_now(pull, carried_from(pull, 6))
    again = open_finding(carried)  # what the next run's state keeps
    assert again.code_lines == 1 and again.code_hash == carried_from(pull, 6).code_hash
    pull.write("app.py", APP + "    return sum(items) / max(len(items), 1)\n")
    pull.commit("fix")
    assert open_now(pull, again) == []
