"""Benchmarks of the review harness: overhead and memory on a large change, scaling, and
concurrency of batches. Not a test; prints ratios measured side by side in one run.

    .venv/bin/python bench/bench_review.py [--work-dir DIR] [--runs N]

1. Overhead: `reviewer review` of a change of 500 files and 50,000 changed lines in a
   repository of 3,000 files, with an instant scripted model, against `git diff` of the same
   range: wall time and peak memory (max RSS of the process).
2. Scaling: the same for changes 10x, 100x and 1000x smaller.
3. Concurrency: a change that makes 10 batches, with a model that takes 1 s per call, at
   concurrency 1 and 4.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reviewer.testing import FakeLLM, reply, tool_call

ROOT = Path(__file__).resolve().parents[1]
BASE_FILES = 3000
# (label, files changed, lines added per file): 500 x 100 = 50,000 changed lines.
SIZES = (("1x", 500, 100), ("1/10", 50, 100), ("1/100", 5, 100), ("1/1000", 1, 50))


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def source(name: str, lines: int) -> str:
    return "".join(
        f"def {name}_{n}(value):\n    return value * {n} + len('{name}')\n"
        for n in range(lines // 2)
    )


def make_repo(work: Path) -> Path:
    repo = work / "repo"
    if (repo / ".git").is_dir():
        return repo
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for n in range(BASE_FILES):
        path = repo / f"pkg{n % 30}" / f"mod{n}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(source(f"f{n}", 200))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    for label, files, added in SIZES:
        git(repo, "checkout", "-q", "-B", f"change-{label.replace('/', '_')}", "main")
        for n in range(files):
            path = repo / f"pkg{n % 30}" / f"mod{n}.py"
            path.write_text(path.read_text() + source(f"new{n}", added))
        git(repo, "commit", "-qam", f"change {label}")
    # Ten files that each fill one batch at the concurrency benchmark's window.
    git(repo, "checkout", "-q", "-B", "ten-batches", "main")
    for n in range(10):
        path = repo / f"batch{n}" / "big.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(source(f"b{n}", 300))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ten batches")
    git(repo, "checkout", "-q", "main")
    return repo


def instant(request: dict[str, Any]) -> dict[str, Any]:
    return reply(tool_calls=[tool_call("submit_review", {"summary": "ok", "findings": []})])


def measure(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS in MB of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
    proc.returncode = 0
    return elapsed, usage.ru_maxrss / 1024


def review_env(base_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWER_", "OPENAI_"))}
    env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="bench",
        REVIEWER_MODEL="fake-model",
        NO_PROXY="127.0.0.1",
        **extra,
    )
    return env


def reviewer_argv(branch: str, report: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "reviewer",
        "review",
        "--base",
        "main",
        "--head",
        branch,
        "--quiet",
        "--format",
        f"json={report}",
    ]


def bench_sizes(repo: Path, runs: int, work: Path) -> list[dict[str, Any]]:
    rows = []
    for label, files, added in SIZES:
        branch = f"change-{label.replace('/', '_')}"
        diff_times, diff_mem, review_times, review_mem, requests = [], [], [], [], 0
        for _ in range(runs):
            seconds, mb = measure(["git", "diff", f"main...{branch}"], dict(os.environ), repo)
            diff_times.append(seconds)
            diff_mem.append(mb)
            with FakeLLM([instant], on_exhausted="repeat_last") as llm:
                report = work / "report.json"
                seconds, mb = measure(reviewer_argv(branch, report), review_env(llm.base_url), repo)
                requests = len(llm.bodies)
            review_times.append(seconds)
            review_mem.append(mb)
            data = json.loads(report.read_text())
            assert data["status"] == "complete", data["incomplete_reason"]
            assert sum(f["reviewed"] for f in data["files"]) == files
        rows.append(
            {
                "size": label,
                "files": files,
                "changed_lines": files * added,
                "git_diff_s": statistics.median(diff_times),
                "git_diff_mb": max(diff_mem),
                "review_s": statistics.median(review_times),
                "review_mb": max(review_mem),
                "requests": requests,
            }
        )
    return rows


def bench_concurrency(repo: Path, runs: int, work: Path) -> list[dict[str, Any]]:
    rows = []
    for concurrency in (1, 4):
        times, requests = [], 0
        for _ in range(runs):
            with FakeLLM([{"delay": 1.0, **instant({})}], on_exhausted="repeat_last") as llm:
                env = review_env(
                    llm.base_url,
                    REVIEWER_CONTEXT_WINDOW="12000",
                    REVIEWER_CONCURRENCY=str(concurrency),
                )
                seconds, _mb = measure(reviewer_argv("ten-batches", work / "c.json"), env, repo)
                requests = len(llm.bodies)
            times.append(seconds)
        rows.append(
            {"concurrency": concurrency, "batches": requests, "wall_s": statistics.median(times)}
        )
    return rows


def bench_startup(runs: int) -> dict[str, float]:
    result = {}
    for name, argv in (
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("reviewer --version", [sys.executable, "-m", "reviewer", "--version"]),
        ("reviewer --help", [sys.executable, "-m", "reviewer", "--help"]),
    ):
        result[name] = statistics.median(
            measure(argv, dict(os.environ), ROOT)[0] for _ in range(runs)
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--work-dir", type=Path, help="keep and reuse the generated repository here"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per case (median reported)")
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="reviewer-bench-"))
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        repo = make_repo(work)
        print(
            f"machine: nproc {os.cpu_count()}, {sys.version.split()[0]}, {git(repo, '--version')}"
        )
        print(f"repository: {BASE_FILES} files; runs per case: {args.runs} (median)\n")
        print("#### Harness overhead and scaling (instant scripted model)\n")
        columns = (
            "change",
            "files",
            "changed lines",
            "git diff s",
            "review s",
            "overhead s",
            "review / git diff",
            "git diff MB",
            "review MB",
            "model requests",
        )
        print("| " + " | ".join(columns) + " |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in bench_sizes(repo, args.runs, work):
            print(
                f"| {row['size']} | {row['files']} | {row['changed_lines']:,} "
                f"| {row['git_diff_s']:.3f} | "
                f"{row['review_s']:.2f} | {row['review_s'] - row['git_diff_s']:.2f} | "
                f"{row['review_s'] / row['git_diff_s']:.0f}x | {row['git_diff_mb']:.0f} | "
                f"{row['review_mb']:.0f} | {row['requests']} |"
            )
        print("\n#### Concurrency: 10 batches, 1 s per model call\n")
        print("| concurrency | model requests | wall s |")
        print("|---:|---:|---:|")
        for row in bench_concurrency(repo, max(1, args.runs - 1), work):
            print(f"| {row['concurrency']} | {row['batches']} | {row['wall_s']:.2f} |")
        print("\n#### Start-up\n")
        print("| command | s |")
        print("|---|---:|")
        for name, seconds in bench_startup(args.runs + 2).items():
            print(f"| `{name}` | {seconds:.3f} |")
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
