"""Cost and speed of the review harness on real history (sympy), with scripted models. Not a
test; every figure is a median of `--runs`, and ratios are against `git diff` measured in
the same run.

    .venv/bin/python bench/bench_sympy.py --sympy PATH [--runs N] [--range A..B]...

PATH is a clone of https://github.com/sympy/sympy with its tags (bench/README.md says how).

1. Harness: `reviewer review --base A --head B` as a process, with a model that submits at
   once, against `git diff A...B`: wall time, peak memory (max RSS), prompt characters sent
   per byte of `git diff` output, model requests.
2. Token budget: the same range with `REVIEWER_MAX_TOKENS=1000000` and a model that reads
   two files before it submits, each reply reporting its usage as OpenAI would (prompt
   tokens estimated from the request): what was spent against the budget.
3. Prompt caching: with that model, the share of each request's prompt (the JSON of its
   messages and tools) that is a byte-identical prefix of the previous request of the same
   loop, summed over the review.
4. Concurrency: 8 parts, a model that takes 2 s per reply, at concurrency 4: the process's
   wall time, and the review's own (from the report: without interpreter start and
   imports), against the ideal. Twice: a model that submits at once (ideal 2 rounds x 2 s
   = 4 s), and one whose first reply asks for four tools in one turn (ideal 2 x 2 x 2 s).
5. Dry run: `reviewer review --dry-run --format json=...` as a process (no model server at
   all: OPENAI_BASE_URL points at a closed port and no API key is set), against
   `git diff A...B`: wall time, peak memory, parts, and the estimate it prints.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench_review import review_env as plain_env  # the same scripted-model environment

from reviewer.testing import FakeLLM, reply, tool_call

DEFAULT_RANGES = ("sympy-1.13.0..sympy-1.14.0", "sympy-1.9..sympy-1.12", "sympy-1.5..sympy-1.14.0")


def measure(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB, and the exit code of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"{argv} failed: {proc.stderr.read().decode()[-800:]}")  # type: ignore[union-attr]
    return elapsed, usage.ru_maxrss / 1024, proc.returncode


def git_diff(repo: Path, base: str, head: str) -> tuple[float, float, int]:
    """Seconds, MB and output bytes of `git diff base...head`."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["git", "diff", f"{base}...{head}"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    size = 0
    assert proc.stdout is not None
    while chunk := proc.stdout.read(1 << 20):
        size += len(chunk)
    _pid, _status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return time.perf_counter() - started, usage.ru_maxrss / 1024, size


# Budgets out of the way, except where a benchmark sets one: these measure the harness.
UNBOUNDED = {
    "REVIEWER_MAX_TURNS": "100000",
    "REVIEWER_MAX_TOOL_CALLS": "100000",
    "REVIEWER_MAX_TOKENS": "1000000000",
    "REVIEWER_MAX_SECONDS": "3600",
}


def review_env(base_url: str, **extra: str) -> dict[str, str]:
    return plain_env(base_url, **{**UNBOUNDED, **extra})


# `reviewer` run by a wrapper that writes the process's own peak memory (RUSAGE_SELF) to
# BENCH_RSS_FILE as it exits: the rusage wait4 gives a parent is the largest of the child
# and the children it waited for, so it would report git's peak when git's is larger.
_OWN_RSS = (
    "import os, resource, sys\n"
    "from reviewer.cli.program import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    if os.environ.get('BENCH_RSS_FILE'):\n"
    "        with open(os.environ['BENCH_RSS_FILE'], 'w') as out:\n"
    "            out.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    "sys.exit(code)\n"
)


def review_argv(base: str, head: str, report: Path) -> list[str]:
    return [
        sys.executable, "-c", _OWN_RSS, "review", "--base", base, "--head", head,
        "--quiet", "--format", f"json={report}",
    ]  # fmt: skip


def own_mb(env: dict[str, str]) -> float:
    return int(Path(env["BENCH_RSS_FILE"]).read_text()) / 1024


def submit() -> dict[str, Any]:
    return reply(tool_calls=[tool_call("submit_review", {"summary": "ok", "findings": []})])


def instant(_request: dict[str, Any]) -> dict[str, Any]:
    return submit()


