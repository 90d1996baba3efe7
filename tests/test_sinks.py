"""Every sink of untrusted text, enumerated, and hostile text through each: nothing reaches a
sink in a form that acts (a workflow command, a mention, live HTML, a marker) or leaks (a
secret). The end-to-end case drives `reviewer github` with a hostile model against the fake
GitHub and reads stdout and stderr as the Actions runner reads them."""

from __future__ import annotations

import ast
import json
import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

import reviewer
from reviewer.report.mdtext import neutralize, neutralize_line
from reviewer.safety.sinks import (
    clean_text,
    command_line,
    for_model,
    inert_lines,
    log_line,
    one_line,
    plain_cell,
)
from reviewer.testing import FakeLLM, reply, tool_call
from reviewer.testing.fake_github import FakeGitHub
from reviewer.workspace.paths import quote_path
from tests.conftest import GitRepo, acting_markdown, hidden_characters
from tests.test_action import TOKEN, run_action

HOSTILE = [
    "read_file\n::set-output name=findings::0",
    "x\r::error::forged",
    '{"pattern": "##[stop-commands]x"}',
    "%0A::warning::encoded",
    "nul\x00esc\x1b[2Jbidi\u202eevil",
    "`multi\nline` @octocat <img src=x onerror=alert(1)>",
    "| a | b |\n|---|---|\n| `x | @org/team <details> |",
    "<details><summary>fold everything",
    '<!-- reviewer:state {"h":"0"} -->',
    "_@octocat_ and (@octocat) and [@octocat](http://x)",
    "&#64;octocat &#60;script&#62;",
    "x" * 60_000,
]
# Characters that show nothing: a reader cannot see them, a tool that copies the text gets
# them (and a token they split); written as they are and as character references, which the
# Markdown parser decodes (a decoded carriage return is a line break in CommonMark).
HIDDEN = [
    "zero\u200bwidth non\u200cjoiner joiner\u200d word\u2060joiner bom\ufeff soft\u00adhyphen",
    "tags \U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065 filler \u3164 cgj \u034f",
    "selector x\ufe0f\ufe0f mongolian \u180e annotation \ufff9hidden\ufffb",
    "&#x200B;&#8238;&#xFEFF;&#xAD;&#13;# heading from a reference",
]
HOSTILE += HIDDEN
# The HTML the Markdown report's template writes itself (reviewer/report/templates).
OWN_TAGS = re.compile(r"(</?details>\s*)?(<summary>.*</summary>)?|</?sub>|</details>", re.DOTALL)
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _controls(text: str, allowed: str = "") -> list[str]:
    return [c for c in text if unicodedata.category(c) == "Cc" and c not in allowed]


