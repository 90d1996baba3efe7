"""Benchmark of `reviewer eval`'s harness: time and memory per case outside the model.
Not a test; prints figures measured side by side in one run.

    .venv/bin/python bench/bench_eval.py [--cases N] [--work-dir DIR]

A local dataset of N cases (each a repository of 40 files built from two commits, one
expected issue) is evaluated with an instant scripted reviewer (two findings per case) and an
instant scripted judge (two questions per case), three ways:
1. `reviewer eval` with an empty cache (builds the repositories, reviews, judges);
2. `reviewer eval` again (every review and verdict from the cache: pure harness);
3. the reference: `reviewer review` of each case's change as its own process.
Wall time and peak memory (max RSS, wait4) of each process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reviewer.testing import FakeLLM
from reviewer.testing.fake_eval import JudgeRule, scripted_judge, scripted_reviewer

FILES = 40


def module(name: str, lines: int) -> str:
    return "".join(f"def {name}_{n}(v):\n    return v * {n}\n" for n in range(lines // 2))


def dataset(cases: int) -> dict[str, Any]:
    entries = []
    for number in range(cases):
        base = {f"pkg/m{i}.py": module(f"m{i}", 60) for i in range(FILES)}
        head = {"pkg/m0.py": module("m0", 60) + f"\n\ndef case_{number}(v):\n    return v / 0\n"}
        entries.append(
            {
                "id": f"case-{number}",
                "repository": f"bench/r{number % 4}",
                "commits": [{"message": "base", "files": base},
                            {"message": "change", "files": head}],
                "expected": [{"description": f"case_{number} divides by zero", "severity": "high",
                              "path": "pkg/m0.py", "lines": [63, 64]}],
            }
        )  # fmt: skip
    return {"format": "reviewer-eval", "name": "bench", "version": "1", "cases": entries}


def finding(line: int, title: str) -> dict[str, Any]:
    return {"path": "pkg/m0.py", "line": line, "severity": "high", "title": title, "body": "b"}


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        assert proc.stderr is not None
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {proc.stderr.read().decode()[-800:]}")
    return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--work-dir", type=Path)
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="bench-eval-"))
    shutil.rmtree(work / "cache", ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    path = work / "bench.json"
    path.write_text(json.dumps(dataset(args.cases)))
    reviews = {f"case_{n}(": [finding(63, "Division by zero"), finding(2, "Noise")]
               for n in range(args.cases)}  # fmt: skip
    rules = [JudgeRule("divides by zero", "Division by zero")]
    with (
        FakeLLM([scripted_reviewer(reviews)], on_exhausted="repeat_last") as reviewer,
        FakeLLM([scripted_judge(rules)], on_exhausted="repeat_last") as judge,
    ):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWER_", "OPENAI_"))}
        env.update(OPENAI_BASE_URL=reviewer.base_url, OPENAI_API_KEY="k", REVIEWER_MODEL="m",
                   REVIEWER_JUDGE_BASE_URL=judge.base_url, REVIEWER_JUDGE_MODEL="j",
                   NO_PROXY="127.0.0.1")  # fmt: skip
        argv = [sys.executable, "-m", "reviewer", "eval", str(path), "--out", str(work / "out"),
                "--cache", str(work / "cache"), "--quiet"]  # fmt: skip
        cold = measure(argv, env)
        results = json.loads((work / "out" / "results.json").read_text())
        assert results["cases_scored"] == args.cases, results["errors"]
        warm = measure(argv, env)
        singles = []
        for case in results["cases"]:
            review = case["review"]
            singles.append(
                measure(
                    [sys.executable, "-m", "reviewer", "review", "--repo", _repo_of(work, review),
                     "--base", review["base"], "--head", review["head"], "--format",
                     f"json={work / 'one.json'}", "--quiet"],
                    env,
                )
            )  # fmt: skip
    n = args.cases
    review_time = sum(t for t, _ in singles) / n
    review_rss = max(m for _, m in singles)
    print(f"cases: {n}, {FILES} files per repository, 2 findings and 2 judge questions per case\n")
    print("| run | wall per case (ms) | peak RSS (MB) |")
    print("|---|---|---|")
    print(f"| `reviewer eval`, empty cache | {cold[0] / n * 1000:.0f} | {cold[1]:.0f} |")
    print(f"| `reviewer eval`, all cached | {warm[0] / n * 1000:.0f} | {warm[1]:.0f} |")
    print(
        f"| `reviewer review` per case (reference) | {review_time * 1000:.0f} | {review_rss:.0f} |"
    )
    print(f"\neval (empty cache) per case / review process: {cold[0] / n / review_time:.2f}")
    if not args.work_dir:
        shutil.rmtree(work, ignore_errors=True)


def _repo_of(work: Path, review: dict[str, Any]) -> str:
    for repo in (work / "cache" / "repos").iterdir():
        probe = subprocess.run(["git", "cat-file", "-e", review["head"]], cwd=repo,
                               capture_output=True, check=False)  # fmt: skip
        if probe.returncode == 0:
            return str(repo)
    raise SystemExit(f"no repository holds {review['head']}")


if __name__ == "__main__":
    main()
