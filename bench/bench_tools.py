#!/usr/bin/env python
"""Speed benchmarks for the search_text, list_files and get_file_structure tools.

Run from the repository root:

    .venv/bin/python bench/bench_tools.py            # everything, ~2-3 minutes on 2 cores
    .venv/bin/python bench/bench_tools.py --help

Two benchmarks, each against the command-line tool a developer would compare it with:

* search: `run_tool("search_text", ...)` on a generated repository of ~2,400 files and
  ~33 MB of text, through each of the three engine paths (working tree -> rg on disk;
  revision == clean checkout -> rg on disk filtered by the commit's listing; revision not
  checked out -> `git grep -P` over git objects), against `rg -n PATTERN` run in the
  repository root with its output read fully from a pipe.
* list: `list_files` with `**` globs and `get_file_structure` on a 100,000-file tree,
  revision and working-tree mode, cold (a fresh workspace each run, so the timed call pays
  for the file listing) and warm (a reused workspace), against `git ls-files`.

Times are medians of --runs runs after --warmup runs; every variant of a query is timed in
the same round, in turn, so drift on a shared machine hits all of them alike. The output is
Markdown tables (paste them into bench/README.md).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import json
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import repogen  # a sibling module, found through the sys.path line above

import reviewer
from reviewer.tools import run_tool
from reviewer.workspace import (
    Listing,
    RevisionWorkspace,
    Workspace,
    WorktreeWorkspace,
    open_workspace,
)
from reviewer.workspace.gitcmd import run_git
from reviewer.workspace.search import ripgrep_binary

SEARCH_TARGET = 1.5
LIST_TARGET = 2.0
RG_HEAD_LINES = 100  # what search_text returns at most
# `rg -n` as a user runs it, minus any personal config that would change what it does.
BASELINE_ENV = {k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"}

Timed = Callable[[], object]
Prepare = Callable[[], Timed]  # untimed setup (e.g. a fresh workspace) -> the timed call


# --- timing ------------------------------------------------------------------------------


def measure(cases: dict[str, Prepare], runs: int, warmup: int) -> dict[str, float]:
    """Median seconds per case; each round times every case once, in turn."""
    samples: dict[str, list[float]] = {key: [] for key in cases}
    for round_index in range(warmup + runs):
        for key, prepare in cases.items():
            call = prepare()
            start = time.perf_counter()
            call()
            elapsed = time.perf_counter() - start
            if round_index >= warmup:
                samples[key].append(elapsed)
    return {key: statistics.median(values) for key, values in samples.items()}


def same(call: Timed) -> Prepare:
    return lambda: call


def read_all(argv: list[str], cwd: Path) -> int:
    """Run a command, read its whole stdout from a pipe; return the number of lines."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=BASELINE_ENV,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    data = proc.stdout.read()
    proc.stdout.close()
    proc.wait()
    return data.count(b"\n")


