"""The GitLab CI side of `reviewer gitlab`: the merge request pipeline's predefined variables
(docs.gitlab.com/ci/variables/predefined_variables/), read once into `GitLabJob`.

A merge request pipeline runs for `rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"`.
The merge request lives in the target project (`CI_MERGE_REQUEST_PROJECT_ID`); a merge request
from a fork has another source project (`CI_MERGE_REQUEST_SOURCE_PROJECT_ID`), and its
pipeline runs, by default, in the fork (`CI_PROJECT_ID` is the fork's): the parent's masked
variables (the token, the model's key) are absent there, and the job says so and posts
nothing. `CI_JOB_TOKEN` cannot write notes: posting needs a project access token with the
`api` scope in a masked variable (TOKEN_VARIABLES).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reviewer.errors import ReviewerError

# Where the token is looked for, in order (the README names the first).
TOKEN_VARIABLES = ("REVIEWER_GITLAB_TOKEN", "GITLAB_TOKEN")
MERGE_REQUEST_EVENT = "merge_request_event"
_API_SUFFIX = "/api/v4"
_REQUIRED = (
    "CI_API_V4_URL",
    "CI_PROJECT_ID",
    "CI_MERGE_REQUEST_IID",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "CI_COMMIT_SHA",
)


@dataclass(frozen=True)
class GitLabJob:
    server_url: str  # what python-gitlab takes (a self-managed instance's path included)
    api_url: str  # CI_API_V4_URL
    project_id: str  # the merge request's (target) project
    iid: int
    base_sha: str  # the merge base (CI_MERGE_REQUEST_DIFF_BASE_SHA)
    head_sha: str  # CI_COMMIT_SHA
    project_dir: str
    source_branch: str
    target_branch: str
    job_id: str
    from_fork: bool  # the source project is not the target project
    runs_in_fork: bool  # the pipeline runs in the fork: no parent variables, no token
    token: str | None
    token_variable: str | None  # which variable held it (said in messages, never the value)

    @property
    def may_post(self) -> bool:
        return self.token is not None and not self.runs_in_fork

    def why_not_posting(self) -> str | None:
        """One line saying why this run posts nothing, or None when it may post."""
        if self.runs_in_fork:
            return (
                "this merge request comes from a fork and its pipeline runs in the fork's "
                "project, without the parent's CI/CD variables: reports are written, nothing "
                "is posted (run the pipeline in the parent project to post)"
            )
        if self.token is None:
            return (
                f"no token: set {TOKEN_VARIABLES[0]} (a masked CI/CD variable holding a "
                "project access token with the api scope; CI_JOB_TOKEN cannot write notes)"
            )
        return None


def read_job(env: Mapping[str, str]) -> GitLabJob:
    """The job's variables; a ReviewerError (one line, what to do) when this is not a merge
    request pipeline."""
    source = env.get("CI_PIPELINE_SOURCE", "")
    if source != MERGE_REQUEST_EVENT:
        raise ReviewerError(
            f"`reviewer gitlab` runs in a merge request pipeline (CI_PIPELINE_SOURCE is "
            f"{source or 'unset'!r}): give the job `rules: - if: $CI_PIPELINE_SOURCE == "
            f'"{MERGE_REQUEST_EVENT}"`'
        )
    missing = [name for name in _REQUIRED if not env.get(name)]
    if missing:
        raise ReviewerError(
            f"`reviewer gitlab` needs GitLab's predefined variables {', '.join(missing)}: "
            "run it as a job of a merge request pipeline"
        )
    iid = env["CI_MERGE_REQUEST_IID"]
    if not iid.isdigit():
        raise ReviewerError(f"CI_MERGE_REQUEST_IID is not a number: {iid[:40]!r}")
    api_url = env["CI_API_V4_URL"].rstrip("/")
    server_url = api_url.removesuffix(_API_SUFFIX) if api_url.endswith(_API_SUFFIX) else (
        env.get("CI_SERVER_URL") or api_url
    )  # fmt: skip
    pipeline_project = env["CI_PROJECT_ID"]
    target = env.get("CI_MERGE_REQUEST_PROJECT_ID") or pipeline_project
    source_project = env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_ID") or target
    token_variable = next((name for name in TOKEN_VARIABLES if env.get(name)), None)
    return GitLabJob(
        server_url=server_url,
        api_url=api_url,
        project_id=target,
        iid=int(iid),
        base_sha=env["CI_MERGE_REQUEST_DIFF_BASE_SHA"],
        # A merged results pipeline's commit is the merge: the source's head is named apart.
        head_sha=env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA") or env["CI_COMMIT_SHA"],
        project_dir=env.get("CI_PROJECT_DIR", "."),
        source_branch=env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", ""),
        target_branch=env.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", ""),
        job_id=env.get("CI_JOB_ID", ""),
        from_fork=source_project != target,
        runs_in_fork=pipeline_project != target,
        token=env[token_variable] if token_variable else None,
        token_variable=token_variable,
    )
