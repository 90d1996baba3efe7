"""Unit tests of the redactor: which environment values count as secrets, which formats match.

Secret-looking values are built at run time, so that this file holds nothing a secret scanner
would flag and no test can pass because of a value it has seen before.
"""

from __future__ import annotations

import base64
import os
import random
import re
import secrets
import string
from pathlib import Path

import pytest

from reviewer.cli.program import main
from reviewer.safety.redact import REDACTED, Redactor, secret_values
from reviewer.testing import FakeLLM, reply, tool_call
from tests.conftest import GitRepo


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


def test_the_shells_working_directory_is_not_a_password() -> None:
    # PWD and OLDPWD are the shell's working directories (POSIX sh), not passwords: redacting
    # them hid every path under the current directory in the bot's own messages. A variable
    # whose name has PWD as one of its words, like DB_PWD, still is a password.
    environ = {"PWD": "/work/project", "OLDPWD": "/home/runner/work", "DB_PWD": "hunter2-x"}
    assert secret_values(environ) == ("hunter2-x",)


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
        **GITLAB_TOKENS,
    }


_URLSAFE = _ALNUM + "_-"


def _urlsafe(length: int) -> str:
    """URL-safe base64 text ending in a letter or digit (a `-` at the end is left out of a
    match, since a token ends at a word boundary)."""
    return _random(_URLSAFE, length - 1) + _random(_ALNUM, 1)


