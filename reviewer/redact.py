"""Keeping secrets out of what the model reads and what the bot posts.

Two sources: values of the process environment that look secret (the bot runs beside
GITHUB_TOKEN and an API key), and well-known secret formats found in repository files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from functools import lru_cache
from typing import Any

REDACTED = "[REDACTED]"

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH(?!OR)|SESSION"
    r"|COOKIE|(?:^|_)(?:KEY|PASS|PWD|PIN|SALT)(?:$|_)",
    re.IGNORECASE,
)
# Long opaque values are redacted whatever their variable is called: a token passed under an
# innocent name is still a token. Paths, URLs without credentials and lists are not opaque.
_OPAQUE_VALUE = re.compile(r"[A-Za-z0-9_\-+=/.]{24,}")
_MIN_SECRET_LEN = 6
_HEX = re.compile(r"[0-9a-f]+")

_FORMATS: tuple[tuple[str, str], ...] = (
    (
        "private key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
        r"(-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    ),
    ("GitHub token", r"\b(gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("OpenAI key", r"\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}\b"),
    ("Anthropic key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}\b"),
    ("AWS access key id", r"\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("AWS secret key", r"(?i:aws_secret_access_key)\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}"),
    ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    ("Slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
    ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    ("Stripe key", r"\b[rs]k_(live|test)_[0-9A-Za-z]{16,}\b"),
    ("GitLab token", r"\bglpat-[0-9A-Za-z_\-]{20,}\b"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),
    ("URL credentials", r"(?<=://)[^/\s:@]{1,128}:[^/\s@]{1,256}(?=@)"),
)
_FORMAT_RE = re.compile("|".join(f"(?:{pattern})" for _, pattern in _FORMATS), re.DOTALL)


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The environment values that must never appear in output, longest first."""
    found: set[str] = set()
    for name, value in environ.items():
        value = value.strip()
        if len(value) < _MIN_SECRET_LEN:
            continue
        if _SECRET_NAME.search(name) or (_OPAQUE_VALUE.fullmatch(value) and not _is_path(value)):
            found.add(value)
    return tuple(sorted(found, key=len, reverse=True))


def _is_path(value: str) -> bool:
    """Paths and commit ids are not secrets, and are common in output."""
    if _HEX.fullmatch(value):
        return True
    return value.startswith(("/", "./", "~")) or (value.count("/") >= 2 and " " not in value)


@lru_cache(maxsize=4)
def _env_pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    if not values:
        return None
    return re.compile("|".join(re.escape(v) for v in values))


class Redactor:
    """Replaces secrets with a marker. Built once per run from the environment it started in."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._env = _env_pattern(secret_values(os.environ if environ is None else environ))

    def __call__(self, text: str) -> str:
        if self._env is not None:
            text = self._env.sub(REDACTED, text)
        return _FORMAT_RE.sub(_replace_format, text)


def _replace_format(match: re.Match[str]) -> str:
    whole = match.group(0)
    # Keep the assignment prefix of `aws_secret_access_key = ...` so the line still reads.
    prefix = re.match(r"(?i)aws_secret_access_key\s*[=:]\s*[\"']?", whole)
    return (prefix.group(0) if prefix else "") + REDACTED


_KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
# What a line of a PEM body looks like; used to decide whether a search hit needs a look at
# its whole file.
PEM_BODY_LINE = re.compile(r"^\s*[A-Za-z0-9+/=]{16,}\s*$")


def mask_private_keys(text: str) -> str:
    """Every line of a private-key block becomes [REDACTED], keeping the line count.

    The pattern redactor needs a block's BEGIN line in the same text; a tool that shows a
    range of lines (read_file_lines, blame, a search hit) may show body lines without it.
    Masking the file's text before any tool slices it closes that gap.
    """
    if "PRIVATE KEY" not in text:
        return text
    lines = text.split("\n")
    inside = False
    for index, line in enumerate(lines):
        if not inside and _KEY_BEGIN.search(line):
            inside = True
        if inside:
            ending = _KEY_END.search(line) is not None
            lines[index] = REDACTED + ("\r" if line.endswith("\r") else "")
            inside = not ending
    return "\n".join(lines)


def redact_values(value: Any, redact: Callable[[str], str]) -> Any:
    """Every string inside `value` (dataclasses, mappings, lists, tuples) redacted; the shape
    kept. Reports and transcripts pass through this before they are written anywhere."""
    if isinstance(value, Enum):  # a StrEnum is a str, but a name, not text
        return value
    if isinstance(value, str):
        return redact(value)
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: redact_values(getattr(value, f.name), redact) for f in fields(value)}
        return replace(value, **changes)
    if isinstance(value, Mapping):
        return {key: redact_values(item, redact) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_values(item, redact) for item in value)
    return value
