"""`reviewer github`: the Action's entry. It reads the run's event, builds the adapter (the pull
request, opened when the flow needs it, and the Actions job) and hands them to the core's flow
for that trigger: a pull request's event (or a manual run) to the review, a comment to the
answer (reviewer/forge/). A run that cannot review says so in an annotation, the job summary
and the `status` output, and exits 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from reviewer.forge.answer_flow import answer_comment
from reviewer.forge.dry_run import dry_run_asked, plan_change
from reviewer.forge.review_flow import review_change
from reviewer.forge.run_files import LeftReports, said_if_not_reviewed
from reviewer.github.actions import (
    ActionsCI,
    add_mask,
    append_summary,
    emit_command,
    load_context,
    write_outputs,
)
from reviewer.github.adapter import open_pull
from reviewer.report.mdtext import neutralize

NOT_REVIEWED = "not-reviewed"


def run_github(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    if env.get("GITHUB_ACTIONS") == "true":
        # Only the runner reads these; anywhere else they would print the secrets.
        for name in ("GITHUB_TOKEN", "OPENAI_API_KEY", "REVIEWER_STATE_KEY",
                     "REVIEWER_JIRA_TOKEN", "JIRA_API_TOKEN"):  # fmt: skip
            add_mask(env.get(name))
    reports = LeftReports(env, Path(env.get("RUNNER_TEMP") or "."))
    with said_if_not_reviewed(partial(_say_not_reviewed, env, reports)):
        context = load_context(env)
        ci = ActionsCI(context, env)
        pull = partial(open_pull, context, env)
        comment = context.comment_event()
        if comment is not None:
            return answer_comment(comment, pull, ci, env)
        if dry_run_asked(env):  # the plan only: no model, so no API key either
            return plan_change(pull, ci, env)
        ci.require_model_key()
        return review_change(pull, ci, env)


def _say_not_reviewed(env: Mapping[str, str], reports: LeftReports, message: str) -> None:
    """An error annotation, a job summary, the `status` output and the reports: a run that
    could not review is visible where people look, not only in the log."""
    if env.get("GITHUB_ACTIONS") != "true":
        return
    emit_command("error", f"reviewer: {message}", title="Not reviewed")
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        append_summary(
            Path(summary),
            "## ⚠️ AI review: not reviewed\n\n"
            f"{neutralize(message)}\n\n"
            "This run did not review the pull request, so its check fails: an unreviewed "
            "change never looks reviewed.\n",
        )
    left = reports.after_failure(
        message, model=env.get("REVIEWER_MODEL") or "", base="", head=env.get("GITHUB_SHA") or ""
    )
    output = env.get("GITHUB_OUTPUT")
    if output:
        write_outputs(Path(output), {"status": NOT_REVIEWED, **left})