_BASE36 = string.ascii_lowercase + string.digits
# GitLab's documented token prefixes (docs.gitlab.com/security/tokens/#token-prefixes), each
# with the body GitLab gives it: 20 URL-safe characters for most (`Devise.friendly_token`),
# 40 hex for a trigger token, and the routable form of GitLab 17.x (a payload, `.01.`, a
# base-36 length and CRC), as in a runner's config.toml.
GITLAB_TOKENS = {
    "gitlab-routable": "glpat-" + _urlsafe(38) + ".01." + _random(_BASE36, 9),
    "gitlab-oauth-secret": "gloas-" + _urlsafe(64),
    "gitlab-deploy": "gldt-" + _urlsafe(20),
    "gitlab-runner": "glrt-" + _urlsafe(20),
    "gitlab-runner-routable": "glrt-t1_" + _urlsafe(27) + ".01." + _random(_BASE36, 9),
    "gitlab-runner-registered": "glrtr-" + _urlsafe(38) + ".01." + _random(_BASE36, 9),
    "gitlab-runner-registration": "GR1348941" + _urlsafe(20),
    "gitlab-job": "glcbt-64_" + _urlsafe(20),
    "gitlab-trigger": "glptt-" + _random(string.hexdigits.lower()[:16], 40),
    "gitlab-feed": "glft-" + _urlsafe(20),
    "gitlab-incoming-mail": "glimt-" + _urlsafe(25),
    "gitlab-agent": "glagent-" + _urlsafe(50),
    "gitlab-scim": "glsoat-" + _urlsafe(20),
    "gitlab-feature-flags": "glffct-" + _urlsafe(20),
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


def test_every_format_says_where_it_is_documented() -> None:
    from reviewer.safety.secret_formats import FORMATS

    assert [row.name for row in FORMATS if not row.source.strip()] == []
    gitlab = {anchor for row in FORMATS if row.name.startswith("GitLab") for anchor in row.anchors}
    # GitLab's documented prefixes (docs.gitlab.com/security/tokens/#token-prefixes), each a
    # test token above.
    documented = {"glpat-", "gloas-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glptt-", "glft-",
                  "glimt-", "glagent-", "glsoat-", "glffct-", "_gitlab_session="}  # fmt: skip
    assert documented <= gitlab
    tested = {token.split("-")[0] + "-" for token in GITLAB_TOKENS.values()}
    assert documented - {"_gitlab_session="} <= tested


def test_plain_code_is_left_alone() -> None:
    code = "def risky(sk): return skip_key(token='x', author='me')  # AKIA is a prefix"
    assert Redactor({})(code) == code


# --- Invisible characters inside a secret ----------------------------------------------------
#
# The attacker's input: a token with characters inside it that show nothing (a reader, or a
# tool that copies the text, still gets the token), so no pattern matches it.

INVISIBLE = {
    "zero-width space": "\u200b",
    "zero-width non-joiner": "\u200c",
    "zero-width joiner": "\u200d",
    "word joiner": "\u2060",
    "byte order mark": "\ufeff",
    "soft hyphen": "\u00ad",
    "Mongolian vowel separator": "\u180e",
    "variation selector": "\ufe0f",
    "tag letter": "\U000e0041",
    "right-to-left override": "\u202e",
    "Hangul filler": "\u3164",
    "combining grapheme joiner": "\u034f",
    "a run of them": "\u200b\u2060\ufeff",
}


@pytest.mark.parametrize("invisible", list(INVISIBLE))
@pytest.mark.parametrize("name", ["github-classic", "gitlab-runner", "aws-access-key-id", "jwt"])
def test_a_token_split_by_invisible_characters_is_redacted_whole(name: str, invisible: str) -> None:
    token, char = TOKENS[name], INVISIBLE[invisible]
    for cuts in ((4,), (10,), (5, 12, len(token) - 2)):
        split = token
        for cut in reversed(cuts):
            split = split[:cut] + char + split[cut:]
        # The whole span goes, the invisible characters inside it too; the text around stays.
        assert Redactor({})(f"key = '{split}'\n") == f"key = '{REDACTED}'\n"


def test_a_split_environment_secret_is_redacted_whole() -> None:
    value = _random(_ALNUM, 30)
    accented = "pässwörd-" + _random(_ALNUM, 8)  # a secret's own non-ASCII letter before it
    spaced = "correct horse " + _random(_ALNUM, 8)  # and its own space
    redact = Redactor({"DEPLOY_TOKEN": value, "DB_PASSWORD": accented, "PASSPHRASE": spaced})
    assert redact(f"a {value[:9]}\u200b{value[9:]} b") == f"a {REDACTED} b"
    assert redact(f"[{accented[:2]}\u200d{accented[2:]}]") == f"[{REDACTED}]"
    assert redact(f"[{spaced[:8]}\u2060{spaced[8:]}]") == f"[{REDACTED}]"


def test_ordinary_writing_is_matched_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second pass (without the invisible characters) runs only where a run of them sits
    between two characters a secret may hold; a keycap after a digit, an emoji's joiner, a
    zero-width space beside a space do not make a whole diff be matched twice."""

    def twice(self: Redactor, text: str) -> None:
        raise AssertionError(f"matched twice: {text!r}")

    monkeypatch.setattr(Redactor, "_spans_through_invisible", twice)
    token = TOKENS["github-classic"]
    plain = f"1\ufe0f\u20e3 step, \U0001f469\u200d\U0001f4bb, a \u200b b, x\u200b\n, {token}"
    assert Redactor({})(plain) == plain.replace(token, REDACTED)


def test_secrets_beside_invisible_characters_and_plain_writing_are_handled_as_before() -> None:
    token = TOKENS["github-classic"]
    # The plain real cases: an emoji's selector and joiner, a Persian non-joiner, a zero-width
    # space between words: nothing to redact, the text is returned as it is.
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "I want", with its non-joiner
    plain = f"⚠️ fixed by 👩\u200d💻 ({persian}) word\u200bword 1\ufe0f\u20e3"
    assert Redactor({})(plain) == plain
    # A whole token next to invisible characters: the token goes, they stay (the sinks show
    # them); a word glued to it by one is not taken with it.
    text = f"\u200b{token}\u200b and x\u200b{token} \u2060"
    assert Redactor({})(text) == f"\u200b{REDACTED}\u200b and x\u200b{REDACTED} \u2060"
    # The assignment keeps its name, as without them.
    secret = _random(_ALNUM, 40)
    split = f"aws_secret_access_key = {secret[:20]}\u00ad{secret[20:]}"
    assert Redactor({})(split) == f"aws_secret_access_key = {REDACTED}"


@pytest.mark.parametrize("seed", range(60))
def test_no_planted_secret_survives_invisible_characters_anywhere(seed: int) -> None:
    rng = random.Random(seed)
    planted = [rng.choice(list(TOKENS.values())) for _ in range(3)]
    text = _mixed_text(rng) + " " + " = ".join(planted) + "\n" + _mixed_text(rng)
    chars = list(text)
    for _ in range(rng.randint(1, 12)):
        chars.insert(rng.randrange(len(chars) + 1), rng.choice(list(INVISIBLE.values())))
    out = Redactor({})("".join(chars))
    visible = "".join(c for c in out if c not in "".join(INVISIBLE.values()))
    assert not any(secret in visible for secret in planted), out


# --- The prefilter gives the same output as the one regex it replaced -----------------------
#
# `Redactor` used to run one `re.sub` of an alternation of every format over the whole text;
# it now tries that alternation only where a format's literal anchor occurs. The reference
# below is the old code, kept here verbatim but for the rows added since (GitLab's token
# prefixes), and generated texts must come out the same.

_REFERENCE_FORMATS = (
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
    r"(-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    r"\b(gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    r"\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}\b",
    r"\bsk-ant-[A-Za-z0-9_\-]{20,}\b",
    r"\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    r"(?i:aws_secret_access_key)\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b",
    r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
    r"\bAIza[0-9A-Za-z_\-]{35}\b",
    r"\b[rs]k_(live|test)_[0-9A-Za-z]{16,}\b",
    r"\b(?:glpat-|gloas-|gldt-|glrt-|glrtr-|GR1348941|glcbt-|glptt-|glft-|glimt-|glagent-"
    r"|glsoat-|glffct-)[0-9A-Za-z_\-]{20,}(?:\.[0-9a-z]{2,9}){0,2}\b",
    r"(?<=_gitlab_session=)[0-9a-f]{32,}\b",
    r"\bnpm_[A-Za-z0-9]{36}\b",
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b",
    r"(?<=://)[^/\s:@]{1,128}:[^/\s@]{1,256}(?=@)",
)
_REFERENCE_RE = re.compile("|".join(f"(?:{p})" for p in _REFERENCE_FORMATS), re.DOTALL)


def _reference_replace(match: re.Match[str]) -> str:
    whole = match.group(0)
    prefix = re.match(r"(?i)aws_secret_access_key\s*[=:]\s*[\"']?", whole)
    return (prefix.group(0) if prefix else "") + REDACTED


def _reference_redact(text: str, values: tuple[str, ...] = ()) -> str:
    if values:
        text = re.compile("|".join(re.escape(v) for v in values)).sub(REDACTED, text)
    return _REFERENCE_RE.sub(_reference_replace, text)


_UPPER_DIGITS = string.ascii_uppercase + string.digits
_WORDISH = _ALNUM + "_-"
_PEM = "-----BEGIN RSA PRIVATE KEY-----"
_PEM_END = "-----END RSA PRIVATE KEY-----"


def _secret(rng: random.Random) -> str:
    """One string of a random format, valid or nearly so (a length off by one, a part
    missing), so that both sides of each format's edges come up."""

    def run(alphabet: str, low: int, high: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))

    body = rng.choice(
        [
            lambda: (
                rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "ghx_"]) + run(_ALNUM, 34, 40)
            ),
            lambda: "github_pat_" + run(_ALNUM + "_", 20, 30),
            lambda: (
                "sk-"
                + rng.choice(["", "proj-", "svcacct-", "admin-", "ant-"])
                + run(_WORDISH, 18, 24)
            ),
            lambda: (
                rng.choice(["AKIA", "ASIA", "ABIA", "ACCA", "AKIB"])
                + run(_UPPER_DIGITS, 16, 16)
                + rng.choice(["", "", "", "Q"])
            ),
            lambda: (
                rng.choice(["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"])
                + rng.choice(["=", " = ", ": ", ":", " "])
                + rng.choice(["", "'", '"'])
                + run(_ALNUM + "/+=", 39, 41)
            ),
            # The case-insensitive match also takes the Kelvin sign and the long s.
            lambda: "aw\u017f_secret_access_\u212aey=" + run(_ALNUM, 40, 40),
            lambda: "xox" + rng.choice("abposrz") + "-" + run(_ALNUM + "-", 8, 14),
            lambda: "https://hooks.slack.com/services/" + run(_ALNUM + "/_-", 0, 20),
            lambda: "AIza" + run(_WORDISH, 34, 36),
            lambda: (
                rng.choice(["sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_"])
                + run(_ALNUM, 15, 20)
            ),
            lambda: (
                (
                    rng.choice(
                        [
                            "glpat-",
                            "gloas-",
                            "gldt-",
                            "glrt-",
                            "glrtr-",
                            "GR1348941",
                            "glcbt-64_",
                            "glptt-",
                            "glft-",
                            "glimt-",
                            "glagent-",
                            "glsoat-",
                            "glffct-",
                            "glpa-",
                        ]
                    )
                    + run(_WORDISH, 19, 22)
                    + rng.choice(["", "", ".01." + run(_ALNUM.lower(), 8, 10), ".", ".0"])
                )
                if rng.random() < 0.8
                else "_gitlab_session=" + run("0123456789abcdef", 31, 33)
            ),
            lambda: "npm_" + run(_ALNUM, 35, 37),
            lambda: (
                "eyJ"
                + run(_WORDISH, 7, 12)
                + ".eyJ"
                + run(_WORDISH, 7, 12)
                + "."
                + run(_WORDISH, 7, 12)
            ),
            lambda: (
                rng.choice(["https", "git+ssh", "ftp", ""])
                + "://"
                + run(_ALNUM, 0, 6)
                + rng.choice([":", "", "::"])
                + run(_ALNUM + ":", 0, 8)
                + rng.choice(["@", "", "/", "@@"])
                + run(_ALNUM + ".", 0, 10)
            ),
            lambda: (
                _PEM
                + "\n"
                + run(_ALNUM + "+/\n", 10, 80)
                + rng.choice(["\n" + _PEM_END, "", "\n-----END OTHER-----", "\n" + _PEM])
                + rng.choice(["", "\n-----END OPENSSH PRIVATE KEY-----"])
            ),
            lambda: "-----BEGIN PUBLIC KEY-----\n" + run(_ALNUM, 10, 20),
            lambda: (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----"
                + run(_ALNUM + "\n", 0, 30)
                + rng.choice(["-----END PGP PRIVATE KEY BLOCK-----", ""])
            ),
        ]
    )()
    cut = rng.random()
    if cut < 0.15:  # only the start: an anchor without the rest
        return body[: rng.randint(1, min(len(body), 12))]
    if cut < 0.25:  # glued to word characters on either side
        return rng.choice(["x", "_", "9", ""]) + body + rng.choice(["x", "_", "9", "é", ""])
    return body


