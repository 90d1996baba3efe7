"""`reviewer eval --compare A B`: two results side by side, per metric and per case, so a
prompt or model change reads as a diff of scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.errors import ReviewerError
from reviewer.eval.results import RESULTS_FORMAT
from reviewer.eval.results_shape import check_results, read_strict_json
from reviewer.safety.sinks import one_line

_METRICS = ("precision", "recall", "f1", "tp", "fp", "fn", "findings_per_case")
_OUTCOMES = ("posted", "discarded", "unverified", "merged")


def load_results(path: Path, flag: str = "--compare") -> dict[str, Any]:
    """A results.json read back: strict JSON, its format tag, then its shape (results_shape)."""
    data = read_strict_json(path, flag)
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise ReviewerError(f"{flag}: '{path}' is not a results.json of `reviewer eval`")
    check_results(data, path, flag)
    return data


def compare(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str]) -> str:
    kind = a["primary"] if a["primary"] == b["primary"] else "location"
    lines = [
        f"A: {names[0]}: {_produced_by(a)}",
        f"B: {names[1]}: {_produced_by(b)}",
        "",
        f"{'metric (' + kind + ')':<22}{'A':>10}{'B':>10}{'B-A':>10}",
    ]
    ma, mb = a["metrics"].get(kind, {}), b["metrics"].get(kind, {})
    rows: list[tuple[str, Any, Any]] = [(m, ma.get(m), mb.get(m)) for m in _METRICS]
    rows += [
        ("cases scored", a["cases_scored"], b["cases_scored"]),
        ("cases errored", a["cases_errored"], b["cases_errored"]),
        ("review tokens", _tokens(a), _tokens(b)),
        ("tickets shown", a["usage"].get("tickets_shown"), b["usage"].get("tickets_shown")),
        ("learnings shown", a["usage"].get("learnings_shown"), b["usage"].get("learnings_shown")),
        ("verification tokens", _tokens(a, "verification"), _tokens(b, "verification")),
        ("review seconds", a["usage"]["review_seconds"], b["usage"]["review_seconds"]),
    ]
    # What the verification did (a results.json from before the counts has none: "-").
    va, vb = ma.get("verification") or {}, mb.get("verification") or {}
    rows += [(f"findings {name}", va.get(name), vb.get(name)) for name in _OUTCOMES]
    for name, x, y in rows:
        lines.append(f"{name:<22}{_num(x):>10}{_num(y):>10}{_delta(x, y):>10}")
    lines += ["", "per case:"]
    cases_a = {(c["dataset"], c["id"]): c for c in a["cases"]}
    cases_b = {(c["dataset"], c["id"]): c for c in b["cases"]}
    for key in sorted(cases_a.keys() | cases_b.keys()):
        lines += _case_lines(key[1], cases_a.get(key), cases_b.get(key), kind)
    return "\n".join(lines) + "\n"


def _produced_by(results: dict[str, Any]) -> str:
    datasets = ", ".join(f"{d['name']} {d['version']}" for d in results["datasets"])
    judge = results["judge"]
    judged = judge["model"] if judge["kind"] == "llm" else "location"
    tickets = ", ".join(results["reviewer"].get("tickets") or ["auto"])
    learnings = ", ".join(results["reviewer"].get("learnings") or ["auto"])
    return (
        f"reviewer model {results['reviewer']['model']}, tickets {tickets}, learnings "
        f"{learnings}, judge {judged}, dataset {datasets}"
    )


def _tokens(results: dict[str, Any], stage: str = "review") -> int:
    usage = results["usage"]  # a results.json from before the verification stage has none
    return int(usage.get(f"{stage}_prompt_tokens", 0) + usage.get(f"{stage}_completion_tokens", 0))


def _num(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _delta(x: Any, y: Any) -> str:
    if not isinstance(x, int | float) or not isinstance(y, int | float):
        return ""
    difference = y - x
    return f"{difference:+.3f}" if isinstance(difference, float) else f"{difference:+d}"


def _found(case: dict[str, Any] | None, kind: str) -> set[int] | None:
    if case is None or case["status"] != "scored":
        return None
    return {match["issue"] for match in case["matches"].get(kind, [])}


def _case_lines(
    case_id: str, a: dict[str, Any] | None, b: dict[str, Any] | None, kind: str
) -> list[str]:
    name = one_line(case_id)
    found_a, found_b = _found(a, kind), _found(b, kind)
    case = a or b
    assert case is not None
    total = len(case["expected"])

    def state(found: set[int] | None, side: dict[str, Any] | None) -> str:
        if side is None:
            return "absent"
        return f"{len(found)}/{total}" if found is not None else "error"

    head = f"  {name}: A {state(found_a, a)}, B {state(found_b, b)}"
    if found_a is None or found_b is None or found_a == found_b:
        return [head]
    lines = [head]
    for index in sorted(found_a ^ found_b):
        who = "A found, B missed" if index in found_a else "B found, A missed"
        description = one_line(case["expected"][index]["description"])[:100]
        lines.append(f"    {who}: #{index + 1} {description}")
    return lines