def first_path(request: dict[str, Any]) -> str:
    task = request["messages"][1]["content"]
    diff = task.split("## The diff", 1)[-1]
    return diff.split("\n### ", 1)[1].split(" (", 1)[0] if "\n### " in diff else "README.md"


def reader(reads: int) -> Any:
    """A model that reads the part's first file `reads` times (different ranges), then submits."""

    def step(request: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in request["messages"] if m["role"] == "tool")
        if done < reads:
            args = {
                "path": first_path(request),
                "startLine": 1 + 40 * done,
                "endLine": 40 * (done + 1),
            }
            return reply(tool_calls=[tool_call("read_file_lines", args)])
        return submit()

    return step


class Served:
    """The scripted server in a process of its own, as a real server is: in the benchmark's
    process its threads would compete with the measuring, and the review's peak memory
    was seen to vary (110-254 MB for one range) when they did. What the benchmark needs of
    the requests (their count, prompt characters, cache-prefix share) is computed there
    and sent back when the block ends."""

    def __init__(self, step: Any) -> None:
        context = multiprocessing.get_context("fork")  # the step may be a closure
        self._commands, child_end = context.Pipe()
        self._process = context.Process(target=self._serve, args=(step, child_end), daemon=True)
        self.base_url = ""
        self.stats: dict[str, Any] = {}

    @staticmethod
    def _serve(step: Any, pipe: Any) -> None:
        with FakeLLM([step], on_exhausted="repeat_last") as llm:
            pipe.send(llm.base_url)
            pipe.recv()  # the benchmark is done with the server
            bodies = llm.bodies
            pipe.send(
                {
                    "requests": len(bodies),
                    "prompt_chars": prompt_chars(bodies),
                    "prefix_share": prefix_share(bodies),
                }
            )

    def __enter__(self) -> Served:
        self._process.start()
        self.base_url = self._commands.recv()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._commands.send("stop")
        self.stats = self._commands.recv()
        self._process.join(timeout=30)


