"""Suggestions that apply: each shape of suggestion that would not apply cleanly is left out
of the comment, the finding kept, the reason in every report. A scripted model over real
HTTP submits one finding per shape on a real git repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.cli.program import main
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo
from tests.test_batching import make_change

APP = """import os


def load(path):
    with open(path) as handle:
        data = handle.read()
    return data.strip()


def total(values):
    result = 0
    for value in values:
        result += value
    return result
"""

# title -> (line, end_line, suggestion, what the reason says; "" when it is kept)
SHAPES: dict[str, tuple[int, int, str, str]] = {
    "Alpha": (7, 7, "    return data.strip()\n", "changes nothing"),
    # A fence that wraps the whole suggestion is taken off: kept, unwrapped (UNWRAPPED).
    "Bravo": (7, 7, "```python\n    return data\n```", ""),
    "Charlie": (7, 7, "-    return data.strip()\n+    return data", "written as a diff"),
    "Delta": (7, 7, "        data = handle.read()\n    return data or ''", "repeats line 6, above"),
    "Echo": (11, 12, "    result = 0.0\n    for value in values:\n        result += value",
             "repeats line 13, below"),
    "Foxtrot": (7, 7, "    return data.strip(", "brackets do not balance"),
    "Golf": (7, 7, "return data.strip() or None", "indentation (none) does not match"),
    "Hotel": (7, 7, "    return data.strip() +", "no longer parses as Python (line 7"),
    "India": (7, 7, "    return data.strip() or None", ""),
    "Juliet": (14, 14, "\treturn result", "indentation (1 tab) does not match"),
    "Kilo": (7, 7, "````suggestion\n    return data or ''\n````\n", ""),
    # Fences that do not wrap it all are its content, checked as such.
    "Lima": (7, 7, "```python\n    return data\n```\n    # done", "indentation (none)"),
    "Mike": (7, 7, "~~~\n    return data\n```", "indentation (none)"),
    # Applied as written, it cannot show what it holds: hidden text is left out of it. An
    # emoji's presentation selector is ordinary writing, kept.
    "November": (7, 7, "    return data.strip() or 'n\u200bone\u202e'",
                 "adds characters a reader cannot see (U+200B, U+202E)"),
    "Oscar": (7, 7, "    return data.strip() or '\u26a0\ufe0f'", ""),
}  # fmt: skip
# What is posted for a suggestion that a wrapping fence was taken off.
UNWRAPPED = {"Bravo": "    return data", "Kilo": "    return data or ''\n"}


def findings() -> list[dict[str, Any]]:
    return [
        {"path": "app.py", "line": line, "end_line": end, "severity": "medium",
         "category": "bug", "title": f"{title} shape", "body": "See the suggestion.",
         "suggestion": suggestion}
        for title, (line, end, suggestion, _reason) in SHAPES.items()
    ]  # fmt: skip


def test_each_suggestion_that_would_not_apply_is_left_out_with_its_reason(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_change(repo, {"app.py": APP})
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("REVIEWER_MODEL", "fake-model")
    arguments = {"summary": "Reviewed.", "findings": findings()}
    outputs = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "markdown", "terminal", "sarif")}
    with FakeLLM([reply(tool_calls=[tool_call("submit_review", arguments)])]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        for fmt, path in outputs.items():
            args += ["--format", f"{fmt}={path}"]
        assert main(args) == 0
        llm.assert_no_failures()
    report = json.loads(outputs["json"].read_text())
    by_title = {f["title"].split()[0]: f for f in report["findings"]}
    assert set(by_title) == set(SHAPES)  # every finding stays
    for title, (_line, _end, suggestion, reason) in SHAPES.items():
        finding = by_title[title]
        if reason:
            assert finding["suggestion"] is None, title
            assert reason in finding["suggestion_dropped"], (title, finding["suggestion_dropped"])
        else:
            posted = UNWRAPPED.get(title, suggestion)
            assert finding["suggestion"] == posted and finding["suggestion_dropped"] == ""
    markdown = outputs["markdown"].read_text()
    terminal = outputs["terminal"].read_text()
    dropped = sum(1 for _l, _e, _s, reason in SHAPES.values() if reason)
    assert markdown.count("Suggested change left out: ") == dropped
    assert terminal.count("Suggested change left out: ") == dropped
    sarif = json.loads(outputs["sarif"].read_text())
    props = [r["properties"] for r in sarif["runs"][0]["results"]]
    assert sum(1 for p in props if "suggestionDropped" in p) == dropped


def test_a_file_that_did_not_parse_before_is_not_held_to_parsing(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_change(repo, {"broken.py": "def f(:\n    return 1\n"})
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("REVIEWER_MODEL", "fake-model")
    finding = {"path": "broken.py", "line": 2, "severity": "low", "title": "Return two",
               "body": "x", "suggestion": "    return 2 +"}  # fmt: skip
    arguments = {"summary": "Reviewed.", "findings": [finding]}
    out = tmp_path / "r.json"
    with FakeLLM([reply(tool_calls=[tool_call("submit_review", arguments)])]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        assert main([*args, "--format", f"json={out}"]) == 0
    (kept,) = json.loads(out.read_text())["findings"]
    assert kept["suggestion"] == "    return 2 +" and kept["suggestion_dropped"] == ""


# --- a README's fenced example (issue 32, item 9) -------------------------------------------

README_BASE = "# Shop\n\nInstall it:\n\n```sh\npip install shop\n```\n\nThen run it.\n"
README_HEAD = README_BASE.replace("pip install shop", "pip instal shop")
# Lines 5-7 are the fenced example: the right replacement is a fenced example too.
EXAMPLE = "```sh\npip install shop\n```\n"
# A prose line, the suggestion wrapped by the model in a fence labelled as Markdown.
PROSE = "```markdown\nThen run `shop --help`.\n```"


def readme_findings() -> list[dict[str, Any]]:
    return [
        {"path": "README.md", "line": 5, "end_line": 7, "severity": "low", "category": "docs",
         "title": "The install command is misspelt", "body": "`instal` is not a pip command.",
         "suggestion": EXAMPLE},
        {"path": "README.md", "line": 9, "severity": "low", "category": "docs",
         "title": "Say how to see the options", "body": "`shop` alone prints nothing.",
         "suggestion": PROSE},
    ]  # fmt: skip


def suggestion_blocks(body: str) -> list[tuple[str, str]]:
    """The fenced blocks of a posted body, as a CommonMark reader (GitHub, GitLab) sees
    them: (info string, content)."""
    from markdown_it import MarkdownIt

    return [
        (token.info, token.content)
        for token in MarkdownIt("commonmark").parse(body)
        if token.type == "fence"
    ]


def readme_change(repo: GitRepo) -> None:
    repo.write("README.md", README_BASE)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("README.md", README_HEAD)
    repo.commit("Reword the README")


def test_a_readme_suggestion_that_holds_a_fence_is_posted_on_github_whole(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from reviewer.testing.fake_github import FakeGitHub
    from tests.test_action import TOKEN, run_action, submit

    readme_change(repo)
    with FakeGitHub(
        repo.root, repository="acme/shop", number=7, token=TOKEN,
        base_sha=repo.git("rev-parse", "main").strip(), head_sha=repo.head(),
    ) as github:  # fmt: skip
        run = run_action(
            github, repo.root, [submit(*readme_findings())], tmp_path, monkeypatch, capsys
        )
        assert run.code == 0, run.err
        bodies = {c["line"]: c["body"] for c in github.review_comments}
    assert sorted(bodies) == [7, 9]
    # The fenced example is the replacement, whole: a longer fence holds it, and the
    # block GitHub applies is exactly the replacement text.
    assert suggestion_blocks(bodies[7]) == [("suggestion", EXAMPLE)]
    assert "````suggestion\n```sh\npip install shop\n```\n````" in bodies[7]
    # The fence the model wrapped a prose line in is taken off.
    assert suggestion_blocks(bodies[9]) == [("suggestion", "Then run `shop --help`.\n")]


def test_a_readme_suggestion_that_holds_a_fence_is_posted_on_gitlab_whole(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from reviewer.testing.fake_gitlab import FakeGitLab
    from tests.test_gitlab_flow import MergeRequest, submit

    readme_change(repo)
    with FakeGitLab(repo.root, project_id=7, iid=1) as fake:
        mr = MergeRequest(fake, repo, tmp_path, monkeypatch, capsys)
        run = mr.run([submit(*readme_findings())])
        assert run.code == 0, run.err
        example = mr.thread("The install command is misspelt")["notes"][0]["body"]
        prose = mr.thread("Say how to see the options")["notes"][0]["body"]
    # GitLab's suggestion reaches from the range's last line (7) two lines up.
    assert suggestion_blocks(example) == [("suggestion:-2+0", EXAMPLE)]
    assert "````suggestion:-2+0\n```sh\n" in example
    assert suggestion_blocks(prose) == [("suggestion:-0+0", "Then run `shop --help`.\n")]
