"""`reviewer eval --merge DIR...`: the results of every shard of one run joined into one
results.json and report.md, as if one machine had run every case.

The cases are put back in the run's order and every count and metric is computed again from
them (results.assemble), never averaged from the shards' totals. Shards that do not make one
run are refused with one line: other datasets, settings or judge; another N; a shard given
twice, a case in two shards, a shard missing or not whole.
"""

from __future__ import annotations

import argparse
from itertools import islice
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewerError
from reviewer.eval.compare import load_results
from reviewer.eval.results import assemble
from reviewer.eval.shards import positions
from reviewer.safety.sinks import log
from reviewer.wording import plural

Loaded = tuple[str, dict[str, Any]]
# Missing shards named in the error; the rest counted.
_MISSING_NAMED = 10


def merge_command(args: argparse.Namespace) -> int:
    from reviewer.eval.output import checked_out, finish

    out = checked_out(args.out)
    shards = [_load(path) for path in args.merge]
    results = merge_results(shards)
    log(f"eval: merged {plural(len(shards), 'shard')}, {plural(results['cases_total'], 'case')}")
    return finish(results, out, allow_errors=args.allow_errors)


def _load(path: Path) -> Loaded:
    file = path / "results.json" if path.is_dir() else path
    return str(path), load_results(file, flag="--merge")


def _shard(results: dict[str, Any]) -> tuple[int, int, int]:
    """(K, N, cases of the whole run); a run without --shard is shard 1 of 1."""
    shard = results.get("shard") or {"index": 1, "count": 1, "cases": results["cases_total"]}
    return shard["index"], shard["count"], shard["cases"]


def _settings(results: dict[str, Any]) -> Any:
    reviewer = results["reviewer"]
    return [results["reviewer_version"], reviewer["flags"], reviewer.get("setup")]


def _judge(results: dict[str, Any]) -> Any:
    judge = results["judge"]
    # Where the judge was reached is not what it is: a shard may reach it by another URL.
    return [judge["kind"], judge["model"], judge["prompt_version"]]


def _datasets(results: dict[str, Any]) -> str:
    return ", ".join(f"{d['name']} {d['version']}" for d in results["datasets"]) or "none"


def _check_alike(first: Loaded, other: Loaded) -> None:
    (name_a, a), (name_b, b) = first, other
    if a["datasets"] != b["datasets"]:
        raise ReviewerError(
            f"--merge: '{name_b}' is of other datasets ({_datasets(b)}) than '{name_a}' "
            f"({_datasets(a)}); merge the shards of one run"
        )
    if _settings(a) != _settings(b):
        raise ReviewerError(
            f"--merge: '{name_b}' was run with other settings than '{name_a}' (reviewer "
            f"{b['reviewer_version']}, setup {b['reviewer'].get('setup')} against "
            f"{a['reviewer_version']}, {a['reviewer'].get('setup')}); merge shards run alike"
        )
    if _judge(a) != _judge(b):
        raise ReviewerError(
            f"--merge: '{name_b}' was judged by {_judge(b)}, '{name_a}' by {_judge(a)}; "
            "merge shards judged alike"
        )
    if _shard(a)[1:] != _shard(b)[1:]:
        k, n, total = _shard(b)
        ka, na, total_a = _shard(a)
        raise ReviewerError(
            f"--merge: '{name_b}' is shard {k}/{n} of {plural(total, 'case')}, '{name_a}' "
            f"{ka}/{na} of {total_a}; merge the shards of one --shard K/N run"
        )


def merge_results(shards: list[Loaded]) -> dict[str, Any]:
    first = shards[0]
    for other in shards[1:]:
        _check_alike(first, other)
    _, count, total = _shard(first[1])
    placed: dict[int, dict[str, Any]] = {}
    by_index: dict[int, str] = {}
    seen: dict[tuple[str, str], str] = {}
    for name, results in shards:
        index = _shard(results)[0]
        if index in by_index:
            raise ReviewerError(
                f"--merge: '{by_index[index]}' and '{name}' are both shard {index}/{count}; "
                "give each shard once"
            )
        by_index[index] = name
        places = positions(index, count, total)
        if len(results["cases"]) != len(places):
            raise ReviewerError(
                f"--merge: '{name}' holds {plural(len(results['cases']), 'case')} where shard "
                f"{index}/{count} of {total} has {len(places)}; it is not a whole shard"
            )
        for place, case in zip(places, results["cases"], strict=True):
            key = (case["dataset"], case["id"])
            if key in seen:
                raise ReviewerError(
                    f"--merge: case '{case['id']}' is in both '{seen[key]}' and '{name}'; "
                    "merge the shards of one run"
                )
            seen[key] = name
            placed[place] = case
    if len(by_index) < count:
        # Named from the shards given, never from N: a results.json may say N is 10^12.
        absent = count - len(by_index)
        first = (k for k in range(1, count + 1) if k not in by_index)
        named = [str(k) for k in islice(first, _MISSING_NAMED)]
        listed = ", ".join(named)
        if absent > len(named):
            listed += f" and {absent - len(named):,} more"
        which = f"shard {listed} of {count} is"
        if absent > 1:
            which = f"shards {listed} of {count} are"
        raise ReviewerError(
            f"--merge: {which} missing ({plural(total - len(placed), 'case')}); "
            "give every shard's folder"
        )
    cases = [placed[place] for place in sorted(placed)]
    return assemble(_produced_by([results for _, results in shards]), cases)


def _produced_by(shards: list[dict[str, Any]]) -> dict[str, Any]:
    first = shards[0]
    models = sorted({m for s in shards for m in _listed(s["reviewer"]["model"])})
    reviewer = {
        **first["reviewer"],
        "model": models[0] if len(models) == 1 else models,
        "settings_hashes": sorted({h for s in shards for h in s["reviewer"]["settings_hashes"]}),
        "prompt_hashes": sorted({h for s in shards for h in s["reviewer"]["prompt_hashes"]}),
    }
    return {
        "datasets": first["datasets"],
        "reviewer": reviewer,
        "judge": first["judge"],
        "primary": first["primary"],
        "usage": _usage([s["usage"] for s in shards]),
        "shard": None,
    }


def _listed(model: Any) -> list[str]:
    return [str(m) for m in model] if isinstance(model, list) else [str(model)]


def _usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, tokens, seconds and cost add up; the wall time is the longest shard's (they
    ran side by side); a cost is unknown when one shard's is."""
    merged: dict[str, Any] = {}
    for key in usages[0]:
        values = [usage.get(key) for usage in usages]
        if key == "wall_seconds":
            merged[key] = max(values)
        elif None in values:
            merged[key] = None
        else:
            total = sum(values)
            merged[key] = round(total, 6) if isinstance(total, float) else total
    return merged

