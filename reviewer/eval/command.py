"""`reviewer eval`: load the datasets, run and judge every case, write results.json and
report.md, and say whether every case was scored (exit 2 if not, unless --allow-errors)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.eval.cache import Cache
from reviewer.eval.cases import Dataset, EvalCase
from reviewer.eval.formats import load_dataset
from reviewer.eval.judge import JudgeSettings, LLMJudge
from reviewer.eval.output import checked_out, finish
from reviewer.eval.results import build_results
from reviewer.eval.runner import RunOptions, run_cases, setup_identity
from reviewer.eval.shards import parse_shard
from reviewer.safety.sinks import log
from reviewer.settings.layers import Layer, environment_layer, resolve_settings
from reviewer.wording import plural


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reviewer" / "eval"


def eval_command(args: argparse.Namespace) -> int:
    if args.merge:
        from reviewer.eval.merge import merge_command

        if args.datasets or args.from_history or args.shard:
            raise ReviewerError("--merge joins results folders; give no dataset or --shard with it")
        return merge_command(args)
    shard = parse_shard(args.shard) if args.shard else None
    if not args.datasets and not args.from_history:
        raise ReviewerError("give a dataset (file or folder), or --from-history REPO --since DATE")
    if args.from_history and not args.since:
        raise ReviewerError("--from-history needs --since DATE (e.g. --since 2024-01-01)")
    started = time.monotonic()
    say = (lambda _text: None) if args.quiet else log
    # Absolute once, here: git runs in folders inside it, where a relative path means another.
    cache_dir = (args.cache or default_cache()).resolve()
    out = checked_out(args.out)
    if args.transcripts is not None:
        checked_out(args.transcripts, "--transcripts", "transcripts", "CASE-HASH.jsonl")
    flags = {"model": args.model}
    judge = _judge(args, flags) if args.judge == "llm" else None
    datasets = _datasets(args, cache_dir, say)
    cases = _pick(datasets, args.only, args.limit)
    picked = len(cases)
    if shard:
        cases = shard.take(cases)
        say(f"eval: shard {shard.index}/{shard.count}: {len(cases)} of {plural(picked, 'case')}")
    say(f"eval: {plural(len(cases), 'case')}, {args.jobs} at a time; cache {cache_dir}")
    runs = run_cases(
        cases,
        RunOptions(
            flags=flags,
            config_path=args.config,
            judge_kind=args.judge,
            judge=judge,
            cache=Cache(cache_dir),
            jobs=args.jobs,
            transcripts=args.transcripts,
        ),
        say,
    )
    results = build_results(
        runs,
        datasets,
        judge_kind=args.judge,
        judge=judge,
        flags=flags,
        seconds=time.monotonic() - started,
        setup=setup_identity(flags, args.config, dict(os.environ)),
        shard=shard.record(picked) if shard else None,
    )
    return finish(results, out, allow_errors=args.allow_errors)


def _judge(args: argparse.Namespace, flags: dict[str, str | None]) -> LLMJudge:
    """The judge's endpoint: its own settings where given, else the reviewer's (flags and
    environment; a repository's settings file does not choose the judge)."""
    reviewer = resolve_settings(
        [
            Layer("the command line", {k: v for k, v in flags.items() if v is not None}),
            environment_layer(os.environ),
        ]
    )
    key = os.environ.get("REVIEWER_JUDGE_API_KEY") or (
        reviewer.api_key.get_secret_value() if reviewer.api_key else None
    )
    model = args.judge_model or os.environ.get("REVIEWER_JUDGE_MODEL") or reviewer.model or ""
    return LLMJudge(
        JudgeSettings(
            model=model,
            base_url=os.environ.get("REVIEWER_JUDGE_BASE_URL") or reviewer.base_url,
            api_key=key,
        )
    )


def _datasets(args: argparse.Namespace, cache_dir: Path, say: object) -> list[tuple[Dataset, str]]:
    from reviewer.eval.formats import detect_format

    token = os.environ.get("GITHUB_TOKEN") or None
    # Every path and its format before anything is built or fetched for the first one.
    rows = [(path, detect_format(path, args.dataset_format)) for path in args.datasets]
    loaded = []
    for path, row in rows:
        dataset = load_dataset(path, cache_dir=cache_dir, token=token, log=say, wanted=row.name)
        loaded.append((dataset, row.name))
    if args.from_history:
        from reviewer.eval.history import DEFAULT_FIX_PATTERN, history_dataset

        dataset = history_dataset(
            args.from_history,
            since=args.since,
            pattern=args.fix_pattern or DEFAULT_FIX_PATTERN,
            cache_dir=cache_dir,
            log=say,
        )
        loaded.append((dataset, "history"))
    return loaded


def _pick(
    datasets: list[tuple[Dataset, str]], only: list[str] | None, limit: int | None
) -> list[tuple[str, EvalCase]]:
    cases = [(dataset.name, case) for dataset, _ in datasets for case in dataset.cases]
    if only:
        wanted = {name.strip() for item in only for name in item.split(",") if name.strip()}
        unknown = wanted - {case.id for _, case in cases}
        if unknown:
            raise ReviewerError(
                f"--only: no case named {', '.join(sorted(unknown))}; see the case ids in "
                "the dataset (or a results.json)"
            )
        cases = [(name, case) for name, case in cases if case.id in wanted]
    if limit is not None:
        cases = cases[:limit]
    if not cases:
        raise ReviewerError("no case to run: the datasets are empty or --limit is 0")
    return cases


def compare_text(first: Path, second: Path) -> str:
    """`--compare A B`: the two results side by side (terminal-safe text)."""
    from reviewer.eval.compare import compare, load_results
    from reviewer.safety.sinks import clean_text

    return clean_text(compare(load_results(first), load_results(second), (str(first), str(second))))
