"""Every name git can hold, and every kind of file a change can touch, is reviewable and
commentable: `reviewer review` end to end on one-commit branches, with the scripted model.

Names that are not UTF-8 are shown to the model as git quotes them (`"latin-\\351.txt"`),
read back from that form, and written in reports in that form (SARIF: the bytes
percent-encoded). Names with white space at either end, a backslash or format characters
are taken exactly. A changed symlink or submodule is one line, as GitHub shows it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reviewer.change import load_change
from reviewer.change.batching import Piece
from reviewer.change.diff_text import render_piece
from reviewer.cli.program import main
from reviewer.testing import FakeLLM, reply, tool_call
from reviewer.tools import run_tool
from reviewer.workspace import RevisionWorkspace
from reviewer.workspace.paths import quote_path
from tests.conftest import GitRepo

LATIN = os.fsdecode(b"latin-\xe9.txt")
LATIN_QUOTED = '"latin-\\351.txt"'


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("REVIEWER_MODEL", "fake-model")
    for name in ("REVIEWER_FAIL_ON", "REVIEWER_MAX_TURNS", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def branch(
    repo: GitRepo, change: Callable[[Path], None], before: Callable[[Path], None] | None = None
) -> None:
    repo.write("base.txt", "x\n")
    if before:
        before(repo.root)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    change(repo.root)
    repo.commit("feature")


def finding(path: str, line: int = 1, side: str = "RIGHT", title: str = "") -> dict[str, Any]:
    return {
        "path": path,
        "line": line,
        "side": side,
        "severity": "medium",
        "category": "bug",
        "title": title or f"Problem at {line}",
        "body": "Fix it.",
    }


def review(
    repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[Any],
) -> tuple[int, dict[str, Any], str, dict[str, Any], FakeLLM]:
    out = tmp_path / "out"
    with FakeLLM(steps) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(
            [
                "review", "--repo", str(repo.root), "--base", "main", "--head", "feature",
                "--quiet", "--format", f"json={out}/r.json", "--format", f"markdown={out}/r.md",
                "--format", f"sarif={out}/r.sarif", "--format", f"terminal={out}/r.txt",
            ]
        )  # fmt: skip
        llm.close()
    report = json.loads((out / "r.json").read_text(encoding="utf-8"))
    sarif = json.loads((out / "r.sarif").read_text(encoding="utf-8"))
    return code, report, (out / "r.md").read_text(encoding="utf-8"), sarif, llm


def submit(*findings: dict[str, Any]) -> dict[str, Any]:
    return reply(
        tool_calls=[tool_call("submit_review", {"summary": "ok", "findings": list(findings)})]
    )


def placed(report: dict[str, Any]) -> dict[tuple[str, int, str], dict[str, Any]]:
    return {(f["path"], f["line"], f["side"]): f for f in report["findings"]}


def test_a_name_that_is_not_utf8_is_reviewed_in_git_quoted_form(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    branch(repo, lambda root: (root / LATIN).write_bytes(b"one\ntwo\n"))
    steps = [
        reply(tool_calls=[tool_call("read_file", {"path": LATIN_QUOTED})]),
        submit(finding(LATIN_QUOTED, 2)),
    ]
    code, report, markdown, sarif, llm = review(repo, tmp_path, monkeypatch, steps)
    assert code == 0 and report["status"] == "complete"
    prompt = json.dumps(llm.requests[0].body, ensure_ascii=False)
    assert LATIN_QUOTED.replace("\\", "\\\\").replace('"', '\\"') in prompt
    tool_result = llm.requests[1].body["messages"][-1]["content"]
    assert tool_result == "one\ntwo"
    (only,) = report["findings"]
    assert only["path"] == LATIN_QUOTED and only["inline"] and only["code"] == "two"
    assert [f["path"] for f in report["files"]] == [LATIN_QUOTED]
    assert LATIN_QUOTED in markdown
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri["uri"] == "latin-%E9.txt"


def test_every_request_of_a_review_of_names_that_are_not_utf8_is_valid_utf8(
    make_repo: Callable[[str], GitRepo], env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The repository's own folder name is not UTF-8 either: the prompt names it.
    repo = make_repo(os.fsdecode(b"shop-\xe9"))
    folder, inner = os.fsdecode(b"dir-\xe9"), os.fsdecode(b"in-\xff.py")

    def change(root: Path) -> None:
        (root / LATIN).write_bytes(b"one\ntwo\ndef f():\n    pass\n")
        (root / folder).mkdir()
        (root / folder / inner).write_bytes(b"def g():\n    return 1\n")

    branch(repo, change)
    folder_quoted = '"dir-\\351"'
    lines = {"path": LATIN_QUOTED, "startLine": 1, "endLine": 2}
    calls = [
        tool_call("read_file", {"path": LATIN_QUOTED}),
        tool_call("read_file_lines", lines),
        tool_call("read_file_lines", {**lines, "side": "LEFT"}),  # added: not at the base
        tool_call("list_files", {"path": folder_quoted}),
        tool_call("list_files", {}),
        tool_call("search_text", {"pattern": "def", "path": folder_quoted}),
        tool_call("search_text", {"pattern": "def"}),
        tool_call("get_file_structure", {}),
        tool_call("get_git_blame", {"path": LATIN_QUOTED}),
        tool_call("get_git_log", {"path": folder_quoted}),
        tool_call("read_file", {"path": LATIN}),  # the raw name, as a JSON \udce9 escape
        tool_call("read_file", {"path": '"gone-\\351.txt"'}),
    ]
    steps = [
        # A model's own words may hold a lone surrogate escape too (an emoji cut in half).
        reply("looking \udce9", tool_calls=calls),
        submit(finding(LATIN_QUOTED, 2), finding(LATIN_QUOTED, 99, title="Past the end")),
        submit(finding(LATIN_QUOTED, 2)),
    ]
    out = tmp_path / "out"
    with FakeLLM(steps) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        code = main(
            [
                "review", "--repo", str(repo.root), "--base", "main", "--head", "feature",
                "--quiet", "--format", f"json={out}/r.json", "--transcript", f"{out}/t.jsonl",
            ]
        )  # fmt: skip
        llm.close()
    report = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert code == 0 and report["status"] == "complete", report.get("stop_reason")
    assert len(llm.requests) == 3 and llm.failures == []
    for request in llm.requests:  # a lone surrogate escape would not survive this
        json.dumps(request.body, ensure_ascii=False).encode("utf-8")
    first = llm.requests[0].body["messages"]
    assert '`"shop-\\351"`' in first[0]["content"]
    results = [m["content"] for m in llm.requests[1].body["messages"] if m["role"] == "tool"]
    assert results[4] == f"base.txt\n{folder_quoted}/\n{LATIN_QUOTED}"
    assert results[10] == "one\ntwo\ndef f():\n    pass"
    assert "'\"gone-\\351.txt\"' does not exist" in results[11]
    assert llm.requests[1].body["messages"][2]["content"] == "looking \ufffd"
    rejected = llm.requests[2].body["messages"][-1]["content"]
    assert f"finding 2 ({LATIN_QUOTED}:99): line 99 is past the end of '{LATIN_QUOTED}'" in (
        rejected
    )
    (only,) = report["findings"]
    assert only["path"] == LATIN_QUOTED and only["code"] == "two"
    # The transcript (JSON lines) is written, and holds the same words the model read.
    transcript = (out / "t.jsonl").read_text(encoding="utf-8").splitlines()
    results = [e["result"]["content"] for e in map(json.loads, transcript) if "result" in e]
    assert rejected in results


@pytest.mark.parametrize("name", [" lead.txt", "trail.txt ", "back\\slash.txt", '"quoted".txt'])
def test_names_with_edge_spaces_and_backslashes_are_taken_exactly(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    branch(repo, lambda root: (root / name).write_text("a\nb\n"))
    code, report, _markdown, _sarif, llm = review(
        repo, tmp_path, monkeypatch, [submit(finding(name, 2))]
    )
    assert code == 0 and report["status"] == "complete"
    (only,) = report["findings"]
    assert (only["path"], only["inline"], only["code"]) == (name, True, "b")
    # The model saw the name quoted, so a space at either end cannot be lost.
    prompt = llm.requests[0].body["messages"][-1]["content"]
    assert f"### {quote_path(name)} (added" in prompt


@pytest.mark.parametrize(
    "name", ["a\u200bb.txt", "family-\U0001f468\u200d\U0001f469.txt", "rtl-\u202etxt.exe"]
)
def test_names_with_format_characters_are_commentable_and_shown_visibly(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    branch(repo, lambda root: (root / name).write_text("a\nb\n"))
    code, report, markdown, _sarif, _llm = review(
        repo, tmp_path, monkeypatch, [submit(finding(name, 1))]
    )
    assert code == 0
    (only,) = report["findings"]
    assert only["path"] == name and only["inline"]
    # People see the character as an escape, never as an invisible part of the name.
    assert quote_path(name) in markdown and name not in markdown


def test_changed_symlinks_are_one_line_as_github_shows_them(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def change(root: Path) -> None:
        (root / "dir").mkdir()
        (root / "dir/x.txt").write_text("x\n")
        os.symlink("nowhere/at/all", root / "dangling")
        os.symlink("dir", root / "to-dir")
        os.symlink("/etc/passwd", root / "outside")
        os.symlink("../../escape", root / "dir/up")

    branch(repo, change)
    steps = [submit(*(finding(p) for p in ("dangling", "to-dir", "outside", "dir/up")))]
    code, report, _md, _sarif, _llm = review(repo, tmp_path, monkeypatch, steps)
    assert code == 0 and report["status"] == "complete"
    found = {f["path"]: f for f in report["findings"]}
    assert {p: (f["inline"], f["code"]) for p, f in found.items()} == {
        "dangling": (True, "nowhere/at/all"),
        "to-dir": (True, "dir"),
        "outside": (True, "/etc/passwd"),
        "dir/up": (True, "../../escape"),
    }


def test_a_type_change_places_both_sides_like_the_submission_check(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def to_link(root: Path) -> None:
        (root / "thing").unlink()
        os.symlink("base.txt", root / "thing")

    branch(repo, to_link, before=lambda root: (root / "thing").write_text("1\n2\n3\n"))
    steps = [submit(finding("thing", 1, title="Link"), finding("thing", 2, "LEFT", "Gone"))]
    code, report, _md, _sarif, _llm = review(repo, tmp_path, monkeypatch, steps)
    assert code == 0
    found = placed(report)
    assert (
        found[("thing", 1, "RIGHT")]["inline"]
        and found[("thing", 1, "RIGHT")]["code"] == "base.txt"
    )
    left = found[("thing", 2, "LEFT")]
    assert left["inline"] and left["code"] == "2", left["placement_note"]


def test_a_submodule_pointer_takes_a_right_finding_on_line_one(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = "1" * 40, "2" * 40

    def pointer(sha: str) -> Callable[[Path], None]:
        return lambda _root: repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha},sub")

    repo.write("base.txt", "x\n")
    pointer(old)(repo.root)
    repo.git("commit", "-q", "-m", "base")
    repo.git("checkout", "-q", "-b", "feature")
    pointer(new)(repo.root)
    repo.git("commit", "-q", "-m", "bump")
    steps = [submit(finding("sub", 1, title="Bump"), finding("sub", 1, "LEFT", "Old"))]
    code, report, _md, _sarif, _llm = review(repo, tmp_path, monkeypatch, steps)
    assert code == 0 and report["status"] == "complete"
    found = placed(report)
    assert found[("sub", 1, "RIGHT")]["inline"]
    assert found[("sub", 1, "RIGHT")]["code"] == f"Subproject commit {new}"
    assert found[("sub", 1, "LEFT")]["inline"]


def test_removed_lines_of_a_cut_hunk_can_be_read_at_the_base(repo: GitRepo) -> None:
    old = "".join(f"old line {n}\n" for n in range(1, 401))
    repo.write("big.txt", old)
    base = repo.commit("base")
    repo.write("big.txt", "".join(f"new line {n}\n" for n in range(1, 401)))
    head = repo.commit("rewrite")
    change = load_change(repo.root, base, head)
    (file,) = change.files
    text = render_piece(Piece(file, None, ""), 4_000)
    assert "removed lines (-N) with read_file_lines and side LEFT" in text
    workspace = RevisionWorkspace(repo.root, head)
    workspace.base = RevisionWorkspace(repo.root, change.base)
    args = {"path": "big.txt", "startLine": 300, "endLine": 301, "side": "LEFT"}
    result = run_tool("read_file_lines", args, workspace)
    assert result.text == "300: old line 300\n301: old line 301"
    right = run_tool("read_file_lines", {**args, "side": "right"}, workspace)
    assert right.text == "300: new line 300\n301: new line 301"
    alone = RevisionWorkspace(repo.root, head)
    refused = run_tool("read_file_lines", args, alone)
    assert refused.is_error and "side LEFT reads the base of a change, and none" in refused.text


def test_the_base_is_there_for_the_model_in_a_review(
    repo: GitRepo, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    branch(
        repo,
        lambda root: (root / "f.txt").write_text("new\n"),
        before=lambda root: (root / "f.txt").write_text("old\n"),
    )
    steps = [
        reply(
            tool_calls=[
                tool_call(
                    "read_file_lines",
                    {"path": "f.txt", "startLine": 1, "endLine": 1, "side": "LEFT"},
                )
            ]
        ),
        submit(),
    ]
    code, _report, _md, _sarif, llm = review(repo, tmp_path, monkeypatch, steps)
    assert code == 0
    assert llm.requests[1].body["messages"][-1]["content"] == "1: old"


def test_github_sinks_take_a_name_that_is_not_utf8() -> None:
    from reviewer.findings import FileCoverage, Finding, ReviewResult, Severity
    from reviewer.report.github import annotations, summary_comment

    odd = Finding(path=LATIN, line=2, severity=Severity.HIGH, title="t", body="b", code="two")
    result = ReviewResult(
        status="complete",
        summary="s",
        findings=(odd,),
        model="m",
        base="a" * 40,
        head="b" * 40,
        files=(FileCoverage(LATIN, "added", True),),
    )
    body = summary_comment(result, state_line="<!-- state -->")
    body.encode("utf-8")  # no lone surrogate reaches GitHub
    assert LATIN_QUOTED in body
    (line,) = annotations(result.findings)
    line.encode("utf-8")
    assert "file=" + LATIN_QUOTED.replace(":", "%3A").replace(",", "%2C") in line