def prompt_chars(bodies: list[dict[str, Any]]) -> int:
    return sum(len(m.get("content") or "") for body in bodies for m in body["messages"])


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by bisection on slice equality (C speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def prefix_share(bodies: list[dict[str, Any]]) -> float:
    """Σ common prefix with the previous request of the same loop / Σ request size."""
    last: dict[str, str] = {}
    shared = total = 0
    for body in bodies:
        text = json.dumps([body["tools"], body["messages"]], ensure_ascii=False)
        loop = body["messages"][1]["content"]  # the task: one per loop
        before = last.get(loop)
        if before is not None:
            shared += common_prefix(before, text)
            total += len(text)
        last[loop] = text
    return shared / total if total else 1.0


def median(values: list[float]) -> float:
    return statistics.median(values)


def bench_range(repo: Path, spec: str, runs: int, work: Path) -> dict[str, Any]:
    base, head = spec.split("..")
    diffs = [git_diff(repo, base, head) for _ in range(runs)]
    row: dict[str, Any] = {
        "range": spec,
        "git_s": median([d[0] for d in diffs]),
        "git_mb": max(d[1] for d in diffs),
        "diff_bytes": diffs[0][2],
    }
    times, mems, with_git = [], [], []
    for _ in range(runs):
        with Served(instant) as llm:
            env = review_env(llm.base_url, BENCH_RSS_FILE=str(work / "rss"))
            seconds, mb, code = measure(review_argv(base, head, work / "r.json"), env, repo)
        stats = llm.stats
        report = json.loads((work / "r.json").read_text())
        assert code == 0 and report["status"] == "complete", report["incomplete_reason"]
        times.append(seconds)
        mems.append(own_mb(env))
        with_git.append(mb)
    row.update(
        review_s=median(times),
        review_mb=max(mems),
        with_git_mb=max(with_git),
        requests=stats["requests"],
        files=len(report["files"]),
        prompt_chars=stats["prompt_chars"],
    )
    return row


def bench_budget(repo: Path, spec: str, work: Path) -> dict[str, Any]:
    base, head = spec.split("..")
    with Served(reader(2)) as llm:
        env = review_env(llm.base_url, REVIEWER_MAX_TOKENS="1000000")
        _s, _mb, code = measure(review_argv(base, head, work / "b.json"), env, repo)
    report = json.loads((work / "b.json").read_text())
    return {
        "range": spec,
        "exit": code,
        "spent": report["usage"]["total_tokens"],
        "requests": report["usage"]["requests"],
        "reviewed": sum(f["reviewed"] for f in report["files"]),
        "files": len(report["files"]),
        "prefix_share": llm.stats["prefix_share"],
    }


def bench_cache(repo: Path, spec: str, work: Path) -> float:
    base, head = spec.split("..")
    with Served(reader(4)) as llm:
        env = review_env(llm.base_url)
        _s, _mb, code = measure(review_argv(base, head, work / "c.json"), env, repo)
        assert code == 0, json.loads((work / "c.json").read_text())["incomplete_reason"]
    return float(llm.stats["prefix_share"])


def eight_parts(work: Path) -> Path:
    repo = work / "eight"
    if (repo / ".git").is_dir():
        return repo
    repo.mkdir(parents=True)
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "--allow-empty", "-m", "base")
    run("checkout", "-q", "-b", "eight")
    for n in range(8):
        path = repo / f"part{n}" / "big.py"
        path.parent.mkdir()
        path.write_text(
            "".join(f"def f{n}_{i}(value):\n    return value * {i}\n" for i in range(150))
        )
    run("add", "-A")
    run("-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "eight parts")
    return repo


def four_tools_then_submit(request: dict[str, Any]) -> dict[str, Any]:
    if any(m["role"] == "tool" for m in request["messages"]):
        return submit()
    path = first_path(request)
    calls = [
        tool_call(
            "read_file_lines", {"path": path, "startLine": 1 + 50 * n, "endLine": 50 * (n + 1)}
        )
        for n in range(2)
    ] + [
        tool_call("get_git_log", {"path": path}),
        tool_call("get_git_blame", {"path": path, "startLine": 1, "endLine": 40}),
    ]
    return reply(tool_calls=calls)


def bench_dry_run(repo: Path, spec: str, runs: int, work: Path) -> dict[str, Any]:
    base, head = spec.split("..")
    plan_file = work / "plan.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWER_", "OPENAI_"))}
    env.update(
        REVIEWER_MODEL="gpt-4.1",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",  # nothing listens: a request would fail
        BENCH_RSS_FILE=str(work / "dry.rss"),
    )
    argv = [*review_argv(base, head, plan_file), "--dry-run"]
    times, mbs, gits = [], [], []
    for _ in range(runs):
        gits.append(git_diff(repo, base, head)[0])
        elapsed, _mb, code = measure(argv, env, repo)
        if code != 0:
            raise SystemExit(f"the dry run of {spec} exited {code}")
        times.append(elapsed)
        mbs.append(own_mb(env))
    plan = json.loads(plan_file.read_text())
    return {
        "files": len(plan["files"]),
        "parts": len(plan["parts"]),
        "dry_s": median(times),
        "git_s": median(gits),
        "mb": median(mbs),
        "estimate": plan["estimate"],
    }


