"""The fake Jira refuses what Jira refuses, each rule with its source (reviewer/testing/
fake_jira.py): "Get issue" (developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-
issues/#api-rest-api-3-issue-issueidorkey-get: 401 "authentication credentials are incorrect
or missing", 404 "issue is not found or the user does not have permission to view it", each
as Jira's error collection), Cloud's Basic email:token and Data Center's Bearer personal
access token, Cloud's v3 ADF description and Data Center's v2 only. Plain requests over real
HTTP, and the fake as a program."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import requests

from reviewer.context.adf import adf_text
from reviewer.testing.fake_jira import FakeJira

NO_PROXY = {"http": "", "https": ""}


def get(url: str, **kwargs: object) -> requests.Response:
    return requests.get(url, proxies=NO_PROXY, timeout=10, **kwargs)  # type: ignore[arg-type]


def test_cloud_answers_basic_auth_with_adf_and_refuses_the_rest() -> None:
    with FakeJira(kind="cloud", email="dev@acme.test", token="t0ken") as jira:
        jira.add_issue("PAY-42", "Refunds", "A refund never exceeds the charge.\n\nDone when: yes")
        good = ("dev@acme.test", "t0ken")
        answer = get(f"{jira.url}/rest/api/3/issue/pay-42?fields=summary,description", auth=good)
        assert answer.status_code == 200
        issue = answer.json()
        assert issue["key"] == "PAY-42" and set(issue["fields"]) == {"summary", "description"}
        assert issue["fields"]["description"]["type"] == "doc"
        assert adf_text(issue["fields"]["description"]) == (
            "A refund never exceeds the charge.\n\nDone when: yes")  # fmt: skip
        v2 = get(f"{jira.url}/rest/api/2/issue/PAY-42", auth=good).json()
        assert v2["fields"]["description"] == "A refund never exceeds the charge.\n\nDone when: yes"
        for auth in [("dev@acme.test", "wrong"), None]:
            refused = get(f"{jira.url}/rest/api/3/issue/PAY-42", auth=auth)
            assert refused.status_code == 401
            assert refused.json() == {"errorMessages": [
                "Client must be authenticated to access this resource."], "errors": {}}  # fmt: skip
        bearer = get(f"{jira.url}/rest/api/3/issue/PAY-42",
                     headers={"Authorization": "Bearer t0ken"})  # fmt: skip
        assert bearer.status_code == 401  # a Cloud API token is no bearer token
        missing = get(f"{jira.url}/rest/api/3/issue/PAY-7", auth=good)
        assert missing.status_code == 404 and missing.json()["errorMessages"] == [
            "Issue does not exist or you do not have permission to see it."]  # fmt: skip
        assert [r.status for r in jira.requests] == [200, 200, 401, 401, 401, 404]


def test_data_center_takes_a_bearer_token_and_has_api_v2_only() -> None:
    with FakeJira(kind="datacenter", token="pat") as jira:
        jira.add_issue("OPS-1", "Rotate keys", "Every quarter.")
        bearer = {"Authorization": "Bearer pat"}
        assert get(f"{jira.url}/rest/api/2/issue/OPS-1", headers=bearer).status_code == 200
        assert get(f"{jira.url}/rest/api/3/issue/OPS-1", headers=bearer).status_code == 404
        assert get(f"{jira.url}/rest/api/2/issue/OPS-1", auth=("a", "pat")).status_code == 401


def test_the_fake_runs_as_a_program_with_its_issues_from_a_file(tmp_path: Path) -> None:
    issues = tmp_path / "issues.json"
    issues.write_text(json.dumps({"PAY-42": {"summary": "Refunds", "description": "Cap it."}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer.testing.fake_jira", "--issues", str(issues),
         "--email", "e@x.test", "--token", "tk"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        answer = get(f"{url}/rest/api/3/issue/PAY-42", auth=("e@x.test", "tk"))
        assert answer.status_code == 200 and answer.json()["fields"]["summary"] == "Refunds"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_adf_as_text_keeps_structure_and_bounds_any_tree() -> None:
    doc = {"type": "doc", "version": 1, "content": [
        {"type": "heading", "attrs": {"level": 2},
         "content": [{"type": "text", "text": "Acceptance criteria"}]},
        {"type": "orderedList", "content": [
            {"type": "listItem", "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": "Cap refunds "},
                {"type": "mention", "attrs": {"id": "42", "text": "@ann"}}]}]},
            {"type": "listItem", "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": "Log them"}]}]}]},
        {"type": "codeBlock", "content": [{"type": "text", "text": "refund(o, 5)"}]},
        {"type": "table", "content": [{"type": "tableRow", "content": [
            {"type": "tableCell", "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": "a"}]}]},
            {"type": "tableCell", "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": "b"}]}]}]}]},
        {"type": "futureNode", "content": [{"type": "text", "text": "kept"}]},
        {"type": "inlineCard", "attrs": {"url": "https://wiki.test/refunds"}},
    ]}  # fmt: skip
    assert adf_text(doc) == (
        "## Acceptance criteria\n\n\n1. Cap refunds @ann\n2. Log them\n\n```\nrefund(o, 5)\n```"
        "\n\n| a | b |\n\nkepthttps://wiki.test/refunds"
    )
    # A tree nested 100,000 deep is walked without recursion, and bounded.
    deep: dict[str, object] = {"type": "doc", "content": []}
    node = deep
    for _ in range(100_000):
        child: dict[str, object] = {"type": "panel", "content": []}
        node["content"].append(child)  # type: ignore[attr-defined]
        node = child
    assert "too many parts" not in adf_text(deep)
    wide = {"type": "doc", "content": [{"type": "text", "text": "x"}] * 300_000}
    assert adf_text(wide).endswith("[The rest of the description is left out: it has too many "
                                   "parts.]")  # fmt: skip
    assert adf_text("not a document") == "" and adf_text(None) == ""
