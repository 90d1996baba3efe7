"""results.json: every case with its findings, verdicts and scores, the totals, and what
produced them (reviewer and judge models, settings and prompt hashes, dataset versions)."""

from __future__ import annotations

import datetime
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reviewer import __version__
from reviewer.eval.cases import Dataset
from reviewer.eval.judge import JUDGE_PROMPT_VERSION, LLMJudge
from reviewer.eval.metrics import (
    NOT_VERIFIED,
    UNGRADED,
    CaseScore,
    Pair,
    case_metrics,
    confidence_band,
    summarize,
)
from reviewer.eval.outcomes import case_outcomes, total_outcomes
from reviewer.eval.runner import CaseRun

RESULTS_FORMAT = "reviewer-eval-results"
RESULTS_VERSION = 1


def build_results(
    runs: list[CaseRun],
    datasets: list[tuple[Dataset, str]],
    *,
    judge_kind: str,
    judge: LLMJudge | None,
    flags: dict[str, Any],
    seconds: float,
    setup: str = "",
    shard: dict[str, int] | None = None,
) -> dict[str, Any]:
    kinds = ["llm", "location"] if judge_kind == "llm" else ["location"]
    reviews = [run.review for run in runs if run.review is not None]
    models = sorted({str(r["model"]) for r in reviews})
    return assemble(
        {
            "datasets": [
                {"name": d.name, "version": d.version, "format": fmt, "cases": len(d.cases)}
                for d, fmt in datasets
            ],
            "reviewer": {
                "model": models[0] if len(models) == 1 else models,
                "flags": {k: v for k, v in flags.items() if v is not None},
                "settings_hashes": sorted({r["settings_hash"] for r in reviews}),
                "prompt_hashes": sorted(
                    {json.dumps(r["prompt_hashes"], sort_keys=True) for r in reviews}
                ),
                "setup": setup,
                # What the reviews were told the changes are for ("auto", "off"; a review
                # from before tickets has none).
                "tickets": sorted({str(r.get("tickets", "auto")) for r in reviews}),
                "learnings": sorted({str(r.get("learnings", "auto")) for r in reviews}),
            },
            "judge": {
                "kind": judge_kind,
                "model": judge.settings.model if judge else None,
                "base_url": judge.settings.base_url if judge else None,
                "prompt_version": JUDGE_PROMPT_VERSION if judge else None,
            },
            "primary": kinds[0],
            "usage": _usage(runs, seconds),
            "shard": shard,
        },
        [_case(run, kinds) for run in runs],
    )


def assemble(produced_by: dict[str, Any], cases: list[dict[str, Any]]) -> dict[str, Any]:
    """results.json from what produced it and its case entries: every count and metric is
    computed here from the cases, so a merge of shards scores exactly as one run would."""
    kinds = [produced_by["primary"], *(["location"] if produced_by["primary"] == "llm" else [])]
    scored = [case for case in cases if case["status"] == "scored"]
    return {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "reviewer_version": __version__,
        "datasets": produced_by["datasets"],
        "reviewer": produced_by["reviewer"],
        "judge": produced_by["judge"],
        "shard": produced_by["shard"],
        "cases_total": len(cases),
        "cases_scored": len(scored),
        "cases_errored": len(cases) - len(scored),
        "errors": [
            {"case": case["id"], "dataset": case["dataset"], **case["error"]}
            for case in cases
            if case["error"] is not None
        ],
        "primary": kinds[0],
        "metrics": {
            kind: {
                **summarize([case_score(case, kind) for case in scored]),
                # What became of the scored cases' findings (the same under every judge).
                "verification": total_outcomes(_outcomes(case) for case in scored),
            }
            for kind in kinds
        },
        "expected_with_location": sum(1 for c in cases for issue in c["expected"] if issue["path"]),
        "expected_total": sum(len(case["expected"]) for case in cases),
        "usage": produced_by["usage"],
        "cases": cases,
    }


