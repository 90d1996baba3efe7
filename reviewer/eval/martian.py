"""Martian's Code Review Bench, offline (`withmartian/code-review-benchmark`, MIT).

`offline/golden_comments/*.json`, one file per repository: a list of pull requests, each
`{"pr_title", "url", "original_url"?, "az_comment"?, "comments": [{"comment", "severity"}]}`.
`url` is the pull request that was reviewed, the one the benchmark's own scripts fetch
(`step0_fork_prs.py`: `pull/N/head` and `base.sha` of `url`); for some it is a copy in the
`ai-code-review-evaluation` organisation, whose reviewed commit is not in the upstream
repository (`az_comment`), so `original_url` is only a note. The expected issues carry no
location: only a description and a severity (Low, Medium, High, Critical).

Every case of a file gets the file's repository label (its most common upstream repository,
from `original_url` or `url`), so the copies count with the repository they copy.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewerError
from reviewer.eval.cases import Dataset, ExpectedIssue
from reviewer.eval.clones import Clones, PullCase, parse_pull_url, pull_requests_in

NAME = "martian"
_SEVERITIES = {"critical", "high", "medium", "low"}
_REPOSITORY_URL = re.compile(r"https://github\.com/([^/\s]+)/([^/\s]+)/(?:pull|commit)/")
_HINT = "pass offline/golden_comments of withmartian/code-review-benchmark or one of its files"


def golden_files(path: Path) -> list[Path]:
    """The golden-comment files `path` names: a file, a folder of them, or the benchmark."""
    if path.is_file():
        return [path]
    for folder in (path / "offline" / "golden_comments", path / "golden_comments", path):
        if folder.is_dir():
            found = sorted(folder.glob("*.json"))
            if found:
                return found
    return []


def detect_martian(path: Path) -> bool:
    try:
        files = golden_files(path)
        entries = json.loads(files[0].read_text(encoding="utf-8")) if files else None
    except (OSError, ValueError, RecursionError):  # not one: its reader says why
        return False
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(isinstance(e, dict) and "url" in e and "comments" in e for e in entries)
        and all(
            isinstance(c, dict) and "comment" in c
            for e in entries
            if isinstance(e["comments"], list)
            for c in e["comments"]
        )
    )


def read_martian(path: Path) -> tuple[str, tuple[PullCase, ...]]:
    """The version (a hash of the files) and the cases, before anything is fetched."""
    if not path.exists():
        raise ReviewerError(f"martian: {path} does not exist; {_HINT}")
    files = golden_files(path)
    if not files:
        raise ReviewerError(f"martian: no .json file in {path}; {_HINT}")
    digest = hashlib.sha256()
    cases: list[PullCase] = []
    seen: set[str] = set()
    for file in files:
        raw = file.read_bytes()
        digest.update(file.name.encode() + b"\0" + raw + b"\0")
        entries = pull_requests_in(file, raw, "martian", _HINT)
        label = _label(entries)
        for index, entry in enumerate(entries):
            case = _case(entry, f"{file}: entry {index + 1}", label)
            if case.id in seen:
                raise ReviewerError(f"martian: {file}: {case.pull} is listed twice; keep one")
            seen.add(case.id)
            cases.append(case)
    return f"sha256:{digest.hexdigest()[:16]}", tuple(cases)


def load_martian(
    path: Path,
    *,
    cache_dir: Path,
    token: str | None,
    log: Callable[[str], None],
    git_base: str | None = None,
    api_url: str | None = None,
) -> Dataset:
    version, pending = read_martian(path)
    clones = Clones(cache_dir, token=token, log=log, git_base=git_base, api_url=api_url)
    log(f"martian: {len(pending)} pull requests in {path}")
    return Dataset(NAME, version, tuple(clones.resolve(case) for case in pending))


def _case(entry: dict[str, Any], where: str, label: str) -> PullCase:
    pull = parse_pull_url(entry.get("url"), f"martian: {where}: url")
    title = entry.get("pr_title", "")
    comments = entry.get("comments")
    if not isinstance(title, str):
        raise ReviewerError(f"martian: {where}: pr_title must be text")
    if not isinstance(comments, list):
        raise ReviewerError(f"martian: {where}: comments must be a list of {{comment, severity}}")
    expected = []
    for number, comment in enumerate(comments, 1):
        text = comment.get("comment") if isinstance(comment, dict) else None
        severity = comment.get("severity") if isinstance(comment, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ReviewerError(f"martian: {where}: comment {number} has no text")
        if not isinstance(severity, str) or severity.lower() not in _SEVERITIES:
            raise ReviewerError(
                f"martian: {where}: comment {number} has severity {severity!r}; "
                "expected Low, Medium, High or Critical"
            )
        expected.append(ExpectedIssue(text.strip(), severity.lower()))
    return PullCase(str(pull), pull, tuple(expected), label or pull.repository, title=title)


def _label(entries: list[dict[str, Any]]) -> str:
    """The repository a file is about: the most common upstream repository of its entries
    (`original_url` is upstream when a `url` is a copy; it may name a commit)."""
    found: Counter[str] = Counter()
    for entry in entries:
        for key in ("original_url", "url"):
            match = _REPOSITORY_URL.match(str(entry.get(key) or ""))
            if match:
                found[f"{match.group(1)}/{match.group(2)}"] += 1
                break
    return found.most_common(1)[0][0] if found else ""
