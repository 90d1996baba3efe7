"""Benchmark of secret redaction (`reviewer.safety.redact.Redactor`) on real diff text. Not a test;
prints a Markdown table measured side by side in one run (about 10 s with the defaults; the
old code takes a minute more for each 20 MB `--repo`).

    .venv/bin/python bench/bench_redact.py [--repo PATH]... [--max-mb N] [--runs N]

Texts: `git log -p` of a real repository (`--repo`, repeatable; default this one, whose
history is real), cut at `--max-mb`; the same with three secrets in the environment, one of
them written into the text; a synthetic diff with a secret of every format planted at known
lines, and the same with near-misses (an anchor without the rest: `task-list`, `AKIA`, a
URL without credentials) in nearly every line, the worst case for the prefilter; and the
first with a zero-width space inside every planted secret (the old code is given the text
without them, and the new code's output is compared without them). Each is redacted by the
implementation before the prefilter (one `re.sub` of the whole format
alternation, copied below as `ReferenceRedactor`) and by `Redactor`: throughput in MB/s
(UTF-8 bytes of the input per second, best of the runs), the ratio, and whether the outputs
are identical. Exits 1 if any output differs or a planted secret survives.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import string
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from reviewer.safety.redact import REDACTED, Redactor, secret_values

ROOT = Path(__file__).resolve().parents[1]

# --- The implementation before the prefilter, verbatim but for the rows added since -------

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
    (
        "GitLab tokens (a row per prefix in the code: one body, so one alternation here)",
        r"\b(?:glpat-|gloas-|gldt-|glrt-|glrtr-|GR1348941|glcbt-|glptt-|glft-|glimt-|glagent-"
        r"|glsoat-|glffct-)[0-9A-Za-z_\-]{20,}(?:\.[0-9a-z]{2,9}){0,2}\b",
    ),
    ("GitLab session cookie", r"(?<=_gitlab_session=)[0-9a-f]{32,}\b"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),
    ("URL credentials", r"(?<=://)[^/\s:@]{1,128}:[^/\s@]{1,256}(?=@)"),
)
_FORMAT_RE = re.compile("|".join(f"(?:{pattern})" for _, pattern in _FORMATS), re.DOTALL)


def _env_pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    if not values:
        return None
    return re.compile("|".join(re.escape(v) for v in values))


class ReferenceRedactor:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self._env = _env_pattern(secret_values(environ))

    def __call__(self, text: str) -> str:
        if self._env is not None:
            text = self._env.sub(REDACTED, text)
        return _FORMAT_RE.sub(_replace_format, text)


def _replace_format(match: re.Match[str]) -> str:
    whole = match.group(0)
    prefix = re.match(r"(?i)aws_secret_access_key\s*[=:]\s*[\"']?", whole)
    return (prefix.group(0) if prefix else "") + REDACTED


# --- Texts --------------------------------------------------------------------------------


def real_diff(repo: Path, max_mb: float) -> str:
    """`git log -p` of `repo`, newest first, decoded as the harness decodes git output."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "-p", "--no-color", "--no-ext-diff"],
        capture_output=True,
        check=True,
    ).stdout
    return out[: int(max_mb * 1_000_000)].decode("utf-8", errors="replace")


