"""What a run on a change request leaves for the rest of the workflow besides what it posts:
the report files (JSON, SARIF for code scanning, and Code Quality when REVIEWER_CODEQUALITY
names a file), the outputs that say what the review used and cost, and, when the run ends
early for any reason, the forge's not-reviewed summary, outputs (`said_if_not_reviewed`) and
reports (`LeftReports`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from reviewer.errors import ReviewerError, unexpected_error_line
from reviewer.findings import ReviewResult
from reviewer.report import check_writable, write_report
from reviewer.safety.sinks import log

REPORT_NAME = "reviewer-report.json"
# How a boolean setting the CI passes as a variable reads as true (`full-review`, `dry-run`).
TRUE_WORDS = ("true", "1", "yes")


def report_path(env: Mapping[str, str], temp_dir: Path) -> Path:
    """REVIEWER_REPORT, else the CI job's temporary folder (outside the checkout, so the
    report is never mistaken for a file of the repository)."""
    return Path(env.get("REVIEWER_REPORT") or temp_dir / REPORT_NAME)


def sarif_path(report: Path) -> Path:
    """The SARIF file beside the JSON report: same folder, same name, `.sarif`."""
    beside = report.with_suffix(".sarif")
    return beside if beside != report else report.with_name(report.name + ".sarif")


def check_run_files(env: Mapping[str, str], temp_dir: Path) -> None:
    """Before the model is asked: a report that cannot be written would lose a paid review."""
    report = report_path(env, temp_dir)
    check_writable(report, "report")
    check_writable(sarif_path(report), "SARIF log")
    if env.get("REVIEWER_CODEQUALITY"):
        check_writable(Path(env["REVIEWER_CODEQUALITY"]), "Code Quality report")


def write_run_files(
    result: ReviewResult, env: Mapping[str, str], temp_dir: Path
) -> dict[str, str]:
    """The JSON report and the SARIF log of the review, written on every run that reviewed
    (an empty SARIF log too: an upload of it closes the alerts of fixed findings), and the
    outputs naming them and the run's usage."""
    report = report_path(env, temp_dir)
    write_report(result, "json", report)
    sarif = sarif_path(report)
    write_report(result, "sarif", sarif)
    outputs = {"report": str(report), "sarif": str(sarif)}
    if env.get("REVIEWER_CODEQUALITY"):  # GitLab's merge request widget reads this one
        write_report(result, "codequality", env["REVIEWER_CODEQUALITY"])
        outputs["codequality"] = env["REVIEWER_CODEQUALITY"]
    return {**outputs, **usage_outputs(result)}


def not_reviewed_result(reason: str, *, model: str, base: str, head: str) -> ReviewResult:
    """What the reports of a run that could not review say (a fork's pipeline without the
    model's key, ...): an incomplete review of nothing, `not reviewed: REASON`. Every format
    says incomplete (the JSON `status`, SARIF's failed invocation, Code Quality's blocker),
    never clean."""
    return ReviewResult(
        status="incomplete",
        summary="",
        findings=(),
        model=model,
        base=base,
        head=head,
        incomplete_reason=f"not reviewed: {reason}",
    )


class LeftReports:
    """The report files a run leaves whatever happens to it. Made when the run starts, so it
    knows which files were there before: a run that ends early writes reports that say
    "not reviewed" (every format says incomplete, never clean), unless this run already wrote
    its review's own (it failed later, while posting), which are then left as they are."""

    def __init__(self, env: Mapping[str, str], temp_dir: Path) -> None:
        self.env = env
        self.temp_dir = temp_dir
        self._found = {name: _stamp(path) for name, path in self._paths().items()}

    def _paths(self) -> dict[str, Path]:
        report = report_path(self.env, self.temp_dir)
        paths = {"report": report, "sarif": sarif_path(report)}
        if self.env.get("REVIEWER_CODEQUALITY"):
            paths["codequality"] = Path(self.env["REVIEWER_CODEQUALITY"])
        return paths

    def after_failure(self, reason: str, *, model: str, base: str, head: str) -> dict[str, str]:
        """The outputs naming the reports this failed run leaves (written now when it wrote
        none); {} when they cannot be written, which the log says."""
        paths = self._paths()
        if any(_stamp(path) != self._found[name] for name, path in paths.items()):
            return {name: str(path) for name, path in paths.items() if path.is_file()}
        result = not_reviewed_result(reason, model=model, base=base, head=head)
        try:
            return write_run_files(result, self.env, self.temp_dir)
        except (ReviewerError, OSError) as exc:
            log(f"warning: the not-reviewed reports could not be written: {exc}")
            return {}


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """Which file is at `path` now (None: none): a file written later is another one."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


def usage_outputs(result: ReviewResult) -> dict[str, str]:
    """`tokens`: what the server counted for this run's requests; `cost`: USD with four
    decimals, empty when the model has no price (the log and the reports say so)."""
    cost = result.cost_usd if result.price is not None else None
    return {
        "tokens": str(result.usage.total_tokens),
        "cost": "" if cost is None else f"{cost:.4f}",
    }


@contextmanager
def said_if_not_reviewed(say: Callable[[str], None]) -> Iterator[None]:
    """Around a forge's whole run (`reviewer github`, `reviewer gitlab`): whatever ends it early,
    a ReviewerError or an exception nobody expected (a defect), is said where people look
    (`say`: the forge's not-reviewed summary, `status` output and error line) in the one line
    the log gets, then goes on to the one exit point (cli/program.py), which exits 2."""
    try:
        yield
    except ReviewerError as exc:
        _say(say, str(exc))
        raise
    except Exception as exc:
        _say(say, unexpected_error_line(exc))
        raise


def _say(say: Callable[[str], None], line: str) -> None:
    try:
        say(line)
    except Exception as failure:  # the run's own error is the one to exit with
        log(f"error: could not say that the run did not review ({type(failure).__name__})")
