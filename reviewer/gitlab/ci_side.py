"""The GitLab CI job a run is in, as the core's CISide (reviewer/forge/interface.py).

GitLab has no workflow commands: errors and warnings are plain lines of the job's log, and
there are no annotations (the findings are log lines when nothing could be posted; the Code
Quality report puts them in the merge request's widget). The job summary is a Markdown file
in the reports folder (kept with `artifacts: when: always`), the outputs a dotenv file when
REVIEWER_DOTENV names one (`artifacts: reports: dotenv:` hands them to later jobs). Masking
is GitLab's own: a masked CI/CD variable is hidden in the log by the runner, so `mask` does
nothing.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.findings import Finding, sort_findings
from reviewer.forge.run_files import REPORT_NAME, LeftReports
from reviewer.gitlab.ci import GitLabJob
from reviewer.safety.redact import Redactor
from reviewer.safety.sinks import data_name
from reviewer.safety.sinks import log as sinks_log

REPORTS_FOLDER = "reviewer-reports"  # under CI_PROJECT_DIR: artifacts must be inside it
SUMMARY_FILE = "summary.md"
CODE_QUALITY_FILE = "gl-code-quality-report.json"
# The findings written as log lines when nothing could be posted: the most severe first.
MAX_LOGGED_FINDINGS = 30
_NOT_A_NAME = re.compile(r"[^A-Z0-9_]")


def reports_folder(job: GitLabJob, env: Mapping[str, str]) -> Path:
    """REVIEWER_REPORTS_DIR, else `reviewer-reports` in the project's checkout."""
    return Path(env.get("REVIEWER_REPORTS_DIR") or Path(job.project_dir) / REPORTS_FOLDER)


def report_paths(job: GitLabJob, env: Mapping[str, str]) -> dict[str, str]:
    """Every report in the reports folder unless placed elsewhere: the JSON report (and the
    SARIF log beside it) and the Code Quality report, as the variables that name them."""
    folder = reports_folder(job, env)
    return {
        "REVIEWER_REPORT": env.get("REVIEWER_REPORT") or str(folder / REPORT_NAME),
        "REVIEWER_CODEQUALITY": env.get("REVIEWER_CODEQUALITY") or str(folder / CODE_QUALITY_FILE),
    }


# Not REVIEWER_*: a later job that runs reviewer gets the dotenv's variables, and the settings
# loader refuses a REVIEWER_* variable that is no setting.
DOTENV_PREFIX = "AI_REVIEW_"


def dotenv_name(output: str) -> str:
    """An output's name as a CI/CD variable (`highest-severity` -> AI_REVIEW_HIGHEST_SEVERITY)."""
    return DOTENV_PREFIX + _NOT_A_NAME.sub("_", output.upper())


class GitLabCI:
    """The GitLab CI job, as the core's CISide."""

    def __init__(self, job: GitLabJob, env: Mapping[str, str]) -> None:
        self.job = job
        self.env = env
        self.in_ci = env.get("GITLAB_CI") == "true"
        # CI_JOB_ID is new for every retry of the job: the marker tells attempts apart.
        self.run_id = f"gl{job.job_id}" if job.job_id else secrets.token_hex(6)
        self.repository = env.get("CI_PROJECT_PATH") or job.project_id
        self.temp_dir = reports_folder(job, env)
        self.temp_dir.mkdir(parents=True, exist_ok=True)
        self.summary_file = self.temp_dir / SUMMARY_FILE
        # GitLab has no annotations: the findings are log lines and the summary file.
        self.results_where = f"the job's log and {self.summary_file}"
        dotenv = env.get("REVIEWER_DOTENV")
        self.dotenv_file = Path(dotenv) if dotenv else None
        self._outputs: dict[str, str] = {}
        # The reports as they were before this run: what it writes is not what it found.
        self._reports = LeftReports({**env, **report_paths(job, env)}, self.temp_dir)

    def log(self, message: str) -> None:
        sinks_log(message)

    def error(self, message: str, title: str | None = None) -> None:
        sinks_log(f"ERROR: {title}: {message}" if title else f"ERROR: {message}")

    def warning(self, message: str) -> None:
        sinks_log(f"WARNING: {message}")

    def annotate(self, findings: Sequence[Finding]) -> None:
        redact = Redactor()
        ordered = sort_findings(list(findings))
        for finding in ordered[:MAX_LOGGED_FINDINGS]:
            where = f"{data_name(finding.path)}:{finding.line}"
            sinks_log(redact(f"{finding.severity.value}: {where}: {finding.title}"))
        if len(ordered) > MAX_LOGGED_FINDINGS:
            sinks_log(f"... and {len(ordered) - MAX_LOGGED_FINDINGS} more: see the reports")

    def write_outputs(self, outputs: Mapping[str, str]) -> None:
        """The dotenv file, rewritten whole (a later value of an output replaces the earlier);
        one line per variable: GitLab's dotenv takes no multi-line value."""
        self._outputs.update(outputs)
        if self.dotenv_file is None:
            return
        lines = [
            f"{dotenv_name(name)}={' '.join(value.split())}"
            for name, value in self._outputs.items()
        ]
        self.dotenv_file.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def append_summary(self, markdown: str) -> None:
        with self.summary_file.open("a", encoding="utf-8") as handle:
            handle.write(markdown if markdown.endswith("\n") else markdown + "\n")

    def write_not_reviewed_reports(self, reason: str) -> dict[str, str]:
        """A run that could not review (a fork's pipeline without the model's key, ...) still
        leaves the JSON report, the SARIF log and the Code Quality report, each saying "not
        reviewed" (`artifacts: when: always` keeps them; the widget shows the blocker)."""
        model = self.env.get("REVIEWER_MODEL") or ""
        return self._reports.after_failure(
            reason, model=model, base=self.job.base_sha, head=self.job.head_sha
        )

    def mask(self, value: str | None) -> None:
        """GitLab masks the masked CI/CD variables itself; a job cannot add masks."""

    def require_model_key(self) -> None:
        if (self.env.get("OPENAI_API_KEY") or "").strip():
            return
        if self.job.runs_in_fork:
            raise ReviewerError(
                "this merge request comes from a fork and its pipeline runs in the fork's "
                "project, without the parent's CI/CD variables, so OPENAI_API_KEY is empty and "
                "nothing was reviewed; a maintainer can run the pipeline in the parent project "
                "(Run pipeline on the merge request)"
            )
        raise ReviewerError(
            "missing the API key (OPENAI_API_KEY): add it as a masked CI/CD variable of the "
            "project (any value works for a local server)"
        )
