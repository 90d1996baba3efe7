"""`reviewer gitlab` reads GitLab CI's predefined variables
(https://docs.gitlab.com/ci/variables/predefined_variables/)."""

from __future__ import annotations

import pytest

from reviewer.errors import ReviewerError
from reviewer.gitlab.ci import read_job

BASE = {
    "CI_PIPELINE_SOURCE": "merge_request_event",
    "CI_SERVER_URL": "https://gitlab.example.com/gitlab",
    "CI_API_V4_URL": "https://gitlab.example.com/gitlab/api/v4",
    "CI_PROJECT_ID": "7",
    "CI_MERGE_REQUEST_PROJECT_ID": "7",
    "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "7",
    "CI_MERGE_REQUEST_IID": "3",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA": "a" * 40,
    "CI_COMMIT_SHA": "b" * 40,
    "CI_PROJECT_DIR": "/builds/acme/shop",
    "REVIEWER_GITLAB_TOKEN": "glpat-secret",
}


def test_a_merge_request_pipeline_of_a_self_managed_instance() -> None:
    job = read_job(BASE)
    assert job.server_url == "https://gitlab.example.com/gitlab"  # relative root kept
    assert (job.project_id, job.iid, job.base_sha, job.head_sha) == ("7", 3, "a" * 40, "b" * 40)
    assert job.may_post and not job.from_fork and job.why_not_posting() is None
    assert job.token_variable == "REVIEWER_GITLAB_TOKEN"


def test_a_fork_pipeline_in_the_fork_posts_nothing_and_says_why() -> None:
    env = {**BASE, "CI_PROJECT_ID": "99", "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "99"}
    del env["REVIEWER_GITLAB_TOKEN"]  # the parent's masked variables are not there
    job = read_job(env)
    assert job.from_fork and job.runs_in_fork and not job.may_post
    assert job.project_id == "7"
    assert "fork" in (job.why_not_posting() or "")


def test_a_fork_pipeline_run_in_the_parent_may_post() -> None:
    job = read_job({**BASE, "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "99"})
    assert job.from_fork and not job.runs_in_fork and job.may_post


def test_without_a_token_it_says_which_variable_to_set() -> None:
    env = {k: v for k, v in BASE.items() if k != "REVIEWER_GITLAB_TOKEN"}
    env["CI_JOB_TOKEN"] = "job-token"  # cannot write notes: never used
    job = read_job(env)
    assert job.token is None
    assert "REVIEWER_GITLAB_TOKEN" in (job.why_not_posting() or "")


def test_not_a_merge_request_pipeline_is_bad_input_in_one_line() -> None:
    with pytest.raises(ReviewerError, match="merge_request_event") as caught:
        read_job({**BASE, "CI_PIPELINE_SOURCE": "push"})
    assert "\n" not in str(caught.value)
    with pytest.raises(ReviewerError, match="CI_MERGE_REQUEST_IID"):
        read_job({k: v for k, v in BASE.items() if k != "CI_MERGE_REQUEST_IID"})
