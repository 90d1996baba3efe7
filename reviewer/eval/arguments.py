"""The arguments of `reviewer eval` (light: the CLI builds its parser from this at start)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_eval_parser(commands: Any) -> argparse.ArgumentParser:
    evaluate = commands.add_parser(
        "eval",
        help="score the review on datasets of changes with known issues",
        description=(
            "Run the normal review on every case of the datasets, judge its findings against "
            "each case's expected issues, and write DIR/results.json and DIR/report.md. Exit 0 "
            "when every case was scored, 2 when any could not be (unless --allow-errors). "
            "The judge: --judge-model, REVIEWER_JUDGE_BASE_URL, REVIEWER_JUDGE_API_KEY "
            "(default: the reviewer's endpoint)."
        ),
    )
    evaluate.add_argument(
        "datasets",
        nargs="*",
        type=Path,
        metavar="DATASET",
        help="dataset file or folder (our JSON format, or another known one)",
    )
    evaluate.add_argument(
        "--out",
        type=Path,
        default=Path("reviewer-eval"),
        help="folder for results.json and report.md (default: reviewer-eval)",
    )
    evaluate.add_argument(
        "--cache", type=Path, help="cache of reviews and verdicts (default: ~/.cache/reviewer/eval)"
    )
    evaluate.add_argument("--jobs", type=int, default=1, help="cases run at a time (default: 1)")
    evaluate.add_argument("--limit", type=int, help="run only the first N cases")
    evaluate.add_argument(
        "--only",
        action="append",
        metavar="ID",
        help="run only these case ids (repeat or comma-separate)",
    )
    evaluate.add_argument(
        "--judge",
        choices=["llm", "location"],
        default="llm",
        help="llm (default; location is reported beside it) or location only",
    )
    evaluate.add_argument("--judge-model", help="the judge's model (or REVIEWER_JUDGE_MODEL)")
    evaluate.add_argument("--model", help="the reviewer's model (or REVIEWER_MODEL)")
    evaluate.add_argument(
        "--config", type=Path, help="settings file for every case instead of each repository's"
    )
    evaluate.add_argument("--dataset-format", help="read the datasets as this format")
    evaluate.add_argument(
        "--transcripts",
        type=Path,
        metavar="DIR",
        help="write the transcript of each review run now to DIR/CASE-HASH.jsonl (the case "
        "id as a file name, and a hash of it; a review taken from the cache has none)",
    )
    evaluate.add_argument(
        "--allow-errors",
        action="store_true",
        help="exit 0 even when some cases could not be scored",
    )
    evaluate.add_argument(
        "--from-history",
        type=Path,
        metavar="REPO",
        help="cases from REPO's own fix commits (with --since)",
    )
    evaluate.add_argument("--since", metavar="DATE", help="fix commits after DATE")
    evaluate.add_argument(
        "--fix-pattern",
        metavar="REGEX",
        help="what a fix commit's message matches (default: fix/bug/regression)",
    )
    evaluate.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("A", "B"),
        help="print two results.json side by side and exit",
    )
    evaluate.add_argument(
        "--shard",
        metavar="K/N",
        help="run only shard K of N: every N-th case from the K-th (for a CI matrix)",
    )
    evaluate.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="join the results folders of every shard of one run into --out and exit",
    )
    evaluate.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return evaluate
