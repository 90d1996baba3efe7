"""Benchmark of grounding a quote found nowhere (`reviewer.checks.grounding.ground`) in files
of growing size. Not a test; prints a Markdown table measured in one run (about a minute
with the defaults, most of it the previous implementation on the largest file).

    .venv/bin/python bench/bench_grounding.py [--sizes-mb 1,8,32] [--runs 3]

Each file is lines of Python-looking text; the finding cites its middle line with a one-line
quote of 40 characters that is in no line, so every comparison is made and fails: the worst
case. `ground` compares at most MAX_COMPARED_LINES lines around the cited line, so its time
stops growing with the file; the previous implementation (every line folded, then each line
joined with the next 2..6 and folded again, copied below) grows with it. The ratio is the
time on each file over the time on the smallest.
"""

from __future__ import annotations

import argparse
import platform
import time

from reviewer.checks import grounding
from reviewer.review.submission import FindingIn

QUOTE = "this line is in no file of the benchmark"


def previous(quote: str, lines: list[str]) -> list[tuple[int, int]]:
    """The implementation before the bound: the whole file, and a fold per line and count."""
    folded = [grounding.fold(line) for line in lines]
    (fragment,) = grounding.quote_lines(quote)
    inside = [(n, 1) for n, line in enumerate(folded, 1) if fragment in line]
    if inside:
        return inside
    spans = []
    for start in range(len(folded)):
        for count in range(2, grounding.MAX_JOINED_LINES + 1):
            if start + count > len(folded):
                break
            if fragment in grounding.fold(" ".join(folded[start : start + count])):
                spans.append((start + 1, count))
                break
    return spans


class _NoChange:
    def file(self, *_args: object) -> None:
        return None


def file_lines(megabytes: float) -> list[str]:
    lines, size, n = [], 0, 0
    while size < megabytes * 1_000_000:
        line = f"    value_{n} = compute(value_{n - 1}, 'text {n}')  # note"
        lines.append(line)
        size += len(line) + 1
        n += 1
    return lines


def best(runs: int, work: object) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes-mb", default="1,8,32")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes_mb.split(",")]
    print(f"machine: {platform.python_version()}, bound {grounding.MAX_COMPARED_LINES:,} lines")
    print()
    print("| file MB | lines | ground s | ratio | previous s | ratio | previous / ground |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    first: tuple[float, float] | None = None
    for megabytes in sizes:
        lines = file_lines(megabytes)
        middle = len(lines) // 2

        def bounded(lines: list[str] = lines, middle: int = middle) -> None:
            finding = FindingIn(
                path="big.py", line=middle, severity="high", title="t", body="b", quote=QUOTE
            )
            grounding.ground(finding, _NoChange(), lambda _p, _s: lines, set())  # type: ignore[arg-type]

        now = best(args.runs, bounded)
        before = best(1, lambda lines=lines: previous(QUOTE, lines))
        first = first or (now, before)
        print(
            f"| {megabytes:g} | {len(lines):,} | {now:.3f} | {now / first[0]:.1f}x | "
            f"{before:.2f} | {before / first[1]:.1f}x | {before / now:.0f}x |"
        )


if __name__ == "__main__":
    main()