def bench_concurrency(work: Path, runs: int, model: Any, replies: int) -> dict[str, Any]:
    repo = eight_parts(work)
    times, inside = [], []
    for _ in range(runs):
        with Served(lambda r: {"delay": 2.0, **model(r)}) as llm:
            env = review_env(
                llm.base_url, REVIEWER_CONTEXT_WINDOW="12000", REVIEWER_CONCURRENCY="4"
            )
            seconds, _mb, code = measure(review_argv("main", "eight", work / "e.json"), env, repo)
        requests = llm.stats["requests"]
        report = json.loads((work / "e.json").read_text())
        assert code == 0, report["incomplete_reason"]
        times.append(seconds)
        inside.append(report["duration_seconds"])
    parts = requests // replies
    ideal = 2.0 * replies * -(-parts // 4)
    return {
        "parts": parts,
        "requests": requests,
        "wall_s": median(times),
        "review_s": median(inside),
        "ideal_s": ideal,
    }


CONCURRENCY_COLUMNS = [
    "model",
    "parts",
    "requests",
    "process s",
    "review s",
    "ideal s",
    "process / ideal",
    "review / ideal",
]


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    """A Markdown table; the first column left-aligned, the rest right-aligned."""
    print(f"\n#### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sympy", type=Path, required=True, help="a clone of sympy with tags")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--range", action="append", dest="ranges", help="A..B (repeatable)")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["harness", "budget", "cache", "concurrency", "dry-run"],
    )
    args = parser.parse_args()
    repo = args.sympy.resolve()
    ranges = args.ranges or list(DEFAULT_RANGES)
    version = sys.version.split()[0]
    print(f"machine: nproc {os.cpu_count()}, Python {version}; runs per case: {args.runs}")
    with tempfile.TemporaryDirectory(prefix="reviewer-bench-") as temp:
        work = Path(temp)
        if "harness" not in args.skip:
            rows = []
            for spec in ranges:
                row = bench_range(repo, spec, args.runs, work)
                allowed = 60 + 3 * row["diff_bytes"] / (1 << 20)
                rows.append(
                    [
                        spec,
                        f"{row['files']:,}",
                        f"{row['diff_bytes'] / (1 << 20):.1f}",
                        f"{row['git_s']:.2f}",
                        f"{row['review_s']:.2f}",
                        f"{row['review_s'] / row['git_s']:.1f}x",
                        f"{row['review_mb']:.0f}",
                        f"{allowed:.0f}",
                        f"{row['git_mb']:.0f} / {row['with_git_mb']:.0f}",
                        f"{row['prompt_chars'] / row['diff_bytes']:.2f}",
                        str(row["requests"]),
                    ]
                )
            header = ["range", "files", "diff MiB", "git diff s", "review s", "ratio"]
            header += ["peak MB", "MB allowed", "git diff MB / largest of both"]
            header += ["prompt chars / diff byte", "requests"]
            table("Harness (instant model)", header, rows)
        spec = "sympy-1.9..sympy-1.12"
        if "dry-run" not in args.skip:
            rows = []
            for dry_spec in ranges:
                row = bench_dry_run(repo, dry_spec, args.runs, work)
                tokens, cost = row["estimate"]["tokens"], row["estimate"]["cost_usd"]
                rows.append(
                    [
                        dry_spec,
                        f"{row['files']:,}",
                        str(row["parts"]),
                        f"{row['git_s']:.2f}",
                        f"{row['dry_s']:.2f}",
                        f"{row['mb']:.0f}",
                        f"{tokens['low']:,} to {tokens['high']:,}",
                        f"${cost['low']:,.2f} to ${cost['high']:,.2f}",
                    ]
                )
            header = ["range", "files", "parts", "git diff s", "dry run s", "peak MB"]
            header += ["estimated tokens", "estimated cost (gpt-4.1)"]
            table("Dry run (no model; goal under 5 s on sympy-1.9..sympy-1.12)", header, rows)
        if "budget" not in args.skip:
            row = bench_budget(repo, spec, work)
            cells = [spec, str(row["exit"]), f"{row['spent']:,}", f"{row['spent'] / 1e6:.2f}"]
            cells += [str(row["requests"]), f"{row['reviewed']:,} of {row['files']:,}"]
            header = ["range", "exit", "tokens spent", "spent / budget", "requests", "reviewed"]
            table("Token budget 1,000,000 (a model that reads two files per part)", header, [cells])
        if "cache" not in args.skip:
            cache_range = "sympy-1.13.0..sympy-1.14.0"
            share = bench_cache(repo, cache_range, work)
            table(
                "Prompt caching (a model that reads four files per part)",
                ["range", "prompt that is a byte-identical prefix of the loop's previous request"],
                [[cache_range, f"{share:.1%}"]],
            )
        if "concurrency" not in args.skip:
            rows = []
            for name, model, replies in (
                ("submits at once", instant, 1),
                ("four tools in one turn, then submits", four_tools_then_submit, 2),
            ):
                row = bench_concurrency(work, args.runs, model, replies)
                rows.append(
                    [
                        name,
                        str(row["parts"]),
                        str(row["requests"]),
                        f"{row['wall_s']:.2f}",
                        f"{row['review_s']:.2f}",
                        f"{row['ideal_s']:.0f}",
                        f"{row['wall_s'] / row['ideal_s']:.2f}x",
                        f"{row['review_s'] / row['ideal_s']:.2f}x",
                    ]
                )
            table(
                "Concurrency: 8 parts, 2 s per reply, concurrency 4",
                CONCURRENCY_COLUMNS,
                rows,
            )


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # a fake server's thread at exit is not news
    main()