def read_head(argv: list[str], cwd: Path, lines: int) -> int:
    """Like `cmd | head -n LINES`: stop reading and kill the command after `lines` lines."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=BASELINE_ENV,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    count = 0
    for _line in proc.stdout:
        count += 1
        if count == lines:
            break
    proc.kill()
    proc.wait()
    proc.stdout.close()
    return count


# --- tables ------------------------------------------------------------------------------


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = [
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


def verdict(value: float, target: float) -> str:
    return f"{ratio(value)} ({'met' if value <= target else 'MISSED'}, target <= {target:g}x)"


# --- the search benchmark ----------------------------------------------------------------


@dataclass(frozen=True)
class SearchQuery:
    label: str
    args: dict[str, str]  # search_text arguments
    rg: list[str]  # the equivalent `rg` arguments


SEARCH_QUERIES = (
    SearchQuery("rare literal", {"pattern": repogen.RARE_TOKEN}, ["-n", repogen.RARE_TOKEN]),
    SearchQuery("common word", {"pattern": "return"}, ["-n", "return"]),
    SearchQuery(
        "regex: classes + alternation",
        {"pattern": r"\b(fetch|load|sync)_(token|secret|credential)\("},
        ["-n", r"\b(fetch|load|sync)_(token|secret|credential)\("],
    ),
    SearchQuery(
        "case-insensitive",
        {"pattern": "(?i)retry fails returns"},
        ["-n", "-i", "retry fails returns"],
    ),
    SearchQuery(
        "filePattern *.go",
        {"pattern": r"func \(s \*(Vault|Quota)Service\)", "filePattern": "*.go"},
        ["-n", "-g", "*.go", r"func \(s \*(Vault|Quota)Service\)"],
    ),
    SearchQuery(
        "path services/",
        {"pattern": "err != nil", "path": "services"},
        ["-n", "err != nil", "services"],
    ),
)

# engine path key -> (what it is, how to open the workspace)
ENGINE_PATHS: dict[str, tuple[str, Callable[[Path], Workspace]]] = {
    "worktree": (
        "working tree (uncommitted=True): rg on disk",
        lambda root: open_workspace(root, revision=None, uncommitted=True),
    ),
    "checkout": (
        "revision HEAD, clean checkout (matches_checkout): rg on disk, filtered by the listing",
        lambda root: open_workspace(root, revision="HEAD"),
    ),
    "overlay": (
        "revision HEAD~1, not checked out, clean checkout of HEAD: rg on disk for the files "
        "that are the same, git grep -P over objects for the one that differs",
        lambda root: open_workspace(root, revision="HEAD~1"),
    ),
    "objects": (
        "revision HEAD~1 when git cannot say which files on disk stand in (more than "
        "MAX_OVERLAY_FILES differ): git grep -P over git objects only; a dirty working tree "
        "takes the overlay path",
        lambda root: _objects_only(open_workspace(root, revision="HEAD~1")),
    ),
}


def _objects_only(workspace: Workspace) -> Workspace:
    # The fallback when the files that differ are unknown or too many; set on the instance
    # so the column measures that path.
    workspace.__dict__["disk_differences"] = None
    return workspace


_HIT_LINE = re.compile(r"^[^\n]+:\d+: ", re.MULTILINE)


def tool_hits(text: str) -> str:
    hits = len(_HIT_LINE.findall(text))
    return f"{hits}+" if "there are more" in text else str(hits)


def check_engine_paths(root: Path) -> None:
    """Fail loudly if a workspace would not take the engine path its column claims."""
    if ripgrep_binary() is None:
        sys.exit("rg not found beside this Python: the rg engine paths cannot be measured")
    worktree = ENGINE_PATHS["worktree"][1](root)
    checkout = ENGINE_PATHS["checkout"][1](root)
    objects = ENGINE_PATHS["objects"][1](root)
    if not isinstance(worktree, WorktreeWorkspace):
        sys.exit("the worktree column did not get a WorktreeWorkspace")
    if not (isinstance(checkout, RevisionWorkspace) and checkout.matches_checkout):
        sys.exit(
            "HEAD does not match the checkout (dirty or stat-dirty index): it would use git grep"
        )
    if not isinstance(objects, RevisionWorkspace) or objects.disk_differences is not None:
        sys.exit("the objects column would not use git grep alone")
    overlay = ENGINE_PATHS["overlay"][1](root)
    if not isinstance(overlay, RevisionWorkspace) or not overlay.disk_differences:
        sys.exit("HEAD~1 does not differ from a clean checkout: no overlay column")


@dataclass
class SearchRow:
    query: SearchQuery
    rg_lines: int = 0
    hits: dict[str, str] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)


def bench_search(root: Path, runs: int, warmup: int) -> list[SearchRow]:
    check_engine_paths(root)
    rg = ripgrep_binary()
    assert rg is not None
    warm = {key: opener(root) for key, (_label, opener) in ENGINE_PATHS.items()}
    rows = []
    for query in SEARCH_QUERIES:
        row = SearchRow(query)
        argv = [rg, *query.rg]
        row.rg_lines = read_all(argv, root)
        cases: dict[str, Prepare] = {
            "rg": same(lambda argv=argv: read_all(argv, root)),
            "rg100": same(lambda argv=argv: read_head(argv, root, RG_HEAD_LINES)),
        }
        for key, (_label, opener) in ENGINE_PATHS.items():
            result = run_tool("search_text", query.args, warm[key])
            if result.is_error:
                sys.exit(f"search_text {query.args} failed on {key}: {result.text}")
            row.hits[key] = tool_hits(result.text)
            cases[f"{key} warm"] = same(
                lambda ws=warm[key], args=query.args: run_tool("search_text", args, ws)
            )

            def cold(
                opener: Callable[[Path], Workspace] = opener, args: dict[str, str] = query.args
            ) -> Timed:
                workspace = opener(root)  # untimed; the timed call loads its listing
                return lambda: run_tool("search_text", args, workspace)

            cases[f"{key} cold"] = cold
        row.times = measure(cases, runs, warmup)
        expected = str(row.rg_lines) if row.rg_lines <= RG_HEAD_LINES else f"{RG_HEAD_LINES}+"
        for key, hits in row.hits.items():
            if hits != expected:
                print(f"  note: {query.label}: {key} returned {hits} hits, rg {row.rg_lines} lines")
        rows.append(row)
        print(f"  {query.label}: done", file=sys.stderr, flush=True)
    return rows


def report_search(rows: list[SearchRow], open_times: dict[str, float]) -> dict[str, float]:
    keys = [f"{k} {t}" for k in ENGINE_PATHS for t in ("warm", "cold")]
    header = ["query", "rg lines", "tool hits", "rg -n", f"rg -n, first {RG_HEAD_LINES}", *keys]
    body = []
    for row in rows:
        hits = "/".join(sorted(set(row.hits.values())))
        body.append(
            [
                row.query.label,
                f"{row.rg_lines:,}",
                hits,
                ms(row.times["rg"]),
                ms(row.times["rg100"]),
            ]
            + [ms(row.times[k]) for k in keys]
        )
    print("\n#### search_text: median time per query (ms)\n")
    print("Engine paths (columns):")
    for key, (what, _opener) in ENGINE_PATHS.items():
        print(f"- `{key}`: {what}")
    print(
        "- warm: one workspace reused for every run; cold: a fresh workspace per run, so "
        "the call also lists the files (and, for a revision, checks the checkout).\n"
    )
    print(table(header, body))
    opened = ", ".join(f"{k} {ms(v)} ms" for k, v in open_times.items())
    print(f"\n`open_workspace` itself (not in the times above, paid once per review): {opened}.")

    medians: dict[str, float] = {}
    for baseline, title in (
        ("rg", "search_text time / `rg -n` time (rg prints every hit)"),
        ("rg100", f"search_text time / `rg -n | head -{RG_HEAD_LINES}` time (same output size)"),
    ):
        ratio_rows = []
        per_key: dict[str, list[float]] = {k: [] for k in keys}
        # Queries with at most 100 hits: the tool and rg both read every file.
        full: dict[str, list[float]] = {k: [] for k in keys}
        for row in rows:
            cells = [row.query.label]
            for k in keys:
                value = row.times[k] / row.times[baseline]
                per_key[k].append(value)
                if row.rg_lines <= RG_HEAD_LINES:
                    full[k].append(value)
                cells.append(ratio(value))
            ratio_rows.append(cells)
        ratio_rows.append(
            ["**median**"] + [f"**{ratio(statistics.median(v))}**" for v in per_key.values()]
        )
        ratio_rows.append(
            [f"median, <= {RG_HEAD_LINES} hits only"]
            + [ratio(statistics.median(v)) if v else "-" for v in full.values()]
        )
        for k, values in per_key.items():
            medians[f"{k} vs {baseline}"] = statistics.median(values)
            if full[k]:
                medians[f"{k} vs {baseline}, full scans"] = statistics.median(full[k])
        print(f"\n#### {title}\n")
        print(table(["query", *header[5:]], ratio_rows))
    print("\nTarget: median ratio <= 1.5x against `rg -n` (the issue's comparison):")
    for k in keys:
        print(
            f"- {k}: {verdict(medians[f'{k} vs rg'], SEARCH_TARGET)}; "
            f"queries with <= {RG_HEAD_LINES} hits only: "
            f"{ratio(medians.get(f'{k} vs rg, full scans', float('nan')))}; "
            f"against rg | head -{RG_HEAD_LINES}: {ratio(medians[f'{k} vs rg100'])}"
        )
    return medians


# --- the listing benchmark ---------------------------------------------------------------


@dataclass(frozen=True)
class ListQuery:
    label: str
    tool: str
    args: dict[str, str]


LIST_QUERIES = (
    ListQuery("list_files **/*.py", "list_files", {"pattern": "**/*.py"}),
    ListQuery("list_files src/**/test_*.py", "list_files", {"pattern": "src/**/test_*.py"}),
    ListQuery("list_files **/deep/**", "list_files", {"pattern": "**/deep/**"}),
    ListQuery("get_file_structure (root)", "get_file_structure", {}),
    ListQuery("get_file_structure src", "get_file_structure", {"path": "src"}),
)

LIST_MODES: dict[str, Callable[[Path], Workspace]] = {
    "revision": lambda root: open_workspace(root, revision="HEAD"),
    "worktree": lambda root: open_workspace(root, revision=None, uncommitted=True),
}


# The one git command that lists what a working-tree workspace shows (tracked + untracked,
# not ignored); a second, fairer baseline for the worktree mode.
LS_FILES_CO = ["git", "ls-files", "-c", "-o", "--exclude-standard"]


def entries_of(text: str) -> str:
    found = re.search(r"Showing \d+ of ([\d,]+) entries", text)
    if found:
        return found.group(1)
    found = re.search(r"Showing \d+ lines; ([\d,]+) more", text)
    if found:
        return f"{len(text.splitlines()) - 2} lines, {found.group(1)} more"
    return str(len(text.splitlines()))


@dataclass
class ListRow:
    query: ListQuery
    entries: str = ""
    times: dict[str, float] = field(default_factory=dict)


def bench_list(root: Path, runs: int, warmup: int) -> list[ListRow]:
    warm = {mode: opener(root) for mode, opener in LIST_MODES.items()}
    rows = []
    for query in LIST_QUERIES:
        row = ListRow(query)
        cases: dict[str, Prepare] = {
            "ls-files": same(lambda: read_all(["git", "ls-files"], root)),
            "ls-files -co": same(lambda: read_all(LS_FILES_CO, root)),
        }
        for mode, opener in LIST_MODES.items():
            result = run_tool(query.tool, query.args, warm[mode])
            if result.is_error:
                sys.exit(f"{query.tool} {query.args} failed in {mode} mode: {result.text}")
            row.entries = entries_of(result.text)
            cases[f"{mode} warm"] = same(
                lambda ws=warm[mode], q=query: run_tool(q.tool, q.args, ws)
            )

            def cold(opener: Callable[[Path], Workspace] = opener, q: ListQuery = query) -> Timed:
                workspace = opener(root)  # untimed; the timed call loads the listing
                return lambda: run_tool(q.tool, q.args, workspace)

            cases[f"{mode} cold"] = cold
        row.times = measure(cases, runs, warmup)
        rows.append(row)
        print(f"  {query.label}: done", file=sys.stderr, flush=True)
    return rows


def report_list(rows: list[ListRow], files: int) -> dict[str, float]:
    keys = [f"{m} {t}" for m in LIST_MODES for t in ("warm", "cold")]
    header = ["query", "matches", "git ls-files", "git ls-files -co", *keys]
    body = [
        [r.query.label, r.entries, ms(r.times["ls-files"]), ms(r.times["ls-files -co"])]
        + [ms(r.times[k]) for k in keys]
        for r in rows
    ]
    print(f"\n#### listing tools on {files:,} files: median time per call (ms)\n")
    print(
        "`git ls-files -co` is `git ls-files -c -o --exclude-standard`: tracked plus untracked "
        "files, what the worktree mode lists.\n"
    )
    print(table(header, body))
    fair = "worktree cold / ls-files -co"
    ratio_rows = []
    per_key: dict[str, list[float]] = {k: [] for k in [*keys, fair]}
    for r in rows:
        cells = [r.query.label]
        for k in keys:
            value = r.times[k] / r.times["ls-files"]
            per_key[k].append(value)
            cells.append(ratio(value))
        value = r.times["worktree cold"] / r.times["ls-files -co"]
        per_key[fair].append(value)
        cells.append(ratio(value))
        ratio_rows.append(cells)
    ratio_rows.append(
        ["**median**"] + [f"**{ratio(statistics.median(v))}**" for v in per_key.values()]
    )
    ratio_rows.append(["**worst**"] + [f"**{ratio(max(v))}**" for v in per_key.values()])
    print("\n#### tool time / `git ls-files` time (last column: / `git ls-files -co`)\n")
    print(table(["query", *keys, fair], ratio_rows))
    print("\nTarget: at most 2x `git ls-files` (checked on the worst query):")
    summary: dict[str, float] = {}
    for k, values in per_key.items():
        summary[f"{k} worst"] = max(values)
        summary[f"{k} median"] = statistics.median(values)
        middle = ratio(statistics.median(values))
        label = k if k != fair else f"{fair} (for reference)"
        print(f"- {label}: worst {verdict(max(values), LIST_TARGET)}, median {middle}")
    return summary


# --- profiling (--profile) ---------------------------------------------------------------


def timed_median(call: Timed, runs: int) -> float:
    return measure({"x": same(call)}, runs, 1)["x"]


def _glob_matcher() -> Callable[[str], re.Pattern[str]]:
    """The tools' glob compiler, wherever this version of reviewer keeps it."""
    for module in ("reviewer.workspace.globs", "reviewer.workspace.paths"):
        try:
            found = getattr(importlib.import_module(module), "glob_matcher", None)
        except ImportError:
            continue
        if found is not None:
            return found  # type: ignore[no-any-return]
    raise SystemExit("--profile: cannot find reviewer's glob_matcher")


