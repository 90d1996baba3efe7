"""The secret formats the redactor knows (redact.py): one row each, with where it is
documented. Knowledge that grows: a new format is a row here, and a test token in
tests/test_redaction.py."""

from __future__ import annotations

import re
from typing import NamedTuple


class SecretFormat(NamedTuple):
    """One secret format: a row of `FORMATS`."""

    name: str
    pattern: str
    # Literal text that every match starts with (one of these). Only where an anchor occurs
    # is the pattern tried, so a match without one would be missed: keep them exact.
    anchors: tuple[str, ...]
    # The anchor is the text just before a match (the pattern's lookbehind), not its start.
    after_anchor: bool = False
    # The anchor is compared as the pattern compares it, ignoring case (`re.IGNORECASE`).
    ignore_case: bool = False
    # Where the format is documented (or, lacking a document, the scanner rule it follows).
    source: str = ""


# A private key block runs from its BEGIN line to its END line, or to the end of the text
# when it has none (a read cut at 50,000 characters can end inside a key).
KEY_HEADER = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"
KEY_FOOTER = r"-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"

_GITLAB_TOKENS = "https://docs.gitlab.com/security/tokens/#token-prefixes"


def _gitlab(name: str, prefix: str, source: str = _GITLAB_TOKENS) -> SecretFormat:
    """A GitLab token: its prefix, then at least 20 characters of the URL-safe alphabet
    (`Devise.friendly_token`, as every legacy token) and, for the routable tokens since GitLab
    17.x (`glpat-<payload>.01.<length+CRC>`), up to two dot-separated base-36 parts
    (gitleaks' `gitlab-pat-routable` rule)."""
    pattern = rf"\b{re.escape(prefix)}[0-9A-Za-z_\-]{{20,}}(?:\.[0-9a-z]{{2,9}}){{0,2}}\b"
    return SecretFormat(f"GitLab {name}", pattern, (prefix,), source=source)


# The formats, one row each with its source. Knowledge that grows: a new format is a row.
FORMATS: tuple[SecretFormat, ...] = (
    # First: redact.py finds its end without the regex (see `_format_spans` there).
    SecretFormat(
        "private key",
        rf"{KEY_HEADER}.*?({KEY_FOOTER}|\Z)",
        ("-----BEGIN",),
        source="RFC 7468 (PEM labels), OpenPGP's armor (RFC 4880 §6.2)",
    ),
    SecretFormat(
        "GitHub token",
        r"\b(gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        source="https://docs.github.com/en/authentication/keeping-your-account-and-data-secure"
        "/about-authentication-to-github#githubs-token-formats",
    ),
    SecretFormat(
        "OpenAI key",
        r"\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}\b",
        ("sk-",),
        source="https://platform.openai.com/docs/api-reference/authentication (sk-, sk-proj-, "
        "sk-svcacct-, sk-admin- keys)",
    ),
    SecretFormat(
        "Anthropic key",
        r"\bsk-ant-[A-Za-z0-9_\-]{20,}\b",
        ("sk-ant-",),
        source="https://docs.anthropic.com/en/api/overview (sk-ant-api03-...)",
    ),
    SecretFormat(
        "AWS access key id",
        r"\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        source="https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html"
        "#identifiers-unique-ids",
    ),
    SecretFormat(
        "AWS secret key",
        r"(?i:aws_secret_access_key)\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}",
        ("aws_secret_access_key",),
        ignore_case=True,
        source="https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html",
    ),
    SecretFormat(
        "Slack token",
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b",
        ("xox",),
        source="https://api.slack.com/concepts/token-types",
    ),
    SecretFormat(
        "Slack webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+",
        ("https://hooks.slack.com/services/",),
        source="https://api.slack.com/messaging/webhooks",
    ),
    SecretFormat(
        "Google API key",
        r"\bAIza[0-9A-Za-z_\-]{35}\b",
        ("AIza",),
        source="https://cloud.google.com/docs/authentication/api-keys (gitleaks gcp-api-key)",
    ),
    SecretFormat(
        "Stripe key",
        r"\b[rs]k_(live|test)_[0-9A-Za-z]{16,}\b",
        ("rk_live_", "rk_test_", "sk_live_", "sk_test_"),
        source="https://docs.stripe.com/keys",
    ),
    _gitlab("personal, project, group or impersonation access token", "glpat-"),
    _gitlab("OAuth application secret", "gloas-"),
    _gitlab("deploy token", "gldt-"),
    _gitlab("runner authentication token", "glrt-"),
    _gitlab(
        "runner authentication token (registered with a registration token)",
        "glrtr-",
        "https://gitlab.com/gitlab-org/gitlab-runner/-/merge_requests/5580 (gitlab!183554)",
    ),
    _gitlab(
        "runner registration token (deprecated)",
        "GR1348941",
        "https://rubydoc.info/github/gitlabhq/gitlabhq/RunnersTokenPrefixable",
    ),
    _gitlab("CI/CD job token", "glcbt-"),
    _gitlab("pipeline trigger token", "glptt-"),
    _gitlab("feed token", "glft-"),
    _gitlab("incoming mail token", "glimt-"),
    _gitlab("agent for Kubernetes token", "glagent-"),
    _gitlab("SCIM token", "glsoat-"),
    _gitlab("feature flags client token", "glffct-"),
    SecretFormat(
        "GitLab session cookie",
        r"(?<=_gitlab_session=)[0-9a-f]{32,}\b",
        ("_gitlab_session=",),
        after_anchor=True,
        source=_GITLAB_TOKENS,
    ),
    SecretFormat(
        "npm token",
        r"\bnpm_[A-Za-z0-9]{36}\b",
        ("npm_",),
        source="https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/",
    ),
    SecretFormat(
        "JSON web token",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b",
        ("eyJ",),
        source='RFC 7519 §3 (base64url of a JSON header and claims: `{"` is `eyJ`)',
    ),
    SecretFormat(
        "URL credentials",
        r"(?<=://)[^/\s:@]{1,128}:[^/\s@]{1,256}(?=@)",
        ("://",),
        after_anchor=True,
        source="RFC 3986 §3.2.1 (userinfo)",
    ),
)
