"""Where a run of `reviewer eval` (or a merge of shards) writes its results: the folder
checked before any case is paid for, then results.json and report.md and the totals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.errors import ExitCode, ReviewerError
from reviewer.eval.markdown import render_report
from reviewer.eval.results import write_json
from reviewer.report import check_writable
from reviewer.safety.sinks import log
from reviewer.wording import plural


def checked_out(
    out: Path, option: str = "--out", what: str = "results", file: str = "results.json"
) -> Path:
    """`out`, a folder that `file` (what is written there) can be written in: checked before
    any case is run (and paid), or the results would be lost."""
    if out.exists() and not out.is_dir():
        raise ReviewerError(f"{option} '{out}' is a file; give a folder for {file}")
    check_writable(out / file, what)
    return out


def finish(results: dict[str, Any], out: Path, *, allow_errors: bool) -> int:
    """Write results.json and report.md, say the totals, and the exit code: 2 when a case
    could not be scored (unless allowed)."""
    write_json(out / "results.json", results)
    (out / "report.md").write_text(render_report(results), encoding="utf-8")
    primary = results["metrics"][results["primary"]]
    log(
        f"eval: {results['cases_scored']} of {plural(results['cases_total'], 'case')} scored; "
        f"precision {_num(primary['precision'])}, recall {_num(primary['recall'])}, "
        f"F1 {_num(primary['f1'])} ({results['primary']} judge); wrote {out / 'results.json'} "
        f"and {out / 'report.md'}"
    )
    if results["cases_errored"]:
        listed = ", ".join(e["case"] for e in results["errors"][:10])
        more = "" if results["cases_errored"] <= 10 else ", ..."
        errored = plural(results["cases_errored"], "case")
        log(f"error: {errored} could not be scored: {listed}{more}")
        if not allow_errors:
            return int(ExitCode.INCOMPLETE)
    return int(ExitCode.OK)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