def profile_listing(root: Path, runs: int) -> None:
    """Where a cold listing call spends its time: git, parsing, sorting, matching, rendering.

    Uses the workspaces' `_load_listing` (private) to split the listing from the tool call;
    the git commands below are the ones the workspaces run today. All phases of a mode are
    timed in the same rounds; "parse" and "rest" are differences of two medians.
    """
    print("\n#### profile: a cold `list_files **/*.py` split into phases (median ms)\n")
    matcher = _glob_matcher()("**/*.py")
    args = {"pattern": "**/*.py"}
    rows = []
    git_commands = {
        "revision": [["ls-tree", "-r", "-z", "--full-tree", "HEAD"]],
        "worktree": [
            ["ls-files", "-z", "-s"],
            ["ls-files", "-z", "-d"],
            ["ls-files", "-z", "-o", "--exclude-standard"],
        ],
    }
    for mode, opener in LIST_MODES.items():
        workspace = opener(root)
        kinds = workspace._load_listing().kinds
        paths = workspace.listing.paths
        cases: dict[str, Prepare] = {
            "baseline": same(lambda: read_all(["git", "ls-files"], root)),
            "open": same(lambda opener=opener: opener(root)),
        }
        for command in git_commands[mode]:
            cases[" ".join(command)] = same(lambda c=command: run_git(root, c))
        cases["load"] = same(workspace._load_listing)
        cases["sort"] = same(lambda k=kinds: Listing(k).paths)
        cases["match"] = same(lambda p=paths: [x for x in p if matcher.fullmatch(x)])
        cases["warm"] = same(lambda ws=workspace: run_tool("list_files", args, ws))

        def cold(opener: Callable[[Path], Workspace] = opener) -> Timed:
            fresh = opener(root)
            return lambda: run_tool("list_files", args, fresh)

        cases["cold"] = cold
        t = measure(cases, runs, 1)
        git_total = sum(t[" ".join(c)] for c in git_commands[mode])
        phases = [("open_workspace (rev-parse)", t["open"])]
        phases += [
            (f"git {' '.join(a for a in c if a != '-z')}", t[" ".join(c)])
            for c in git_commands[mode]
        ]
        phases += [
            ("parse git output into Listing.kinds", t["load"] - git_total),
            ("Listing.paths (sort)", t["sort"]),
            ("glob match over all paths", t["match"]),
            ("rest of the warm call (validation, render)", t["warm"] - t["match"]),
            ("whole cold call (for reference)", t["cold"]),
            ("`git ls-files` (the baseline)", t["baseline"]),
        ]
        rows += [[mode, name, ms(max(seconds, 0.0))] for name, seconds in phases]
    print(table(["mode", "phase", "ms"], rows))