# Text made of the anchors' own pieces, so that they meet, overlap and break off in every way.
_FRAGMENTS = (
    "sk", "-", "k_", "live_", "test_", "_", "gh", "p", "://", ":", "@", "/", "xox", "b",
    "AKIA", "AIza", "A", "I", "eyJ", ".", "npm", "glpat", "gl", "rt", "aws", "_secret_access_key",
    "-----BEGIN", "-----", "PRIVATE KEY", "-----END", "\n", " ", "\t", "=", "'", "é", "🙂",
    "\u212a", "\u017f",
)  # fmt: skip


def _noise(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(0, 12)))
    return "".join(rng.choice(_ALNUM + " \n-_:/@.") for _ in range(rng.randint(0, 40)))


def _mixed_text(rng: random.Random) -> str:
    parts = [rng.choice([_secret, _noise])(rng) for _ in range(rng.randint(1, 10))]
    separators = ["", "", " ", "\n", "+", "'", "=", "\n+    "]
    return "".join(part + rng.choice(separators) for part in parts)


@pytest.mark.parametrize("seed", range(400))
def test_output_equals_the_single_regex(seed: int) -> None:
    rng = random.Random(seed)
    text = _mixed_text(rng)
    assert Redactor({})(text) == _reference_redact(text)


def test_every_format_is_met_by_the_generated_texts() -> None:
    # The equivalence above proves nothing for a format the texts never contain.
    texts = [_mixed_text(random.Random(seed)) for seed in range(400)]
    for pattern in _REFERENCE_FORMATS:
        compiled = re.compile(pattern, re.DOTALL)
        hits = sum(1 for text in texts if compiled.search(text))
        assert hits >= 5, pattern


