"""A run with `dry-run: true` (REVIEWER_DRY_RUN): the plan of what this run would review, and
nothing else. It reads the change request and the bot's memory as a real run does, so the plan
is of the same files (all of them, or what no complete run has reviewed yet); then it prints
the plan, writes it as JSON (the `report` output) and into the job summary, and stops. No
model is asked, nothing is posted, no API key is needed, and it exits 0.
"""

from __future__ import annotations

from collections.abc import Mapping

from reviewer.errors import ExitCode, ReviewerError
from reviewer.forge.interface import CISide, Opener
from reviewer.forge.memory import our_summary
from reviewer.forge.review_flow import decide_scope, request_for
from reviewer.forge.run_files import TRUE_WORDS, report_path
from reviewer.report import write_text
from reviewer.report.mdtext import fence, neutralize_line
from reviewer.report.plan import render_plan_json, render_plan_text
from reviewer.review.dryrun import plan_review
from reviewer.review.progress import Progress

DRY_RUN = "dry-run"
_FALSE = ("false", "0", "no", "")


def dry_run_asked(env: Mapping[str, str]) -> bool:
    """REVIEWER_DRY_RUN (the `dry-run` input). A value that is neither true nor false is an
    error: a misspelt `true` must not turn into a real, paid review."""
    value = (env.get("REVIEWER_DRY_RUN") or "").strip().lower()
    if value in TRUE_WORDS or value in _FALSE:
        return value in TRUE_WORDS
    raise ReviewerError(
        f"REVIEWER_DRY_RUN (the action's dry-run input) is {value!r}: set it to true or false"
    )


def plan_change(open_change: Opener, ci: CISide, env: Mapping[str, str]) -> int:
    pr = open_change()
    _existing, previous = our_summary(pr.forge, pr.signer, ci.log)
    scope, _state, _full = decide_scope(pr, ci, previous, env)
    ci.log(f"dry run: {scope.note}")
    request = request_for(pr, ci, scope, env)
    progress = Progress()
    try:
        plan = plan_review(request, events=progress)
    finally:
        progress.done()
    text = render_plan_text(plan)
    # On stderr, line by line: the runner reads no workflow command from a log line.
    for line in text.splitlines():
        ci.log(line)
    report = report_path(env, ci.temp_dir)
    write_text(render_plan_json(plan), report, what="plan")
    ci.append_summary(
        "## AI review: dry run\n\n"
        f"This run: {neutralize_line(scope.note)}. No model was asked and nothing was posted; "
        "this is what a run with `dry-run: false` would review.\n\n"
        f"{fence(text.rstrip(), 'text')}\n",
    )
    ci.write_outputs({"status": DRY_RUN, "report": str(report)})
    ci.log(f"done ({DRY_RUN}, exit 0): asked no model, posted nothing; the plan is in {report}")
    return int(ExitCode.OK)