def print_cprofile(title: str, call: Timed, limit: int = 12) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    call()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(limit)
    text = out.getvalue()
    start = text.find("   ncalls")
    print(
        f"\n#### cProfile: {title} (top {limit} by own time)\n\n```\n{text[start:].rstrip()}\n```"
    )


def export_commit(root: Path, commit: str, dest: Path) -> None:
    """`git archive COMMIT | tar -x -C DEST`: one way to put a commit on disk for rg."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "archive", commit], cwd=root, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    assert archive.stdout is not None
    archive.stdout.close()
    archive.wait()


def profile_search(root: Path, runs: int) -> None:
    rg = ripgrep_binary()
    assert rg is not None
    print("\n#### profile: the fixed cost of a cold search_text (median ms)\n")
    rows = []
    for key, (_what, opener) in ENGINE_PATHS.items():
        rows.append([key, "open_workspace", ms(timed_median(lambda o=opener: o(root), runs))])

        def listing(opener: Callable[[Path], Workspace] = opener) -> Timed:
            fresh = opener(root)
            return lambda: fresh.listing

        rows.append(
            [key, "workspace.listing (git ls-*)", ms(measure({"x": listing}, runs, 1)["x"])]
        )
        if key != "worktree":

            def checkout(opener: Callable[[Path], Workspace] = opener) -> Timed:
                fresh = opener(root)
                assert isinstance(fresh, RevisionWorkspace)
                return lambda: fresh.matches_checkout

            seconds = measure({"x": checkout}, runs, 1)["x"]
            rows.append([key, "matches_checkout (rev-parse, diff-index)", ms(seconds)])
    print(table(["engine path", "step", "ms"], rows))

    print("\n#### profile: search_text on a commit that is not checked out (median ms)\n")
    workspace = ENGINE_PATHS["objects"][1](root)
    assert isinstance(workspace, RevisionWorkspace)
    commit = workspace.commit
    workspace.listing  # noqa: B018  (warm it)
    rows = []
    with tempfile.TemporaryDirectory(prefix="reviewer-bench-export-") as tmp:
        exported = Path(tmp) / "tree"
        export = timed_median(lambda: export_commit(root, commit, exported), runs)
        diff = timed_median(
            lambda: read_all(["git", "diff", "--name-only", commit, "HEAD"], root), runs
        )
        for query in SEARCH_QUERIES:
            if query.label not in ("rare literal", "regex: classes + alternation"):
                continue
            grep = ["git", "grep", "-z", "-n", "-I", "-P", "-e", query.args["pattern"], commit]
            cells = [
                timed_median(lambda a=query.args: run_tool("search_text", a, workspace), runs),
                timed_median(lambda g=grep: read_all(g, root), runs),
                timed_median(
                    lambda g=grep: read_all(["git", "-c", "grep.threads=1", *g[1:]], root), runs
                ),
                timed_median(lambda q=query: read_all([rg, *q.rg], root), runs),
                timed_median(lambda q=query: read_all([rg, *q.rg], exported), runs),
            ]
            rows.append([query.label, *(ms(c) for c in cells)])
    header = [
        "query",
        "search_text (objects, warm)",
        "git grep -P alone",
        "same, grep.threads=1",
        "rg -n, checkout",
        "rg -n, exported copy",
    ]
    print(table(header, rows))
    print(
        f"\nOne-time costs: exporting the commit (`git archive | tar -x`) {ms(export)} ms; "
        f"`git diff --name-only {commit[:8]} HEAD` (what differs from the checkout) {ms(diff)} ms."
    )


def run_profiles(large: Path | None, wide: Path | None, runs: int) -> None:
    if wide is not None:
        profile_listing(wide, runs)
        for mode, opener in LIST_MODES.items():
            ws = opener(wide)
            ws.listing  # noqa: B018
            print_cprofile(
                f"warm get_file_structure (root), {mode}",
                lambda ws=ws: run_tool("get_file_structure", {}, ws),
            )
            print_cprofile(
                f"cold list_files **/*.py, {mode}",
                lambda o=opener: run_tool("list_files", {"pattern": "**/*.py"}, o(wide)),
            )
    if large is not None:
        profile_search(large, runs)


# --- the run -----------------------------------------------------------------------------


def version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    except OSError:
        return "?"
    return out.splitlines()[0].strip() if out else "?"


def describe_code() -> str:
    """Which reviewer is measured: its folder, and its commit and state when in a git repo."""
    package = Path(reviewer.__file__).resolve().parent
    proc = subprocess.run(
        ["git", "log", "-1", "--format=%h %s"], cwd=package, capture_output=True, text=True
    )
    tracked = subprocess.run(
        ["git", "ls-files", "--", "__init__.py"], cwd=package, capture_output=True, text=True
    ).stdout
    if proc.returncode != 0 or not tracked.strip():
        return f"{package} (not tracked by git: an exported copy?)"
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", "."], cwd=package, capture_output=True, text=True
    ).stdout
    state = "with uncommitted changes" if status.strip() else "clean"
    return f"{package}, commit {proc.stdout.strip()[:60]}, {state}"


def describe_machine() -> str:
    rg = ripgrep_binary() or "rg"
    return (
        f"nproc {os.cpu_count()}, {platform.machine()}, Linux {platform.release()}, "
        f"Python {platform.python_version()}, {version(['git', '--version'])}, "
        f"{version([rg, '--version'])}"
    )


def describe_large(root: Path) -> str:
    listed = run_git(root, ["ls-files", "-z"]).stdout.split(b"\0")
    files = [p for p in listed if p]
    size = sum((root / p.decode()).stat().st_size for p in files)
    objects = run_git(root, ["count-objects", "-v"]).stdout.decode()
    packed = "in-pack: 0" not in objects
    storage = "objects packed (git gc)" if packed else "loose objects (no git gc)"
    return f"{len(files):,} files, {size / 1e6:.1f} MB, 2 commits, {storage}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "Generated repositories go to a temporary directory that is deleted at the end, "
            "unless --work-dir is given (then they are kept there and reused by later runs "
            "with the same generation options) or --keep."
        ),
    )
    parser.add_argument("--only", choices=("search", "list"), help="run one benchmark only")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per case (median); 7")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs first; 1")
    parser.add_argument(
        "--work-dir",
        type=Path,
        help="where to generate (and reuse) the repositories, e.g. bench/.work",
    )
    parser.add_argument("--keep", action="store_true", help="do not delete the temp work dir")
    parser.add_argument("--seed", type=int, default=1, help="generation seed; 1")
    parser.add_argument(
        "--large-files", type=int, default=2400, help="files in the search repository; 2400"
    )
    parser.add_argument(
        "--large-mb", type=float, default=30.0, help="approximate MB of text to aim for; 30"
    )
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="leave the search repository's objects loose (default: git gc, as a clone is)",
    )
    parser.add_argument(
        "--tree-files", type=int, default=100_000, help="files in the listing tree; 100000"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also split the slow paths into phases and print cProfile summaries",
    )
    parser.add_argument("--json", type=Path, help="also write the medians to this JSON file")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be >= 1 and --warmup >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.work_dir is not None:
        work = args.work_dir.resolve()
        work.mkdir(parents=True, exist_ok=True)
        temporary = False
    else:
        work = Path(tempfile.mkdtemp(prefix="reviewer-bench-")).resolve()
        temporary = not args.keep
    results: dict[str, object] = {"machine": describe_machine()}
    try:
        print("### reviewer tool benchmarks\n")
        print(f"- machine: {results['machine']}")
        results["code"] = describe_code()
        print(f"- reviewer measured: {results['code']}")
        print(f"- runs: median of {args.runs} after {args.warmup} warm-up run(s); work dir {work}")
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"- load average at the start: {load}")
        large = wide = None
        if args.only in (None, "search"):
            print("- generating the search repository...", file=sys.stderr, flush=True)
            spec = repogen.LargeSpec(args.seed, args.large_files, args.large_mb, not args.no_gc)
            large = repogen.make_large_repo(work / "large", spec)
            results["search_repo"] = describe_large(large)
            print(f"- search repository: {results['search_repo']}")
        if args.only in (None, "list"):
            print("- generating the listing tree...", file=sys.stderr, flush=True)
            wide = repogen.make_wide_tree(
                work / "wide", repogen.WideSpec(args.seed, args.tree_files)
            )
            print(f"- listing tree: {args.tree_files:,} small files, checked out on disk")
        # Flush the freshly written files now, so disk writeback does not run during timing.
        os.sync()
        if large is not None:
            rows = bench_search(large, args.runs, args.warmup)
            open_times = {
                key: timed_median(lambda o=opener: o(large), args.runs)
                for key, (_label, opener) in ENGINE_PATHS.items()
            }
            results["search"] = report_search(rows, open_times)
            results["search_times"] = {r.query.label: r.times for r in rows}
        if wide is not None:
            list_rows = bench_list(wide, args.runs, args.warmup)
            results["list"] = report_list(list_rows, args.tree_files)
            results["list_times"] = {r.query.label: r.times for r in list_rows}
        if args.profile:
            run_profiles(large, wide, args.runs)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"\n(load average at the end: {load}; above ~{os.cpu_count()} means contention)")
        if args.json is not None:
            args.json.write_text(json.dumps(results, indent=2))
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
        elif args.work_dir is None:
            print(f"\n(kept the generated repositories in {work})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
