"""Redaction of the final text of each Markdown sink: a secret the model writes in a form that
Markdown decodes (character references, backslash escapes, emphasis or code spans cutting it,
percent-encoding in a link) must not be readable in what GitHub shows, nor in the Markdown
report. What a reader sees is computed by a real CommonMark parser (markdown-it-py renders the
posted text to HTML; tags are dropped, references decoded, link targets percent-decoded)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from reviewer.findings import Finding, ReviewResult, Severity
from reviewer.forge.signing import Signer
from reviewer.report import render
from reviewer.report.github import comment_body, review_body, summary_comment
from reviewer.report.mdtext import neutralize, neutralize_line
from reviewer.safety.redact import Redactor
from tests.test_action import finding, github, pr_repo  # noqa: F401  (fixtures)
from tests.test_action_runs import PullRequest, pr, submit_saying  # noqa: F401
from tests.test_redaction import TOKENS

SIGNER = Signer.from_secret("k", "acme/shop#7")
# Named references for the punctuation of the formats (HTML5's list, which markdown-it uses).
_NAMED = {"_": "&lowbar;", ".": "&period;", "/": "&sol;", ":": "&colon;"}


def decimal(secret: str) -> str:
    return "".join(f"&#{ord(c)};" for c in secret)


def hexadecimal(secret: str) -> str:
    return "".join(f"&#x{ord(c):X};" for c in secret)


def named_mixed(secret: str) -> str:
    """Named references for punctuation, decimal and hex ones for some letters."""
    out = []
    for n, c in enumerate(secret):
        if c in _NAMED:
            out.append(_NAMED[c])
        elif n % 3 == 0:
            out.append(f"&#{ord(c)};")
        elif n % 3 == 1:
            out.append(f"&#x{ord(c):x};")
        else:
            out.append(c)
    return "".join(out)


def backslashes(secret: str) -> str:
    return "".join(f"\\{c}" if c in "_-.:/" else c for c in secret)


def emphasis_split(secret: str) -> str:
    return f"**{secret[:6]}**{secret[6:]}"


def code_span_split(secret: str) -> str:
    return f"`{secret[:6]}`{secret[6:]}"


def percent_link(secret: str) -> str:
    encoded = "".join(f"%{ord(c):02X}" for c in secret)
    return f"[the docs](https://example.com/?k={encoded})"


def percent_autolink(secret: str) -> str:
    encoded = "".join(f"%{ord(c):02X}" if n % 2 else c for n, c in enumerate(secret))
    return f"<https://example.com/{encoded}>"


ENCODINGS: dict[str, Callable[[str], str]] = {
    "decimal": decimal,
    "hex": hexadecimal,
    "named-mixed": named_mixed,
    "backslash": backslashes,
    "emphasis": emphasis_split,
    "code-span": code_span_split,
    "percent-link": percent_link,
    "percent-autolink": percent_autolink,
}
SECRETS = {
    "github": TOKENS["github-classic"],
    "openai": TOKENS["openai"],
    "aws": TOKENS["aws-access-key-id"],
    "slack-webhook": "https://hooks.slack.com/services/T0AB1CD2E/B0FG3HI4J/abcDEF123ghiJKL456mnoPQR",
    "jwt": TOKENS["jwt"],
    "stripe": TOKENS["stripe"],
}


def seen(markdown: str) -> str:
    """What a reader of `markdown` sees: the rendered text, and every link target decoded."""
    rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)
    targets = [unquote(html.unescape(t)) for t in re.findall(r'(?:href|src)="([^"]*)"', rendered)]
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    return "\n".join([text.replace("\u200d", "").replace("\u200c", ""), *targets])


def hidden(secret: str, markdown: str) -> bool:
    return secret not in markdown and secret not in seen(markdown)


def _finding(text: str, **changes: Any) -> Finding:
    values: dict[str, Any] = {
        "path": "app.py",
        "line": 6,
        "severity": Severity.HIGH,
        "title": f"Leaked {text}",
        "body": f"The key {text} is committed.",
        "fingerprint": "0123456789abcdef",
        "placement": "inline",
    }
    return Finding(**{**values, **changes})


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("name", list(SECRETS))
def test_every_markdown_sink_hides_a_secret_markdown_would_decode(name: str, encoding: str) -> None:
    secret = SECRETS[name]
    text = ENCODINGS[encoding](secret)
    # The encoded form alone shows the secret to a reader: the premise of the test.
    assert secret in seen(text), seen(text)
    later = _finding("nothing", title="Later finding", fingerprint="fedcba9876543210")
    result = ReviewResult(
        "complete", f"Summary: {text}", (_finding(text), later), "m", "a" * 40, "b" * 40
    )
    redact = Redactor({})
    posted = {
        "summary comment": summary_comment(result, state_line="<!-- s -->", redact=redact),
        "inline comment": comment_body(result.findings[0], SIGNER, redact=redact),
        "review body": review_body(0, list(result.findings), "1", None, "r", SIGNER, redact=redact),
        "markdown report": render(result, "markdown"),
    }
    for where, markdown in posted.items():
        assert hidden(secret, markdown), (where, seen(markdown))
    for where in ("summary comment", "review body", "markdown report"):
        assert "Later finding" in posted[where], where  # redaction hid nothing else


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_neutralize_redacts_what_markdown_decodes(encoding: str) -> None:
    for secret in SECRETS.values():
        text = ENCODINGS[encoding](secret)
        for markdown in (
            neutralize(f"Text {text} and more", redact=Redactor({})),
            neutralize(f"| a |\n|---|\n| {text} |", redact=Redactor({})),
            neutralize_line(text, redact=Redactor({})),
        ):
            assert hidden(secret, markdown), seen(markdown)
            assert "and more" in markdown or "|" in markdown or "REDACTED" in markdown


def test_a_secret_the_model_writes_as_references_is_not_posted_by_the_action(
    pr: PullRequest,  # noqa: F811
) -> None:
    token, aws = SECRETS["github"], SECRETS["aws"]
    leaked = finding(
        title=f"Token {named_mixed(token)} in the code",
        body=f"It reads {decimal(token)}, also {backslashes(aws)} and {hexadecimal(aws)}.",
        suggestion=None,
    )
    summary = f"Found {hexadecimal(token)} and {emphasis_split(aws)}."
    run = pr.run([submit_saying(summary, leaked)])
    assert run.code == 0, run.err
    (comment,) = pr.github.review_comments
    for where, markdown in (
        ("summary comment", pr.summary()),
        ("inline comment", comment["body"]),
        ("job summary", run.summary),
    ):
        for secret in (token, aws):
            assert hidden(secret, markdown), (where, seen(markdown))
    assert "Token" in comment["body"] and "in the code" in comment["body"]


def test_the_job_summary_file_is_redacted_after_decoding(tmp_path: Path) -> None:
    token = SECRETS["openai"]
    result = ReviewResult("complete", decimal(token), (), "m", "a" * 40, "b" * 40)
    path = tmp_path / "report.md"
    from reviewer.report import write_report

    write_report(result, "markdown", path)
    assert hidden(token, path.read_text())
