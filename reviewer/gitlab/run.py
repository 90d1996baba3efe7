"""`reviewer gitlab`: the entry of a GitLab CI job in a merge request pipeline. It reads the
pipeline's variables (ci.py), builds the adapter (the merge request, opened when the flow
needs it; or, without a token or in a fork's pipeline, one that posts nothing and says why)
and the job's side (ci_side.py), and hands them to the core's flows: the review (or the plan
of a dry run), then the questions asked since the last run (questions.py). Every body posted
is written in GitLab's Markdown dialect. A run that cannot review says so in the log, the job
summary file, the `status` output and the reports (ci_side.py), and exits 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.forge.dry_run import dry_run_asked, plan_change
from reviewer.forge.fetch import ensure_commits
from reviewer.forge.interface import OpenChange
from reviewer.forge.review_flow import review_change
from reviewer.forge.run_files import said_if_not_reviewed
from reviewer.forge.signing import Signer
from reviewer.gitlab.adapter import GitLabMergeRequest
from reviewer.gitlab.ci import GitLabJob, read_job
from reviewer.gitlab.ci_side import GitLabCI, report_paths
from reviewer.gitlab.client import GitLabClient
from reviewer.gitlab.questions import answer_questions
from reviewer.gitlab.unposted import UnpostedMergeRequest
from reviewer.report.mdtext import markdown_dialect, neutralize
from reviewer.workspace import repository_root
from reviewer.workspace.gitcmd import run_git

NOT_REVIEWED = "not-reviewed"


def run_gitlab(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    ci: GitLabCI | None = None

    def say(message: str) -> None:
        if ci is not None:  # before the job is read there is no folder to write to
            _say_not_reviewed(ci, message)

    with said_if_not_reviewed(say):
        job = read_job(env)
        ci = GitLabCI(job, env)
        env = _with_report_paths(job, env)
        with markdown_dialect("gitlab"):
            if dry_run_asked(env):  # the plan only: no model, so no API key either
                return plan_change(lambda: open_merge_request(job, ci, env), ci, env)
            ci.require_model_key()
            pr = open_merge_request(job, ci, env)
            code = review_change(lambda: pr, ci, env, pr)
            if job.may_post:
                _answer_questions(pr, ci, env)
            return code


def _answer_questions(pr: OpenChange, ci: GitLabCI, env: Mapping[str, str]) -> None:
    """After the review: a question that cannot be read or answered is said in the log and
    waits for the next run; it never turns a finished review into "not reviewed"."""
    try:
        answer_questions(pr, ci, env)
    except ReviewerError as exc:
        ci.warning(f"reviewer could not answer the questions asked since the last run: {exc}")


def _with_report_paths(job: GitLabJob, env: Mapping[str, str]) -> dict[str, str]:
    """Every report in the reports folder unless placed elsewhere (ci_side.report_paths),
    written on every run, a run that could not review included."""
    return {**env, **report_paths(job, env)}


def open_merge_request(job: GitLabJob, ci: GitLabCI, env: Mapping[str, str]) -> OpenChange:
    """The pipeline's merge request, its commits fetched where the clone lacks them. The
    memory is signed with a key bound to the project and the merge request (signing.py)."""
    secret = env.get("REVIEWER_STATE_KEY") or env.get("OPENAI_API_KEY") or ""
    signer = Signer.from_secret(secret, f"gitlab:{job.project_id}!{job.iid}")
    why_not = job.why_not_posting()
    if why_not is None:
        assert job.token is not None
        client = GitLabClient(job.server_url, job.token, job.project_id, job.iid, log=ci.log)
        forge: GitLabMergeRequest | UnpostedMergeRequest = GitLabMergeRequest(client, signer)
    else:
        ci.warning(f"reviewer will post nothing: {why_not}")
        forge = UnpostedMergeRequest(job, env, why_not)
    info = forge.change_request()
    root = repository_root(Path(job.project_dir))
    ensure_commits(
        root,
        job.base_sha,
        job.head_sha,
        ci.log,
        change_ref=f"+refs/merge-requests/{job.iid}/head:refs/remotes/origin/mr-{job.iid}",
        deep_checkout='set `GIT_DEPTH: "0"` in the job\'s variables',
        noun=forge.noun,
    )
    merge_base = run_git(root, ["merge-base", job.base_sha, job.head_sha]).stdout.decode().strip()
    return OpenChange(forge, info, job.base_sha, job.head_sha, merge_base, root, signer)


def _say_not_reviewed(ci: GitLabCI, message: str) -> None:
    """An error line, the job summary file and the `status` output: a run that could not
    review is visible where people look, not only in the log."""
    ci.error(message, title="Not reviewed")
    ci.append_summary(
        "## ⚠️ AI review: not reviewed\n\n"
        f"{neutralize(message, dialect='gitlab')}\n\n"
        "This run did not review the merge request, so its job fails: an unreviewed change "
        "never looks reviewed.\n",
    )
    ci.write_outputs({"status": NOT_REVIEWED, **ci.write_not_reviewed_reports(message)})
