"""Unit tests of the redactor: which environment values count as secrets, which formats match.

Secret-looking values are built at run time, so that this file holds nothing a secret scanner
would flag and no test can pass because of a value it has seen before.
"""

from __future__ import annotations

import base64
import os
import secrets
import string

import pytest

from reviewer.redact import REDACTED, Redactor, secret_values


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


_ALNUM = string.ascii_letters + string.digits
# A short value with punctuation: not "opaque", so only its variable name can mark it.
_PASSWORDISH = "Tr0ub4dor&" + _random(string.digits, 4)


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "ANTHROPIC_APIKEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "DB_PASSWORD",
        "GPG_PASSPHRASE",
        "PRIVATE_KEY_PEM",
        "GOOGLE_APPLICATION_CREDENTIALS_JSON",
        "BASIC_AUTH",
        "SESSION_ID",
        "COOKIE_JAR",
        "client_secret",
    ],
)
def test_values_under_secret_names_are_redacted(name: str) -> None:
    redact = Redactor({name: _PASSWORDISH})
    assert redact(f"before {_PASSWORDISH} after") == f"before {REDACTED} after"


@pytest.mark.parametrize("name", ["ENCRYPTION_KEY", "SIGNING_KEY", "SSH_KEY", "DEPLOY_KEY"])
def test_values_under_key_names_are_redacted(name: str) -> None:
    # `*_KEY` is the most common way to name a secret after `*_TOKEN`; only API_KEY and
    # ACCESS_KEY are matched today, so a short non-opaque key under these names is shown.
    redact = Redactor({name: _PASSWORDISH})
    assert _PASSWORDISH not in redact(f"value: {_PASSWORDISH}")


def test_opaque_values_are_redacted_whatever_their_name() -> None:
    value = _random(_ALNUM, 32)
    assert Redactor({"HARMLESS": value})(f"x{value}y") == f"x{REDACTED}y"


@pytest.mark.parametrize(
    "value",
    [
        "/usr/local/bin:/usr/bin",
        "/home/runner/work/repo/repo",
        "./relative/path/to/something/long",
        "~/some/long/path/in/the/home/folder",
        "0123456789abcdef0123456789abcdef01234567",
        "short",
        "hello world this is not opaque at all",
    ],
)
def test_paths_commit_ids_and_plain_text_are_not_secrets(value: str) -> None:
    assert secret_values({"SOMETHING": value}) == ()


def test_author_is_not_auth() -> None:
    # GIT_AUTHOR_NAME must stay readable in blame and log output.
    assert secret_values({"GIT_AUTHOR_NAME": "Test Author Name"}) == ()


def test_overlapping_secrets_leave_no_tail() -> None:
    short = _random(_ALNUM, 24)
    long = short + _random(_ALNUM, 12)
    redact = Redactor({"A_TOKEN": short, "B_TOKEN": long})
    assert redact(f"[{long}]") == f"[{REDACTED}]"


def _tokens() -> dict[str, str]:
    upper = string.ascii_uppercase + string.digits
    return {
        "github-classic": "ghp_" + _random(_ALNUM, 36),
        "github-oauth": "gho_" + _random(_ALNUM, 36),
        "github-fine-grained": "github_pat_" + _random(_ALNUM, 22) + "_" + _random(_ALNUM, 59),
        "aws-access-key-id": "AKIA" + _random(upper, 16),
        "aws-session-key-id": "ASIA" + _random(upper, 16),
        "openai": "sk-proj-" + _random(_ALNUM, 48),
        "openai-legacy": "sk-" + _random(_ALNUM, 48),
        "anthropic": "sk-ant-api03-" + _random(_ALNUM, 40),
        "slack-bot": "xoxb-" + _random(string.digits, 12) + "-" + _random(_ALNUM, 24),
        "slack-user": "xoxp-" + _random(string.digits, 12) + "-" + _random(_ALNUM, 24),
        "google": "AIza" + _random(_ALNUM, 35),
        "stripe": "sk_live_" + _random(_ALNUM, 24),
        "gitlab": "glpat-" + _random(_ALNUM, 20),
        "npm": "npm_" + _random(_ALNUM, 36),
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJ" + _random(_ALNUM, 30) + "." + _random(_ALNUM, 43),
    }


TOKENS = _tokens()


@pytest.mark.parametrize("name", list(TOKENS))
@pytest.mark.parametrize("template", ["{}", "key = {}", "'{}'", "x={},y", '"token": "{}"'])
def test_token_formats_are_redacted(name: str, template: str) -> None:
    token = TOKENS[name]
    out = Redactor({})(template.format(token))
    assert token not in out and token[-10:] not in out
    assert out == template.format(REDACTED)


def test_private_key_block_is_redacted_whole() -> None:
    body = "\n".join(base64.b64encode(os.urandom(48)).decode() for _ in range(4))
    text = f"a\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nz"
    assert Redactor({})(text) == f"a\n{REDACTED}\nz"


def test_private_key_without_end_is_redacted_to_the_end() -> None:
    # A read cut at 50,000 characters can end inside a key.
    body = base64.b64encode(os.urandom(48)).decode()
    text = f"a\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n{body}"
    assert Redactor({})(text) == f"a\n{REDACTED}"


def test_aws_secret_assignment_keeps_its_name() -> None:
    value = _random(_ALNUM + "/+", 40)
    assert Redactor({})(f"aws_secret_access_key = {value}") == f"aws_secret_access_key = {REDACTED}"


def test_url_credentials_are_redacted_but_not_the_host() -> None:
    password = _random(_ALNUM, 12)
    out = Redactor({})(f"https://deploy:{password}@example.com/repo.git")
    assert out == f"https://{REDACTED}@example.com/repo.git"


def test_plain_code_is_left_alone() -> None:
    code = "def risky(sk): return skip_key(token='x', author='me')  # AKIA is a prefix"
    assert Redactor({})(code) == code
