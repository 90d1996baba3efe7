"""AACR-Bench (`alibaba/aacr-bench`, Apache-2.0): 200 pull requests of 50 repositories.

`dataset/positive_samples.json`: a list of pull requests, each `{"githubPrUrl",
"source_commit", "target_commit", "project_main_language", "category", "change_line_count",
"comments": [{"note", "path", "side" (left|right), "from_line", "to_line", "category",
"context", "is_ai_comment", "source_model"}]}`. `source_commit` is the base side (AACR's
own runner asks for a review of `source...target`; its right-side lines are in the target)
and `target_commit` the head that was reviewed; the diff is from their merge base, as for a
pull request. The expected issues carry a path, a side and a line range, so location can be
scored; they have no severity.

`dataset/negative_samples.json` lists the comments the annotators rejected, for the same
pull requests. AACR's own evaluator ignores them, and so do we, with one use: the four pull
requests that appear only there have no valid issue at all, and they become cases with no
expected issues, where every finding is noise (it counts against precision, never for
recall).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewerError
from reviewer.eval.cases import Dataset, ExpectedIssue
from reviewer.eval.clones import Clones, PullCase, commit_id, parse_pull_url, pull_requests_in

NAME = "aacr"
POSITIVE = "positive_samples.json"
NEGATIVE = "negative_samples.json"
_SIDES = {"right": "RIGHT", "left": "LEFT"}
_HINT = "pass dataset/positive_samples.json of alibaba/aacr-bench (or its folder)"


def sample_files(path: Path) -> tuple[Path | None, Path | None]:
    """The positive samples `path` names (a file, the dataset folder or the benchmark) and
    the negative samples beside them, when there."""
    if path.is_file():
        positive: Path | None = path
    else:
        positive = next(
            (f for f in (path / POSITIVE, path / "dataset" / POSITIVE) if f.is_file()), None
        )
    negative = positive.with_name(NEGATIVE) if positive is not None else None
    if negative is not None and (negative == positive or not negative.is_file()):
        negative = None
    return positive, negative


def detect_aacr(path: Path) -> bool:
    positive, _ = sample_files(path)
    try:
        samples = json.loads(positive.read_text(encoding="utf-8")) if positive else None
    except (OSError, ValueError, RecursionError):  # not one: its reader says why
        return False
    return (
        isinstance(samples, list)
        and bool(samples)
        and all(isinstance(s, dict) and "githubPrUrl" in s and "comments" in s for s in samples)
    )


def read_aacr(path: Path) -> tuple[str, tuple[PullCase, ...]]:
    """The version (a hash of the files) and the cases, before anything is fetched."""
    if not path.exists():
        raise ReviewerError(f"aacr: {path} does not exist; {_HINT}")
    positive, negative = sample_files(path)
    if positive is None:
        raise ReviewerError(f"aacr: no {POSITIVE} in {path}; {_HINT}")
    digest = hashlib.sha256()
    cases: dict[str, PullCase] = {}
    for file, with_issues in ((positive, True), (negative, False)):
        if file is None:
            continue
        raw = file.read_bytes()
        digest.update(file.name.encode() + b"\0" + raw + b"\0")
        for index, sample in enumerate(pull_requests_in(file, raw, "aacr", _HINT)):
            case = _case(sample, f"{file}: sample {index + 1}", with_issues)
            if with_issues and case.id in cases:
                raise ReviewerError(f"aacr: {file}: {case.pull} is listed twice; keep one")
            cases.setdefault(case.id, case)
    return f"sha256:{digest.hexdigest()[:16]}", tuple(cases.values())


def load_aacr(
    path: Path,
    *,
    cache_dir: Path,
    token: str | None,
    log: Callable[[str], None],
    git_base: str | None = None,
    api_url: str | None = None,
) -> Dataset:
    version, pending = read_aacr(path)
    clones = Clones(cache_dir, token=token, log=log, git_base=git_base, api_url=api_url)
    clean = sum(1 for case in pending if not case.expected)
    log(
        f"aacr: {len(pending) - clean} pull requests with expected issues, {clean} with none "
        "(their findings count as noise only)"
    )
    if token is None:
        log("aacr: no GitHub token: the pull requests' titles and descriptions are not read")
    return Dataset(NAME, version, tuple(clones.resolve(case) for case in pending))


def _case(sample: dict[str, Any], where: str, with_issues: bool) -> PullCase:
    pull = parse_pull_url(sample.get("githubPrUrl"), f"aacr: {where}: githubPrUrl")
    base = commit_id(sample.get("source_commit"), f"aacr: {where}: source_commit")
    head = commit_id(sample.get("target_commit"), f"aacr: {where}: target_commit")
    comments = sample.get("comments")
    if not isinstance(comments, list):
        raise ReviewerError(f"aacr: {where}: comments must be a list")
    expected = (
        tuple(_issue(c, f"aacr: {where}: comment {n}") for n, c in enumerate(comments, 1))
        if with_issues
        else ()
    )
    return PullCase(str(pull), pull, expected, pull.repository, base=base, head=head)


def _issue(comment: object, where: str) -> ExpectedIssue:
    if not isinstance(comment, dict):
        raise ReviewerError(f"{where}: not an object")
    note, path, side = comment.get("note"), comment.get("path"), comment.get("side")
    first, last = comment.get("from_line"), comment.get("to_line")
    if not isinstance(note, str) or not note.strip():
        raise ReviewerError(f"{where}: has no note")
    if not isinstance(path, str) or not path:
        raise ReviewerError(f"{where}: has no path")
    if not isinstance(side, str) or side.lower() not in _SIDES:
        raise ReviewerError(f"{where}: side {side!r} is neither left nor right")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in (first, last)):
        raise ReviewerError(f"{where}: from_line and to_line must be line numbers (1 or more)")
    assert isinstance(first, int) and isinstance(last, int)
    # One AACR comment has its range backwards (from_line after to_line): the same lines.
    return ExpectedIssue(
        note.strip(), None, path, (min(first, last), max(first, last)), _SIDES[side.lower()]
    )
