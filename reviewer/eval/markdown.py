"""report.md: the tables of results.json for people (untrusted text escaped)."""

from __future__ import annotations

from typing import Any

from reviewer.report.mdsafe import escape_text
from reviewer.safety.sinks import one_line
from reviewer.wording import plural

_MAX_CELL = 120
# The tables of precision by a mark of each finding: (column, metrics key, what it is).
_BY_MARK = (
    ("confidence", "by_confidence", "the finding's confidence (unknown: none given)"),
    ("verdict", "by_verdict", "the verifier's verdict (none: not verified)"),
)


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    text = one_line(str(value))
    if len(text) > _MAX_CELL:
        text = text[: _MAX_CELL - 1] + "…"
    return escape_text(text)


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return [*lines, ""]


def render_report(results: dict[str, Any]) -> str:
    judge = results["judge"]
    reviewer = results["reviewer"]
    lines = ["# reviewer eval", ""]
    lines += table(
        ["what", "value"],
        [
            ["datasets", ", ".join(f"{d['name']} {d['version']}" for d in results["datasets"])],
            ["reviewer", f"{reviewer['model']} (reviewer {results['reviewer_version']})"],
            ["settings", ", ".join(reviewer["settings_hashes"])],
            ["prompts", "; ".join(reviewer["prompt_hashes"])],
            ["judge", _judge_text(judge)],
            ["cases", f"{results['cases_scored']} scored of {results['cases_total']}"],
        ],
    )
    if results["errors"]:
        lines += [f"## Not scored ({len(results['errors'])})", ""]
        lines += table(
            ["case", "stage", "why"],
            [[e["case"], e["stage"], e["message"]] for e in results["errors"]],
        )
    for kind, metrics in results["metrics"].items():
        title = "LLM judge" if kind == "llm" else "Location (same file, overlapping lines)"
        lines += [f"## {title}", ""]
        lines += table(
            ["precision", "recall", "F1", "TP", "FP", "FN", "findings/case"],
            [
                [
                    metrics["precision"],
                    metrics["recall"],
                    metrics["f1"],
                    metrics["tp"],
                    metrics["fp"],
                    metrics["fn"],
                    metrics["findings_per_case"],
                ]
            ],
        )
        lines += ["Per severity (recall by the expected severity, precision by the bot's):", ""]
        lines += table(
            ["severity", "expected", "found", "recall", "findings", "matched", "precision"],
            [
                [
                    severity,
                    row["expected"],
                    row["found"],
                    row["recall"],
                    row["findings"],
                    row["matched_findings"],
                    row["precision"],
                ]
                for severity, row in metrics["by_severity"].items()
            ],
        )
        lines += [
            "Noise on clean changes (cases that expect no issue): "
            f"{plural(metrics['clean_cases'], 'case')}, "
            f"{plural(metrics['clean_findings'], 'finding')}, "
            f"{cell(metrics['findings_per_clean_case'])} per clean case.",
            "",
        ]
        for label, key, what in _BY_MARK:
            lines += [f"Precision by {what}:", ""]
            lines += table(
                [label, "findings", "matched", "precision"],
                [
                    [name, row["findings"], row["matched_findings"], row["precision"]]
                    for name, row in metrics[key].items()
                ],
            )
        lines += ["Per repository:", ""]
        lines += table(
            ["repository", "cases", "precision", "recall", "F1", "TP", "FP", "FN"],
            [
                [name, r["cases"], r["precision"], r["recall"], r["f1"], r["tp"], r["fp"], r["fn"]]
                for name, r in metrics["by_repository"].items()
            ],
        )
    if (
        "location" in results["metrics"]
        and results["expected_with_location"] < results["expected_total"]
    ):
        lines += [
            f"The location matcher can place {results['expected_with_location']} of "
            f"{results['expected_total']} expected issues; the others count as missed by it.",
            "",
        ]
    lines += ["## Per case", ""]
    primary = results["primary"]
    lines += table(
        ["case", "repository", "expected", "found", "findings", "precision", "recall", "tokens"],
        [_case_row(case, primary) for case in results["cases"]],
    )
    lines += _verification_table(results)
    usage = results["usage"]
    lines += ["## Cost", ""]
    lines += table(
        ["what", "tokens in", "tokens out", "seconds", "cost"],
        [
            [
                "reviews",
                usage["review_prompt_tokens"],
                usage["review_completion_tokens"],
                usage["review_seconds"],
                usage["review_cost"],
            ],
            [
                "verification",
                usage.get("verification_prompt_tokens", 0),
                usage.get("verification_completion_tokens", 0),
                None,
                usage.get("verification_cost"),
            ],
            [
                "judge",
                usage["judge_prompt_tokens"],
                usage["judge_completion_tokens"],
                usage["judge_seconds"],
                None,
            ],
        ],
    )
    lines.append(
        f"Wall time {usage['wall_seconds']:.1f} s; {usage['reviews_from_cache']} reviews and "
        f"{usage['verdicts_from_cache']} verdicts from the cache."
    )
    return "\n".join(lines) + "\n"


def _verification_table(results: dict[str, Any]) -> list[str]:
    """What became of the findings, per scored case and in total: posted, merged,
    discarded (by reason), unverified."""
    total = results["metrics"][results["primary"]].get("verification")
    if total is None:  # a results.json from before the counts
        return []
    reasons = list(total["discarded_by"])
    rows = [
        [case["id"], *_outcome_cells(case["verification"], reasons)]
        for case in results["cases"]
        if case["status"] == "scored" and case.get("verification")
    ]
    rows.append(["total", *_outcome_cells(total, reasons)])
    lines = [
        "## Verification",
        "",
        "Findings posted (scored), merged into another, discarded before posting (by "
        "reason) and posted unverified (the check could not run):",
        "",
    ]
    header = ["case", "posted", "merged", "discarded", *(f"discarded: {r}" for r in reasons)]
    return lines + table([*header, "unverified"], rows)


def _outcome_cells(counts: dict[str, Any], reasons: list[str]) -> list[Any]:
    by_reason = counts["discarded_by"]
    return [
        counts["posted"],
        counts["merged"],
        counts["discarded"],
        *(by_reason.get(r, 0) for r in reasons),
        counts["unverified"],
    ]


def _judge_text(judge: dict[str, Any]) -> str:
    if judge["kind"] == "location":
        return "location only (same file, overlapping lines)"
    where = judge["base_url"] or "the reviewer's endpoint"
    return f"{judge['model']} at {where} (prompt {judge['prompt_version']})"


def _case_row(case: dict[str, Any], primary: str) -> list[Any]:
    review = case.get("review") or {}
    usage = review.get("usage") or {}
    tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    if case["status"] != "scored":
        return [case["id"], case["repository"], len(case["expected"]), "error", None, None,
                None, tokens]  # fmt: skip
    metrics = case["metrics"][primary]
    return [
        case["id"],
        case["repository"],
        len(case["expected"]),
        metrics["tp"],
        case["findings"],
        metrics["precision"],
        metrics["recall"],
        tokens,
    ]