@pytest.mark.parametrize("seed", range(40))
def test_output_equals_the_single_regex_with_environment_secrets(seed: int) -> None:
    rng = random.Random(seed)
    present = _random(_ALNUM, 30)
    absent = _random(_ALNUM, 26)
    overlapping = present[:10] + _random(_ALNUM, 20)  # shares a start with `present`
    environ = {"A_TOKEN": present, "B_TOKEN": absent, "C_TOKEN": overlapping}
    pieces = [_mixed_text(rng), present, _mixed_text(rng), overlapping, present[:-1]]
    rng.shuffle(pieces)
    text = "".join(pieces)
    assert Redactor(environ)(text) == _reference_redact(text, secret_values(environ))


def test_formats_at_the_edges_of_the_text() -> None:
    for token in TOKENS.values():
        for text in (token, token + " tail", "head " + token, token[:-1], token + "x"):
            assert Redactor({})(text) == _reference_redact(text)


def test_two_private_keys_and_one_without_end() -> None:
    body = "\n".join(base64.b64encode(os.urandom(48)).decode() for _ in range(3))
    key = f"{_PEM}\n{body}\n{_PEM_END}"
    text = f"a\n{key}\nmiddle\n{key}\nb\n{_PEM}\n{body}\nto the end"
    out = Redactor({})(text)
    assert out == f"a\n{REDACTED}\nmiddle\n{REDACTED}\nb\n{REDACTED}"
    assert out == _reference_redact(text)