def _run(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def planted_secrets(rng: random.Random) -> list[tuple[str, str]]:
    """One secret of every format, as (text, the part of it that must not survive)."""
    alnum = string.ascii_letters + string.digits
    upper = string.ascii_uppercase + string.digits
    key_lines = [_run(rng, alnum + "+/", 64) for _ in range(8)]
    key_body = "\n".join(key_lines)
    aws_secret = _run(rng, alnum + "/+", 40)
    password = _run(rng, alnum, 16)
    whole = [
        "ghp_" + _run(rng, alnum, 36),
        "github_pat_" + _run(rng, alnum, 22) + "_" + _run(rng, alnum, 59),
        "sk-proj-" + _run(rng, alnum, 48),
        "sk-ant-api03-" + _run(rng, alnum, 40),
        "AKIA" + _run(rng, upper, 16),
        "xoxb-" + _run(rng, string.digits, 12) + "-" + _run(rng, alnum, 24),
        "https://hooks.slack.com/services/T" + _run(rng, upper, 8) + "/" + _run(rng, alnum, 24),
        "AIza" + _run(rng, alnum, 35),
        "sk_live_" + _run(rng, alnum, 24),
        "glpat-" + _run(rng, alnum, 20),
        "glrtr-" + _run(rng, alnum, 38) + ".01." + _run(rng, string.digits, 9),
        "glptt-" + _run(rng, "0123456789abcdef", 40),
        "glagent-" + _run(rng, alnum, 50),
        "npm_" + _run(rng, alnum, 36),
        "eyJhbGciOiJIUzI1NiJ9.eyJ" + _run(rng, alnum, 30) + "." + _run(rng, alnum, 43),
    ]
    return [
        (
            f"-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----",
            key_lines[3],
        ),
        ("aws_secret_access_key = " + aws_secret, aws_secret),
        (f"https://deploy:{password}@example.com/repo.git", password),
        *((secret, secret) for secret in whole),
    ]


# Words of ordinary code, and near-misses: an anchor of a format without the rest of it.
_WORDS = ("value", "result", "self", "items", "config", "return", "None", "len", "path", "key_id")
_NEAR_MISSES = (
    "task-list",  # sk-
    "https://example.com/docs",  # ://, and no credentials
    "AKIA",
    "eyJ",
    "-----BEGIN PUBLIC KEY-----",
    "github",
    "xoxo",
    "npm_run",
)


def synthetic_diff(
    mb: float, seed: int, near_misses: float, split: str = ""
) -> tuple[str, list[str], int]:
    """A diff of code-like lines, every `PLANT_EVERY`-th one holding a secret of the next
    format (with `split`, an invisible character, inside it after its sixth character), and
    a word a near-miss with probability `near_misses`. Returns the text, the parts of the
    planted secrets that must not survive, and how many formats were planted."""
    rng = random.Random(seed)
    secrets = planted_secrets(rng)
    lines: list[str] = []
    planted: list[str] = []
    size = 0
    n = 0
    while size < mb * 1_000_000:
        if n % 200 == 0:
            lines.append(f"diff --git a/mod{n}.py b/mod{n}.py\n@@ -1,200 +1,200 @@")
        if n % PLANT_EVERY == PLANT_EVERY // 2:
            secret, core = secrets[len(planted) % len(secrets)]
            planted.append(core)
            secret = secret[:6] + split + secret[6:]
            line = f"+    CONFIG[{n}] = '{secret}'"
        else:
            picked = [
                rng.choice(_NEAR_MISSES if rng.random() < near_misses else _WORDS) for _ in range(6)
            ]
            line = f"{rng.choice('+- ')}    result_{n} = compute({' '.join(picked)!r})  # {n}"
        lines.append(line)
        size += len(line) + 1
        n += 1
    return "\n".join(lines) + "\n", planted, min(len(planted), len(secrets))


PLANT_EVERY = 300


# --- Timing -------------------------------------------------------------------------------


def throughput(redact: Callable[[str], str], text: str, runs: int) -> tuple[float, str]:
    """MB/s (UTF-8 bytes of the input) of the best of `runs`, and the output."""
    best = float("inf")
    out = ""
    for _ in range(runs):
        start = time.perf_counter()
        out = redact(text)
        best = min(best, time.perf_counter() - start)
    return len(text.encode()) / 1e6 / best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repo",
        type=Path,
        action="append",
        help="repository whose `git log -p` is redacted (repeatable; default: this one)",
    )
    parser.add_argument("--max-mb", type=float, default=20.0, help="cut the real text here")
    parser.add_argument("--synthetic-mb", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=5, help="runs of the new code (best)")
    parser.add_argument("--reference-runs", type=int, default=1, help="runs of the old code")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    alnum = string.ascii_letters + string.digits
    # Three environment secrets, one of them written in the middle of the text.
    token = "ghs_" + _run(rng, alnum, 36)
    environ = {
        "GITHUB_TOKEN": token,
        "OPENAI_API_KEY": "sk-" + _run(rng, alnum, 48),
        "SESSION": _run(rng, alnum, 32),
    }
    # (label, text, environment, parts of secrets that must not survive, the invisible
    # character inside every planted secret or ""). The old code cannot see through one: it
    # is given the text without them, and the new code's output without them must be the same.
    cases: list[tuple[str, str, dict[str, str], list[str], str]] = []
    for repo in args.repo or [ROOT]:
        name = repo.resolve().name
        real = real_diff(repo, args.max_mb)
        middle = len(real) // 2
        cases.append((f"`git log -p` of {name}", real, {}, [], ""))
        with_token = real[:middle] + token + real[middle:]
        label = f"`git log -p` of {name}, 3 env secrets (1 present)"
        cases.append((label, with_token, environ, [token], ""))
    planted_formats = 0
    for label, rate, split in (
        ("synthetic diff", 0.01, ""),
        ("synthetic, near-misses in every line", 0.4, ""),
        ("synthetic, a zero-width space inside every secret", 0.01, "\u200b"),
    ):
        synthetic, planted, planted_formats = synthetic_diff(
            args.synthetic_mb, args.seed, rate, split
        )
        cases.append((label, synthetic, {}, planted, split))

    print(f"machine: nproc {os.cpu_count()}, Python {platform.python_version()}")
    for repo in args.repo or [ROOT]:
        head = subprocess.run(
            ["git", "-C", str(repo), "log", "-1", "--format=%h %cs"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(f"repository: {repo.resolve()} at {head}")
    print(f"runs: after best of {args.runs}, before best of {args.reference_runs}\n")
    print("| text | MB | chars > U+FFFF | before MB/s | after MB/s | after / before | identical |")
    print("|---|---:|---|---:|---:|---:|---|")
    failed = False
    left: list[str] = []
    for label, text, env, must_go, split in cases:
        old_text = text.replace(split, "") if split else text
        before, expected = throughput(ReferenceRedactor(env), old_text, args.reference_runs)
        after, got = throughput(Redactor(env), text, args.runs)
        if split:
            got = got.replace(split, "")
        identical = got == expected
        failed |= not identical
        wide = "yes" if text and ord(max(text)) > 0xFFFF else "no"
        mb = len(text.encode()) / 1e6
        print(
            f"| {label} | {mb:.1f} | {wide} | {before:.1f} | {after:.1f} | {after / before:.0f}x "
            f"| {'yes' if identical else 'NO'} |"
        )
        left += [secret for secret in must_go if secret in got]
    planted_total = sum(len(must_go) for _, _, _, must_go, _ in cases)
    print(
        f"\nsecrets planted: {planted_total} (the synthetic texts hold all {planted_formats} "
        f"kinds, every format); left in any output: {len(left)}"
    )
    failed |= bool(left)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