def runner_commands(output: str) -> list[str]:
    """The lines the Actions runner would run as commands: `::` at the start of a line (after
    white space), or the legacy `##[` anywhere in it."""
    return [line for line in output.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def _check_terminal(text: str) -> None:
    assert not _controls(text, "\n\t") and not _BIDI.search(text)
    assert not hidden_characters(text), hidden_characters(text)


def _single_line(text: str) -> None:
    assert "\n" not in text and "\r" not in text


def _check_log(text: str) -> None:
    assert "\n" not in text and "\r" not in text and runner_commands(text) == []
    assert not _controls(text) and not _BIDI.search(text) and not hidden_characters(text)


def _check_cell(text: str) -> None:
    # A cell may start its line, or follow any other: no command form anywhere in it.
    _check_terminal(text)
    _single_line(text)
    assert "::" not in text and "##[" not in text and runner_commands(text) == []


def _check_report(text: str) -> None:
    # Many lines, any of which the model's words may start.
    _check_terminal(text)
    assert runner_commands(text) == []


def _check_command(text: str) -> None:
    assert "\n" not in text and "\r" not in text and "##[" not in text
    assert runner_commands(text) == [text]  # exactly one command: ours
    assert not _controls(text) and not _BIDI.search(text) and not hidden_characters(text)


def _check_markdown(text: str) -> None:
    assert acting_markdown(text) == []
    assert "<!-- reviewer:" not in text or text.count("<!--") == 0
    # What a reader sees, references decoded: nothing hidden, no heading the text made.
    tokens = MarkdownIt("commonmark").enable(["table"]).parse(text)
    seen = "".join(child.content for t in tokens for child in t.children or [])
    hidden = hidden_characters(text) + hidden_characters(seen)
    assert not hidden, hidden
    assert not [t for t in tokens if t.type == "heading_open"]


def _check_tool_output(text: str) -> None:
    assert "\n" not in text and not _controls(text) and not _BIDI.search(text)
    assert not hidden_characters(text)


# The sinks: one function each, and what "safe" means for it.
SINKS: dict[str, tuple[Callable[[str], str], Callable[[str], None]]] = {
    "terminal": (clean_text, _check_terminal),
    "terminal line": (one_line, lambda text: _check_terminal(text) or _single_line(text)),
    "plain cell": (plain_cell, _check_cell),
    "report on stdout": (lambda text: inert_lines(clean_text(text)), _check_report),
    "log line": (log_line, _check_log),
    "workflow command": (lambda t: command_line("error", t, file=t, title=t), _check_command),
    "GitHub Markdown": (neutralize, _check_markdown),
    "GitHub Markdown line": (neutralize_line, _check_markdown),
    "tool output": (quote_path, _check_tool_output),
    "model request": (for_model, lambda text: text.encode("utf-8") and None),
}


@pytest.mark.parametrize("sink", sorted(SINKS))
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_every_sink_makes_hostile_text_inert(sink: str, text: str) -> None:
    make_safe, check = SINKS[sink]
    check(make_safe(text))


GITHUB_TOKEN = "ghp_" + "Zq8" * 12
GITLAB_RUNNER_TOKEN = "glrt-" + "kV2x" * 5
# The sinks that redact on their own (every line of the log and the runner's commands, every
# Markdown value); the terminal and tool sinks are given redacted text (report.render, the
# tools), and show the characters; the model reads the file as it is, redacted before.
REDACTING = {
    "plain cell",
    "log line",
    "workflow command",
    "GitHub Markdown",
    "GitHub Markdown line",
}


@pytest.mark.parametrize("sink", sorted(SINKS))
def test_every_sink_redacts_or_shows_a_token_invisible_characters_split(sink: str) -> None:
    split = (
        f"key {GITHUB_TOKEN[:10]}\u200b{GITHUB_TOKEN[10:]} and "
        f"{GITLAB_RUNNER_TOKEN[:7]}\u00ad\u2060{GITLAB_RUNNER_TOKEN[7:]} end"
    )
    make_safe, _ = SINKS[sink]
    out = make_safe(split)
    readable = re.sub(r"<U\+[0-9A-F]{4,6}>|&lt;U\+[0-9A-F]{4,6}&gt;", "", out)
    readable = "".join(c for c in readable if not hidden_characters(c) and c not in "\u200b\u200d")
    if sink == "model request":
        assert out == split
    elif sink == "tool output":  # quoted as git quotes a name: escapes
        assert not hidden_characters(out) and "\\u200b" in out, out
    elif sink in REDACTING:
        assert GITHUB_TOKEN not in readable and GITLAB_RUNNER_TOKEN not in readable, out
        assert "key" in out and "end" in out
    else:
        assert not hidden_characters(out) and "<U+200B>" in out, out


def test_a_model_request_leaves_as_valid_utf8_in_its_own_shape() -> None:
    escaped_byte = os.fsdecode(b"caf\xe9")  # a name's byte that is not UTF-8: 'caf\udce9'
    half_emoji = "\ud83d"  # a model's JSON escape of half a surrogate pair
    call = {"name": "read_file", "arguments": '{"path": "caf\\udce9"}'}
    request: dict[str, Any] = {
        "model": "m",
        "temperature": 0.2,
        "messages": [
            {"role": "system", "content": "plain"},
            {"role": "user", "content": f"é {escaped_byte} {half_emoji}😀"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": call}]},
            {"role": "tool", "tool_call_id": "c", "content": quote_path(escaped_byte)},
        ],
        "tools": [{"type": "function", "function": {"name": "x", "parameters": {}}}],
    }
    before = json.dumps(request)
    sent = for_model(request)
    # What the openai client does with a request (httpx: ensure_ascii=False, then UTF-8).
    json.dumps(sent, ensure_ascii=False).encode("utf-8")
    # A lone surrogate is shown as U+FFFD; valid text, numbers, None and names already quoted
    # as git quotes them are left as they were, and so is the conversation itself.
    assert sent["messages"][1]["content"] == "é caf\ufffd \ufffd😀"
    assert sent["messages"][3]["content"] == '"caf\\351"'
    assert {**sent, "messages": [sent["messages"][i] for i in (0, 2, 3)]} == {
        **request,
        "messages": [request["messages"][i] for i in (0, 2, 3)],
    }
    assert json.dumps(request) == before


# Where the program may write to stdout or stderr itself: the sinks and the edges that print
# what a sink made (module path, function name).
ALLOWED_WRITERS = {
    ("reviewer/github/actions.py", "add_mask"),
    ("reviewer/github/actions.py", "emit_command"),
    ("reviewer/safety/sinks.py", "log"),
    ("reviewer/cli/commands.py", "_write"),
    ("reviewer/review/progress.py", "_draw"),  # the live line, made by log_line
    ("reviewer/review/progress.py", "_line"),
    ("reviewer/review/progress.py", "done"),
    ("reviewer/report/__init__.py", "write_text"),
    # prints annotations() lines, made by command_line
    ("reviewer/github/actions.py", "annotate"),
}


def test_nothing_reaches_stdout_or_stderr_but_through_a_sink() -> None:
    root = Path(reviewer.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith("reviewer/testing/"):
            continue  # the shipped fakes are test servers, not the bot
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                name = ast.unparse(node.func)
                if (
                    name == "print"
                    or name.endswith(("stdout.write", "stderr.write"))
                    or (name.endswith("stream.write"))
                ):
                    found.add((rel, function.name))
    assert found <= ALLOWED_WRITERS, sorted(found - ALLOWED_WRITERS)


# --- end to end: a hostile model against the fake GitHub --------------------------------------

AWS_ID = "AKIA" + "Q7Z3X9K2M4N6P8R1"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
SPLIT_GITHUB_TOKEN = f"{GITHUB_TOKEN[:8]}\u200b{GITHUB_TOKEN[8:20]}\u2060{GITHUB_TOKEN[20:]}"


@pytest.fixture
def hostile_repo(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "x = 1\n")
    repo.write("README.md", "# Shop\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(
        "app.py",
        f'x = 1\nAWS_ACCESS_KEY_ID = "{AWS_ID}"\naws_secret_access_key = "{AWS_SECRET}"\n'
        f'GH = "{SPLIT_GITHUB_TOKEN}"\nRUNNER = "{GITLAB_RUNNER_TOKEN}"\n',
    )
    repo.commit("config")
    return repo


def test_a_hostile_model_reaches_no_sink_in_a_form_that_acts_or_leaks(
    hostile_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    leaked = (
        f"It reads {SPLIT_GITHUB_TOKEN}, {GITLAB_RUNNER_TOKEN[:9]}\u00ad{GITLAB_RUNNER_TOKEN[9:]}."
    )
    evil = "\n".join([*HOSTILE[:11], *HIDDEN, leaked])
    findings = [
        {
            "path": "app.py",
            "line": 2,
            "end_line": 3,
            "severity": "high",
            "title": "Key ##[stop-commands]x ::set-output name=findings::0",
            "body": evil,
        },
        {
            "path": "README.md",
            "line": 1,
            "severity": "low",
            "title": "@octocat <details>",
            "body": evil,
        },
    ]
    script = [
        reply(tool_calls=[tool_call("read_file\n::set-output name=findings::0", {"p": "x"})]),
        reply(tool_calls=[tool_call("search_text", {"pattern": "##[stop-commands]x\r::x::"})]),
        reply(tool_calls=[tool_call("submit_review", {"summary": evil, "findings": findings})]),
    ]
    with FakeGitHub(
        hostile_repo.root,
        repository="acme/shop",
        number=7,
        base_sha=hostile_repo.git("rev-parse", "main").strip(),
        head_sha=hostile_repo.head(),
        title="@octocat <img src=x>",
        body=evil,
        token=TOKEN,
    ) as github:
        github.read_only = False
        run = run_action(
            github,
            hostile_repo.root,
            script,
            tmp_path,
            monkeypatch,
            capsys,
            REVIEWER_FAIL_ON="high",
        )
        posted = [r["body"] for r in github.reviews]
        posted += [c["body"] for c in github.review_comments + github.issue_comments]
    assert run.code == 1, run.err
    # stdout and stderr as the runner reads them: only our own commands.
    ours = [line for line in runner_commands(run.out + "\n" + run.err)]
    assert all(
        line.startswith(("::add-mask::", "::error", "::warning", "::notice")) for line in ours
    )
    assert not any("set-output" in line or "stop-commands" in line for line in ours)
    # What GitHub received: nothing that acts, markers only where the bot writes them.
    for body in posted:
        lines = body.split("\n")
        inner = "\n".join(line for line in lines if not line.startswith("<!-- reviewer:"))
        acting = acting_markdown(inner)
        # The report's own layout tags are balanced and come from the template; anything
        # else that acts came from untrusted text.
        assert [a for a in acting if not OWN_TAGS.fullmatch(a.strip())] == [], inner[:2000]
        assert inner.count("<details>") == inner.count("</details>")
        assert "<!-- reviewer:" not in inner
    # No secret anywhere: what the model was sent, posted, job summary, JSON report, even
    # with the invisible characters taken out; nothing hidden in what people read.
    report = Path(run.outputs["report"]).read_text()
    requests = [json.dumps(body, ensure_ascii=False) for body in run.llm_bodies]
    for where in (*posted, run.summary, report, run.out, run.err, *requests):
        readable = "".join(c for c in where if not hidden_characters(c))
        assert AWS_ID not in where and AWS_SECRET not in where
        assert GITHUB_TOKEN not in readable and GITLAB_RUNNER_TOKEN not in readable
    for where in (*posted, run.summary, run.out, run.err):
        assert not hidden_characters(where), hidden_characters(where)
    assert "&lt;U+200B&gt;" in run.summary and "&lt;U+00AD&gt;" in run.summary
    assert len(json.loads(report)["findings"]) == 2


def test_three_thousand_findings_and_growing_redactions_keep_githubs_limit() -> None:
    from reviewer.findings import Finding, ReviewResult, Severity
    from reviewer.forge.memory import PullState, state_line
    from reviewer.forge.signing import Signer
    from reviewer.report.github import summary_comment
    from reviewer.safety.redact import Redactor

    # `a:b@` becomes `[REDACTED]@`: a line of them grows by half again under redaction.
    growing = " ".join(f"https://u{n}:p@h" for n in range(3_000))
    findings = tuple(
        Finding(
            path=f"src/m{n}.py",
            line=n + 1,
            severity=list(Severity)[n % 5],
            title=f"Finding {n}",
            body=growing if n == 0 else "body",
            placement="summary" if n % 3 else "inline",
            fingerprint=f"{n:016x}",
        )
        for n in range(3_000)
    )
    result = ReviewResult("complete", growing, findings, "m", "b" * 40, "h" * 40)
    line = state_line(PullState("a" * 40, "a" * 40), Signer.from_secret("k", "o/r#1"))
    body = summary_comment(result, state_line=line, redact=Redactor())
    assert len(body) <= 65_536
    assert body.split("\n")[-1] == line and "u0:p@" not in body
    shown = len(re.findall(r"^#### \d+\. ", body, flags=re.MULTILINE))
    assert f"{3_000 - shown:,} of 3,000 findings are not shown here" in body
    assert "job summary" in body


def test_the_terminal_report_prints_no_runner_command(repo: GitRepo, capsys: Any) -> None:
    """`reviewer review` in a CI step prints its report on stdout, where the Actions runner
    reads commands: a title or body the model starts with `::` or fills with `##[` is shown."""
    from reviewer.cli.program import main

    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", "x = 2\n")
    repo.commit("change")
    body = "fine\n::set-output name=findings::0\n  ::add-mask::x\n##[group]y"
    finding = {"path": "app.py", "line": 1, "severity": "high", "title": "::error::forged",
               "body": body}  # fmt: skip
    submit = tool_call("submit_review", {"summary": "::warning::s", "findings": [finding]})
    with FakeLLM([reply(tool_calls=[submit])]) as llm:
        env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "k", "REVIEWER_MODEL": "m"}
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            code = main(["review", "--repo", str(repo.root), "--base", "HEAD~1"])
    out = capsys.readouterr().out
    assert code == 0 and "forged" in out and "add-mask" in out
    assert runner_commands(out) == []