def test_private_key_block_in_a_diff_is_redacted_across_its_lines() -> None:
    lines = [base64.b64encode(os.urandom(48)).decode() for _ in range(25)]
    diff = "\n".join(
        ["diff --git a/k.pem b/k.pem", "@@ -0,0 +1,27 @@", f"+{_PEM}"]
        + [f"+{line}" for line in lines]
        + [f"+{_PEM_END}", " unchanged"]
    )
    out = Redactor({})(diff)
    assert out == f"diff --git a/k.pem b/k.pem\n@@ -0,0 +1,27 @@\n+{REDACTED}\n unchanged"
    assert not any(line in out for line in lines)


def test_every_url_credential_in_a_text_is_redacted() -> None:
    passwords = [_random(_ALNUM, 12) for _ in range(3)]
    text = "\n".join(
        [
            f"git clone https://bot:{passwords[0]}@example.com/a.git",
            "see https://example.com/docs:latest and ftp://host/path",  # no credentials
            f"url = 'postgres://admin:{passwords[1]}@db:5432/x' # and "
            f"redis://u:{passwords[2]}@cache",
        ]
    )
    out = Redactor({})(text)
    assert not any(password in out for password in passwords)
    assert out.count(REDACTED) == 3
    assert "https://example.com/docs:latest" in out
    assert out == _reference_redact(text)


def _first_task(repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The first message the model is sent for a review of branch `feature` against main."""
    environment = {"NO_PROXY": "127.0.0.1", "OPENAI_API_KEY": "k", "REVIEWER_MODEL": "m"}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    submit = reply(tool_calls=[tool_call("submit_review", {"summary": "ok", "findings": []})])
    with FakeLLM([submit]) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        args = ["review", "--repo", str(repo.root), "--base", "main", "--quiet"]
        assert main([*args, "--format", f"json={tmp_path / 'r.json'}"]) == 0
        return str(llm.bodies[0]["messages"][1]["content"])


def test_a_key_header_without_its_end_hides_only_its_own_file_from_the_model(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test file holding a private-key header (no END line) must not take the files after
    it in the same request out of the model's sight."""
    repo.write("base.txt", "x\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("a_keys_test.py", 'HEADER = "-----BEGIN RSA PRIVATE KEY-----"\nSECRET = 1\n')
    repo.write("b_app.py", "def visible_function():\n    return 42\n")
    repo.commit("change")
    task = _first_task(repo, tmp_path, monkeypatch)
    assert "def visible_function():" in task  # the next file is shown
    assert "SECRET = 1" not in task  # the rest of the key's file is not


def test_a_file_named_like_a_key_header_hides_nothing_else_from_the_model(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile pull request names a file `-----BEGIN RSA PRIVATE KEY-----`: its name in the
    file list must not redact the rest of the request (every diff, while the files are
    reported as reviewed)."""
    repo.write("base.txt", "x\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("-----BEGIN RSA PRIVATE KEY-----", "harmless\n")
    repo.write("z_app.py", "def visible_function():\n    return 42\n")
    repo.commit("change")
    task = _first_task(repo, tmp_path, monkeypatch)
    assert "def visible_function():" in task  # every other file is shown
    assert "BEGIN RSA PRIVATE KEY" not in task  # the name itself never is


def test_a_key_header_in_one_finding_hides_no_other_finding_on_github() -> None:
    """The summary comment and a review body are redacted value by value: a finding whose
    title carries a key header (no END line) keeps the findings after it."""
    from reviewer.findings import FileCoverage, Finding, ReviewResult, Severity
    from reviewer.forge.signing import Signer
    from reviewer.report.github import review_body, summary_comment

    hostile = Finding(
        path="-----BEGIN RSA PRIVATE KEY-----",
        line=1,
        severity=Severity.HIGH,
        title="See -----BEGIN RSA PRIVATE KEY----- here",
        body="x",
    )
    later = Finding(path="z.py", line=2, severity=Severity.LOW, title="Later finding", body="y")
    result = ReviewResult(
        status="complete",
        summary="s",
        findings=(hostile, later),
        model="m",
        base="a" * 40,
        head="b" * 40,
        files=(FileCoverage(hostile.path, "added", True), FileCoverage("z.py", "added", True)),
    )
    redact = Redactor()
    comment = summary_comment(result, state_line="<!-- state -->", redact=redact)
    assert "Later finding" in comment and "BEGIN RSA PRIVATE KEY" not in comment
    body = review_body(0, [hostile, later], "1", None, "r", Signer.from_secret("k", "o/n#1"),
                       redact=redact)  # fmt: skip
    assert "Later finding" in body and "BEGIN RSA PRIVATE KEY" not in body
