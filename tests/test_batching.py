"""Large changes: batches that fit the window, related files together, every file covered."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from reviewer.change import Hunk, load_change
from reviewer.change.batching import Batch, Piece, group_key, plan_batches
from reviewer.change.diff_text import render_hunk, render_piece, rendered_size
from reviewer.cli.program import main
from reviewer.loop.tokens import estimate_request_tokens
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo

_FILE = re.compile(r"^### (\S+) \(", re.MULTILINE)
_ADDED = re.compile(r"^\s+(\d+) \+ ", re.MULTILINE)
# A guard only: waits that end at once when the code works.
GUARD_SECONDS = 60.0


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("src/app/models.py", "src/app::models"),
        ("src/app/test_models.py", "src/app::models"),
        ("src/app/tests/test_models.py", "src/app::models"),
        ("pkg/server_test.go", "pkg::server"),
        ("web/button.test.tsx", "web::button"),
        ("README.md", "::README"),
    ],
)
def test_tests_are_grouped_with_their_code(path: str, key: str) -> None:
    assert group_key(path) == key


def make_change(repo: GitRepo, files: dict[str, str]) -> None:
    repo.write("seed.txt", "seed\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("big change")


def body(lines: int, word: str) -> str:
    return "".join(f"{word}_{n} = compute({n}, '{word}')\n" for n in range(lines))


def test_batches_fit_the_budget_and_keep_directories_together(repo: GitRepo) -> None:
    files = {
        f"{d}/mod{n}.py": body(40, f"{d}{n}") for d in ("api", "core", "web") for n in range(4)
    }
    files["api/test_mod0.py"] = body(10, "t")
    make_change(repo, files)
    change = load_change(repo.root, "main", repo.head())
    budget = 9000
    batches = plan_batches(list(change.files), budget, lambda p: len(p.path) * 0 + 1800)
    assert sum(len(b.pieces) for b in batches) == len(change.files)
    for batch in batches:
        assert len(batch.pieces) * 1800 <= budget
    where = {piece.path: n for n, b in enumerate(batches) for piece in b.pieces}
    assert where["api/test_mod0.py"] == where["api/mod0.py"]


def test_a_file_larger_than_a_batch_is_split_by_hunks(repo: GitRepo) -> None:
    repo.write("big.py", body(400, "v"))
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    text = body(400, "v").splitlines(keepends=True)
    for n in range(0, 400, 40):
        text[n] = f"changed_{n} = True\n"
    repo.write("big.py", "".join(text))
    repo.commit("many hunks")
    change = load_change(repo.root, "main", repo.head())
    (file,) = change.files
    assert len(file.hunks) == 10
    batches = plan_batches([file], 1500, lambda p: 300 * len(p.hunks or file.hunks))
    assert [b.pieces[0].part for b in batches] == [f"part {n} of 2" for n in (1, 2)]
    assert sum(len(b.pieces[0].hunks or ()) for b in batches) == 10


def split_review_env(monkeypatch: pytest.MonkeyPatch, **overrides: str) -> None:
    """The environment of a review that a 16,000-token window splits into parts."""
    settings = {
        "NO_PROXY": "127.0.0.1",
        "OPENAI_API_KEY": "k",
        "REVIEWER_MODEL": "fake-model",
        "REVIEWER_CONTEXT_WINDOW": "16000",
        **overrides,
    }
    for name, value in settings.items():
        monkeypatch.setenv(name, value)


def submit_for_task(request: dict[str, Any]) -> dict[str, Any]:
    """A model that reviews whatever part it is shown: one finding per batch, on the first
    added line of the first file in its diff."""
    if request["messages"][-1]["role"] == "tool":
        return reply(content="done")  # never reached: submit ends the loop
    task = request["messages"][1]["content"].split("## The diff", 1)[1]
    first_file = _FILE.search(task)
    assert first_file is not None
    line = int(_ADDED.search(task, first_file.end()).group(1))  # type: ignore[union-attr]
    finding = {
        "path": first_file.group(1),
        "line": line,
        "severity": "low",
        "title": f"Look at {first_file.group(1)}",
        "body": "Checked.",
    }
    arguments = {"summary": f"Reviewed {first_file.group(1)}.", "findings": [finding]}
    return reply(tool_calls=[tool_call("submit_review", arguments)])


def test_a_change_larger_than_the_window_is_reviewed_in_batches(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"pkg{d}/mod{n}.py": body(120, f"p{d}m{n}") for d in range(6) for n in range(3)}
    files["package-lock.json"] = '{"lockfileVersion": 3}\n'
    files["vendor/lib/x.py"] = "x = 1\n"
    files["gen/api_pb2.py"] = "# generated\n"
    # An added file's own "DO NOT EDIT" is the change's word, not a reason to skip it
    # (tests/test_hostile_inputs.py): it is reviewed like the others.
    files["src/schema.py"] = "# Code generated by tool. DO NOT EDIT.\nX = 1\n"
    make_change(repo, files)
    window = 16_000
    split_review_env(monkeypatch, REVIEWER_CONTEXT_WINDOW=str(window), REVIEWER_CONCURRENCY="3")
    in_flight, peak, arrived = 0, 0, 0
    lock = threading.Lock()
    overlapped = threading.Event()

    def slow_submit(request: dict[str, Any]) -> dict[str, Any]:
        nonlocal in_flight, peak, arrived
        with lock:
            arrived += 1
            gated = arrived == 1  # the first part's request goes alone (the first-answer gate)
            in_flight += 1
            peak = max(peak, in_flight)
            if in_flight >= 2:
                overlapped.set()
        # Held until another part's request is out too: that the parts run at once is shown
        # by this order, not by a sleep that has to overlap. The guard is reached only if they
        # never do (then peak stays 1 and the test fails; once is enough).
        if not gated and not overlapped.wait(GUARD_SECONDS):
            overlapped.set()
        with lock:
            in_flight -= 1
        return submit_for_task(request)

    with FakeLLM([slow_submit], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        out = tmp_path / "r.json"
        code = main(
            [
                "review",
                "--repo",
                str(repo.root),
                "--base",
                "main",
                "--quiet",
                "--format",
                f"json={out}",
            ]
        )
        bodies = llm.bodies
        llm.assert_no_failures()
    report = json.loads(out.read_text())
    assert code == 0 and report["status"] == "complete"
    assert len(bodies) >= 3 and peak >= 2  # several batches, some at the same time
    for body_ in bodies:
        assert estimate_request_tokens(body_["messages"], body_["tools"]) < window
    files_report = {f["path"]: f for f in report["files"]}
    reviewed = {p for p, f in files_report.items() if f["reviewed"]}
    assert reviewed == {p for p in files if p.startswith("pkg")} | {"src/schema.py"}
    assert files_report["package-lock.json"]["reason"] == "lock file"
    assert files_report["vendor/lib/x.py"]["reason"] == "vendored code"
    assert files_report["gen/api_pb2.py"]["reason"] == "generated file"
    assert len(report["findings"]) == len(bodies)  # one per batch, merged
    assert "Part 1 of" in report["summary"]
    shown = [
        set(_FILE.findall(b["messages"][1]["content"].split("## The diff", 1)[1])) for b in bodies
    ]
    assert set().union(*shown) == reviewed  # every reviewed file was shown in some batch
    assert sum(len(s) for s in shown) == len(reviewed)  # and in one batch only


def test_the_files_of_a_part_that_did_not_finish_are_not_called_reviewed(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"pkg{d}/mod{n}.py": body(120, f"p{d}m{n}") for d in range(4) for n in range(3)}
    make_change(repo, files)
    split_review_env(monkeypatch, REVIEWER_CONCURRENCY="2", REVIEWER_MAX_RETRIES="0")

    def fail_on_pkg2(request: dict[str, Any]) -> dict[str, Any]:
        task = request["messages"][1]["content"].split("## The diff", 1)[1]
        if "### pkg2/" in task:
            return {"error": {"message": "this part breaks the server"}, "status": 400}
        return submit_for_task(request)

    outputs = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "markdown", "sarif", "terminal")}
    with FakeLLM([fail_on_pkg2], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        for fmt, path in outputs.items():
            args += ["--format", f"{fmt}={path}"]
        code = main(args)
    assert code == 2
    report = json.loads(outputs["json"].read_text())
    assert report["status"] == "incomplete"
    by_path = {f["path"]: f for f in report["files"]}
    failed = {p for p in files if p.startswith("pkg2/")}
    assert {p for p, f in by_path.items() if not f["reviewed"]} == failed
    for path in failed:
        assert "did not finish" in by_path[path]["reason"]
        assert "this part breaks the server" in by_path[path]["reason"]
    terminal = outputs["terminal"].read_text()
    markdown = outputs["markdown"].read_text()
    sarif = json.loads(outputs["sarif"].read_text())
    notes = [
        n["message"]["text"]
        for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    ]
    # The three files share one reason: said once, then the files (JSON keeps one each).
    not_reviewed = terminal.split("Not reviewed (3)", 1)[1]
    assert not_reviewed.count("did not finish") == 1 and "(3 files):" in not_reviewed
    files_section = markdown.split("### Files", 1)[1]
    assert files_section.count("did not finish") == 1 and "(3 files):" in files_section
    for path in failed:
        assert f"\n    {path}\n" in not_reviewed
        assert f"\n  - `{path}`\n" in files_section
        assert any(path in note and "did not finish" in note for note in notes)
    assert "9 reviewed, 3 not reviewed" in terminal


def test_progress_of_a_split_review_is_labelled_by_part(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    make_change(
        repo, {f"pkg{d}/mod{n}.py": body(120, f"p{d}m{n}") for d in range(6) for n in range(3)}
    )
    split_review_env(monkeypatch, REVIEWER_CONCURRENCY="2")
    with FakeLLM([submit_for_task], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main"]
        assert main([*args, "--format", f"json={tmp_path / 'r.json'}"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if " turn " in line]
    parts = {line.split(" · ")[0] for line in lines}
    assert len(parts) >= 2 and all(re.match(r"reviewer: part \d+/\d+ \(", p) for p in parts)


@pytest.mark.parametrize(
    ("paths", "label"),
    [
        (["src/api/a.py", "src/api/b.py"], "src/api/, 2 files"),
        (["src/api/a.py", "src/web/b.py", "src/c.py"], "src/, 3 files"),
        (["a.py", "b.py", "c.py"], "top level, 3 files"),
        (["README.md", "src/a.py"], "top level and src/, 2 files"),
        (["docs/x.md", "lib/y.py", "src/z.py"], "docs/, lib/ and src/, 3 files"),
        (["a/1.py", "b/2.py", "c/3.py", "d/4.py", "e.py"], "a/, b/ and 3 more, 5 files"),
        (["src/only.py"], "src/only.py"),
    ],
)
def test_a_part_label_reads_inside_parentheses(repo: GitRepo, paths: list[str], label: str) -> None:
    make_change(repo, {path: "x = 1\n" for path in paths})
    files = {f.path: f for f in load_change(repo.root, "main", repo.head()).files}
    batch = Batch(tuple(Piece(files[path]) for path in paths))
    assert batch.label == label
    # Never a parenthesis or an ellipsis of its own: `part 1/2 (src/api/, 65 files)`.
    assert not set(batch.label) & set("()…")


def test_progress_lines_reasons_and_summary_use_the_readable_label(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    files = {f"pkg{d}/mod{n}.py": body(120, f"p{d}m{n}") for d in range(3) for n in range(3)}
    files.update({f"top{n}.py": body(120, f"t{n}") for n in range(3)})
    make_change(repo, files)
    split_review_env(monkeypatch, REVIEWER_CONCURRENCY="1", REVIEWER_MAX_RETRIES="0")

    def fail_at_the_top(request: dict[str, Any]) -> dict[str, Any]:
        if "### top0.py" in request["messages"][1]["content"]:
            return {"error": {"message": "this part breaks the server"}, "status": 400}
        return submit_for_task(request)

    with FakeLLM([fail_at_the_top], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main"]
        assert main([*args, "--format", f"json={tmp_path / 'r.json'}"]) == 2
    err = capsys.readouterr().err
    parts = {line.split(" · ")[0] for line in err.splitlines() if " turn " in line}
    assert len(parts) >= 2
    for part in parts:
        assert re.fullmatch(r"reviewer: part \d+/\d+ \([^()…]+\)", part), part
    assert any(re.fullmatch(r"reviewer: part 1/\d+ \(top level, 3 files\)", p) for p in parts)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["incomplete_reason"].startswith("part 1 (top level, 3 files): ")
    assert "**Part 1 of " in report["summary"] and " (top level, 3 files):**" in report["summary"]


def test_each_part_lists_its_own_files_and_the_rest_by_directory(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        f"pkg{d}/sub{n % 2}/mod{n}.py": body(60, f"p{d}m{n}") for d in range(8) for n in range(6)
    }
    files.update({f"vendor/lib{n}.py": "x = 1\n" for n in range(70)})
    make_change(repo, files)
    split_review_env(monkeypatch, REVIEWER_CONCURRENCY="2")
    with FakeLLM([submit_for_task], on_exhausted="repeat_last") as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        assert main([*args, "--format", f"json={tmp_path / 'r.json'}"]) == 0
        tasks = [b["messages"][1]["content"] for b in llm.bodies]
    assert len(tasks) >= 3
    reviewed = {p for p in files if not p.startswith("vendor/")}
    listed_everywhere: list[str] = []
    for task in tasks:
        section = task.split("## Files of the change", 1)[1].split("## The diff", 1)[0]
        own = re.findall(r"^- `(pkg[^`]+)` \(added\)$", section, re.M)
        shown = set(re.findall(r"^### (\S+) \(", task.split("## The diff", 1)[1], re.M))
        assert set(own) == shown  # a part lists exactly the files it shows
        listed_everywhere += own
        others = re.findall(r"^- `([^`]+)`: (\d+) files?$", section, re.M)
        assert 0 < len(others) <= 30
        assert sum(int(n) for _, n in others) == len(reviewed) - len(own)
        # Skipped files are listed with their reason, at most 50, then counted.
        assert len(re.findall(r"not shown, vendored code", section)) == 50
        assert "- … and 20 more files." in section
    assert sorted(listed_everywhere) == sorted(reviewed)


def _render_from_lines(hunk: Hunk) -> list[str]:
    """The rendering as it was built from line objects: the reference."""
    ranges = f"-{hunk.old_start},{hunk.old_count} +{hunk.new_start},{hunk.new_count}"
    out = [f"@@ {ranges} @@ {hunk.section}".rstrip()]
    for line in hunk.lines:
        if line.kind == "add":
            out.append(f"{line.new_line:>6} + {line.text}")
        elif line.kind == "del":
            out.append(f"{'-' + str(line.old_line):>6} - {line.text}")
        else:
            out.append(f"{line.new_line:>6}   {line.text}")
    return out


def test_rendering_from_the_hunk_text_matches_the_lines_and_its_size_bound(repo: GitRepo) -> None:
    repo.write("crlf.txt", "a\r\nb\r\nc\r\n")
    repo.write("tail.txt", "one\ntwo")
    repo.write("blank.txt", "x\n\n\ny\n")
    repo.write("big.txt", "".join(f"line {n}\n" for n in range(1, 300)))
    repo.commit("base")
    repo.write("crlf.txt", "a\r\nB\r\nc\r\nd\r")
    repo.write("tail.txt", "one\ntwo\nthree")
    repo.write("blank.txt", "x\n\n\n\ny\nz\n")
    repo.write("big.txt", "".join(f"line {n}{'!' if n % 40 == 0 else ''}\n" for n in range(1, 300)))
    repo.write("new.txt", "fresh\n")
    head = repo.commit("change")
    change = load_change(repo.root, "HEAD~1", head)
    assert len(change.files) == 5
    for file in change.files:
        for hunk in file.hunks:
            assert render_hunk(hunk) == _render_from_lines(hunk), file.path
        whole = Piece(file)
        assert rendered_size(whole) >= len(render_piece(whole, 10**9)), file.path