def case_score(case: dict[str, Any], kind: str) -> CaseScore:
    """A scored case entry of results.json under one judge."""
    findings = case["review"]["findings"]
    return CaseScore(
        repository=case["repository"],
        issue_severities=tuple(issue["severity"] or UNGRADED for issue in case["expected"]),
        finding_severities=tuple(f["severity"] for f in findings),
        matches=tuple(
            Pair(m["issue"], m["finding"], m["confidence"]) for m in case["matches"].get(kind, [])
        ),
        finding_bands=tuple(confidence_band(f.get("confidence")) for f in findings),
        finding_verdicts=tuple(f.get("verdict") or NOT_VERIFIED for f in findings),
    )


def _outcomes(case: dict[str, Any]) -> dict[str, Any] | None:
    # A results.json from before the counts existed: counted from its review record.
    return case.get("verification") or case_outcomes(case.get("review"))


def _usage(runs: list[CaseRun], seconds: float) -> dict[str, Any]:
    reviews = [run.review for run in runs if run.review is not None]
    costs = [r.get("cost") for r in reviews]
    verified = [r["verification"] for r in reviews if r.get("verification")]
    v_costs = [v["cost"] for v in verified]
    return {
        "review_prompt_tokens": sum(r["usage"]["prompt_tokens"] for r in reviews),
        "review_completion_tokens": sum(r["usage"]["completion_tokens"] for r in reviews),
        "review_seconds": round(sum(r["duration_seconds"] for r in reviews), 3),
        "tickets_shown": sum(r.get("tickets_shown", 0) for r in reviews),
        "learnings_shown": sum(r.get("learnings_shown", 0) for r in reviews),
        # Unknown (None) unless every review had a price.
        "review_cost": round(sum(costs), 6) if costs and None not in costs else None,
        "judge_prompt_tokens": sum(run.judge_usage.prompt_tokens for run in runs),
        "judge_completion_tokens": sum(run.judge_usage.completion_tokens for run in runs),
        "judge_requests": sum(run.judge_usage.requests for run in runs),
        "judge_seconds": round(sum(run.judge_seconds for run in runs), 3),
        # The stage after the review (the verification), run apart from cached reviews.
        "verification_prompt_tokens": sum(v["usage"]["prompt_tokens"] for v in verified),
        "verification_completion_tokens": sum(v["usage"]["completion_tokens"] for v in verified),
        "verification_cost": round(sum(v_costs), 6) if None not in v_costs else None,
        "verifications_from_cache": sum(v["from_cache"] for v in verified),
        "reviews_from_cache": sum(run.review_cached for run in runs),
        "verdicts_from_cache": sum(run.verdicts_cached for run in runs),
        "wall_seconds": round(seconds, 3),
    }


def _case(run: CaseRun, kinds: list[str]) -> dict[str, Any]:
    review = run.review
    entry: dict[str, Any] = {
        "id": run.case.id,
        "dataset": run.dataset,
        "repository": run.case.repository,
        "status": "scored" if run.scored else "error",
        "error": run.error,
        "expected": [
            {**asdict(issue), "lines": list(issue.lines) if issue.lines else None}
            for issue in run.case.expected
        ],
        "review": review,
        "verdicts": run.verdicts,
        # Posted, merged, discarded by reason and unverified findings (eval/outcomes.py).
        "verification": case_outcomes(review),
    }
    if run.scored:
        entry["matches"] = {
            kind: [
                {"issue": p.issue, "finding": p.finding, "confidence": p.confidence}
                for p in run.matches.get(kind, [])
            ]
            for kind in kinds
        }
        entry["metrics"] = {kind: case_metrics(case_score(entry, kind)) for kind in kinds}
        entry["findings"] = len(review["findings"]) if review else 0
    return entry


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            # Strict JSON: a NaN or an infinity is a defect here, not a file others misread.
            json.dump(data, out, indent=1, ensure_ascii=False, allow_nan=False)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
