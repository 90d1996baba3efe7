"""The fake GitHub answers the conversation of a review as GitHub does: review threads over
GraphQL, resolution and its permission, replies, reactions, collaborators' permissions, and
the comment events.

Facts and sources: /work/shared/research/conversation-and-formats.md, sections "GitHub review
threads (GraphQL)", "Reactions, replies, permissions (REST)", "Events (GitHub Actions)".
FORBIDDEN's exact body: letta-ai/letta-code#2201 and github/gh-aw#35726; NOT_FOUND's:
nodejs/node-core-utils#120; a rejected field's graphql-ruby wording:
poingstudios/godot-admob-plugin#493; pagination limits: docs.github.com "Rate limits and query
limits for the GraphQL API" ("Clients must supply a first or last argument on any connection.
Values of first and last must be within 1-100."); GHES's GraphQL at `/api/graphql`:
docs.github.com enterprise-server "Forming calls with GraphQL".
Every test goes through real HTTP: PyGithub's own requester (`graphql_query`) where it can,
urllib for the raw answers.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from github import Auth, Github, GithubException
from graphql import parse, print_ast

from reviewer.testing import FakeGitHub
from reviewer.testing._gh_graphql import SUBSET_FILE
from tests.conftest import GitRepo
from tests.support.github_schema import subset

APP = "".join(f"line {i}\n" for i in range(1, 41))
THREADS = """
query Threads($after: String) {
  repository(owner: "acme", name: "shop") {
    pullRequest(number: 7) {
      reviewThreads(first: 2, after: $after) {
        nodes {
          id isResolved isOutdated resolvedBy { login } viewerCanResolve viewerCanReply
          path line diffSide
          comments(first: 100) {
            nodes { databaseId author { __typename login } body replyTo { databaseId } }
          }
        }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""
THREAD_IDS = """{ repository(owner: "acme", name: "shop") { pullRequest(number: 7) {
  reviewThreads(first: 100) { nodes { id isResolved viewerCanResolve viewerCanUnresolve
  resolvedBy { login } comments(first: 1) { nodes { databaseId } } } } } } }"""
RESOLVE = """mutation Resolve($id: ID!) {
  resolveReviewThread(input: {threadId: $id}) { thread { id isResolved resolvedBy { login } } }
}"""
REPLY = """mutation Reply($id: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: {pullRequestReviewThreadId: $id, body: $body}) {
    comment { databaseId body author { login } replyTo { databaseId } }
  }
}"""


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def pull_repo(repo: GitRepo) -> GitRepo:
    """app.py on main; `feature` changes line 5 and adds lines 31-32 (two hunks)."""
    repo.write("app.py", APP)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    app = APP.replace("line 5\n", "line 5 changed\n").replace(
        "line 30\n", "line 30\nadded A\nadded B\n"
    )
    repo.write("app.py", app)
    repo.commit("feature work")
    return repo


@pytest.fixture
def fake(pull_repo: GitRepo) -> Iterator[FakeGitHub]:
    with FakeGitHub(pull_repo.root, number=7, title="Add things", author="alice") as server:
        yield server


def client(fake: FakeGitHub) -> Github:
    return Github(
        base_url=fake.base_url,
        auth=Auth.Token("t"),
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def graphql(gh: Github, query: str, **variables: Any) -> dict[str, Any]:
    """Through PyGithub's requester, which raises on any `errors`."""
    _, data = gh.requester.graphql_query(query, variables)
    return data["data"]


def raw_graphql(fake: FakeGitHub, query: str, path: str = "/graphql", **variables: Any) -> Any:
    """The status and JSON body exactly as the fake sends them."""
    request = urllib.request.Request(
        fake.url + path,
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Authorization": "token t", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def threads_of(data: dict[str, Any]) -> dict[str, Any]:
    return data["repository"]["pullRequest"]["reviewThreads"]


def test_threads_paginate_and_show_the_conversation(fake: FakeGitHub) -> None:
    first = fake.add_review_comment("app.py", 5, "Off by one.")
    second = fake.add_review_comment("app.py", 31, "Unused.")
    third = fake.add_review_comment("app.py", 32, "Typo.", user="carol")
    reply = fake.person("alice").reply(first["id"], "Fixed, I think.")
    gh = client(fake)

    page_one = threads_of(graphql(gh, THREADS))
    assert page_one["pageInfo"]["hasNextPage"] is True
    page_two = threads_of(graphql(gh, THREADS, after=page_one["pageInfo"]["endCursor"]))
    assert page_two["pageInfo"]["hasNextPage"] is False
    nodes = page_one["nodes"] + page_two["nodes"]

    roots = [node["comments"]["nodes"][0]["databaseId"] for node in nodes]
    assert roots == [first["id"], second["id"], third["id"]]  # REST id == databaseId
    comments = nodes[0]["comments"]["nodes"]
    assert [c["databaseId"] for c in comments] == [first["id"], reply["id"]]
    assert comments[1]["replyTo"] == {"databaseId": first["id"]}
    # The bot is `github-actions[bot]` in REST, the Bot `github-actions` in GraphQL.
    assert first["user"]["login"] == "github-actions[bot]"
    assert comments[0]["author"] == {"__typename": "Bot", "login": "github-actions"}
    assert comments[1]["author"] == {"__typename": "User", "login": "alice"}
    assert nodes[0] | {"comments": None} == {
        "id": fake.threads()[0]["id"],
        "isResolved": False,
        "isOutdated": False,
        "resolvedBy": None,
        "viewerCanResolve": True,
        "viewerCanReply": True,
        "path": "app.py",
        "line": 5,
        "diffSide": "RIGHT",
        "comments": None,
    }
    fake.assert_no_failures()


def test_a_query_github_rejects_is_rejected_with_githubs_errors(fake: FakeGitHub) -> None:
    fake.add_review_comment("app.py", 5, "Off by one.")
    unknown = """query Threads { repository(owner: "acme", name: "shop") {
      pullRequest(number: 7) { reviewThreads(first: 1) { nodes { pullRequestReview } } } } }"""
    status, body = raw_graphql(fake, unknown)
    assert status == 200
    assert body == {
        "errors": [
            {
                "path": [
                    "query Threads",
                    "repository",
                    "pullRequest",
                    "reviewThreads",
                    "nodes",
                    "pullRequestReview",
                ],
                "extensions": {
                    "code": "undefinedField",
                    "typeName": "PullRequestReviewThread",
                    "fieldName": "pullRequestReview",
                },
                "locations": [{"line": 2, "column": 66}],
                "message": "Field 'pullRequestReview' doesn't exist on type "
                "'PullRequestReviewThread'",
            }
        ]
    }

    no_first = '{ repository(owner: "acme", name: "shop") { pullRequest(number: 7) {\n'
    no_first += "reviewThreads { nodes { id } } } } }"
    status, body = raw_graphql(fake, no_first)
    assert status == 200
    assert body["data"] == {"repository": {"pullRequest": None}}  # the non-null field bubbles
    assert body["errors"] == [
        {
            "type": "MISSING_PAGINATION_BOUNDARIES",
            "path": ["repository", "pullRequest", "reviewThreads"],
            "locations": [{"line": 2, "column": 1}],
            "message": "You must provide a `first` or `last` value to properly paginate the "
            "`reviewThreads` connection.",
        }
    ]

    too_many = no_first.replace("reviewThreads", "reviewThreads(first: 101)")
    _, body = raw_graphql(fake, too_many)
    assert body["errors"][0]["type"] == "EXCESSIVE_PAGINATION"
    assert body["errors"][0]["message"] == (
        "Requesting 101 records on the `reviewThreads` connection exceeds the `first` limit of "
        "100 records."
    )

    _, body = raw_graphql(fake, no_first.replace("number: 7", "number: 8"))
    assert body["errors"][0]["type"] == "NOT_FOUND"
    assert (
        body["errors"][0]["message"] == "Could not resolve to a PullRequest with the number of 8."
    )

    missing_number = '{ repository(owner: "acme", name: "shop") { pullRequest { id } } }'
    _, body = raw_graphql(fake, missing_number)
    assert (
        body["errors"][0]["message"] == "Field 'pullRequest' is missing required arguments: number"
    )

    # PyGithub's requester turns such an answer into an exception, as with GitHub.
    with pytest.raises(GithubException):
        graphql(client(fake), unknown)
    fake.assert_no_failures()


def test_resolving_needs_contents_write(fake: FakeGitHub) -> None:
    root = fake.add_review_comment("app.py", 5, "Off by one.")
    fake.token_permissions = {"contents": "read", "pull-requests": "write"}
    gh = client(fake)
    (thread,) = threads_of(graphql(gh, THREAD_IDS))["nodes"]
    assert thread["viewerCanResolve"] is False  # tells in advance

    status, body = raw_graphql(fake, RESOLVE, id=thread["id"])
    assert status == 200
    assert body == {
        "data": {"resolveReviewThread": None},
        "errors": [
            {
                "type": "FORBIDDEN",
                "path": ["resolveReviewThread"],
                "extensions": {"saml_failure": False},
                "locations": [{"line": 2, "column": 3}],
                "message": "Resource not accessible by integration",
            }
        ],
    }
    assert fake.threads()[0]["is_resolved"] is False
    # Replies need only pull-requests: write.
    reply = graphql(gh, REPLY, id=thread["id"], body="Still open.")
    assert reply["addPullRequestReviewThreadReply"]["comment"]["replyTo"] == {
        "databaseId": root["id"]
    }

    fake.token_permissions = {"contents": "write", "pull-requests": "write"}
    resolved = graphql(gh, RESOLVE, id=thread["id"])["resolveReviewThread"]["thread"]
    # resolvedBy is a User: an app's resolution leaves it null.
    assert resolved == {"id": thread["id"], "isResolved": True, "resolvedBy": None}
    (after,) = threads_of(graphql(gh, THREAD_IDS))["nodes"]
    assert (after["viewerCanResolve"], after["viewerCanUnresolve"]) == (False, True)
    assert fake.threads()[0]["resolved_by"] == "github-actions[bot]"
    fake.assert_no_failures()


def test_a_person_resolves_and_an_unknown_thread_is_not_found(fake: FakeGitHub) -> None:
    root = fake.add_review_comment("app.py", 5, "Off by one.")
    with pytest.raises(ValueError, match="may not resolve"):
        fake.person("dave", "read").resolve(root["id"])
    fake.person("bob", "write").resolve(root["id"])
    (thread,) = threads_of(graphql(client(fake), THREAD_IDS))["nodes"]
    assert (thread["isResolved"], thread["resolvedBy"]) == (True, {"login": "bob"})

    _, body = raw_graphql(fake, RESOLVE, id="nope")
    assert body["errors"][0]["type"] == "NOT_FOUND"
    assert (
        body["errors"][0]["message"] == "Could not resolve to a node with the global id of 'nope'"
    )


def test_replies_by_rest_and_graphql_join_the_thread(fake: FakeGitHub) -> None:
    root = fake.add_review_comment("app.py", 5, "Off by one.")
    gh = client(fake)
    pull = gh.get_repo("acme/shop").get_pull(7)
    by_replies = pull.create_review_comment_reply(root["id"], "Via /replies.")
    _, by_in_reply_to = gh.requester.requestJsonAndCheck(
        "POST",
        f"{fake.base_url}/repos/acme/shop/pulls/7/comments",
        input={"body": "Via in_reply_to, to a reply.", "in_reply_to": by_replies.id},
    )
    thread_id = fake.threads()[0]["id"]
    graphql(gh, REPLY, id=thread_id, body="Via GraphQL.")

    listed = [c for c in pull.get_review_comments() if c.id != root["id"]]
    assert [c.body for c in listed] == [
        "Via /replies.",
        "Via in_reply_to, to a reply.",
        "Via GraphQL.",
    ]
    assert {c.raw_data["in_reply_to_id"] for c in listed} == {root["id"]}  # always the root
    assert {c.path for c in listed} == {"app.py"}
    (thread,) = fake.threads()
    assert thread["comment_ids"] == [root["id"], by_replies.id, by_in_reply_to["id"], listed[2].id]
    fake.assert_no_failures()


def test_reactions_over_rest_and_in_reaction_groups(fake: FakeGitHub) -> None:
    root = fake.add_review_comment("app.py", 5, "Off by one.")
    summary = fake.add_issue_comment("Summary.")
    fake.person("carol").react(root["id"], "-1")
    gh = client(fake)
    comment = gh.get_repo("acme/shop").get_pull(7).get_review_comment(root["id"])
    first = comment.create_reaction("-1")
    again = comment.create_reaction("-1")
    assert first.id == again.id and first.content == "-1"
    statuses = [r.status for r in fake.requests_to("POST", "/repos/*/pulls/comments/*/reactions")]
    assert statuses == [201, 200]  # new, then the one that already existed
    gh.get_repo("acme/shop").get_issue(7).get_comment(summary["id"]).create_reaction("heart")
    assert fake.reactions(summary["id"]) == [("github-actions[bot]", "heart")]

    with pytest.raises(GithubException) as refused:
        comment.create_reaction("thumbsdown")
    assert refused.value.status == 422
    assert "is not one of" in refused.value.data["message"]

    groups_query = """{ repository(owner: "acme", name: "shop") { pullRequest(number: 7) {
      reviewThreads(first: 1) { nodes { comments(first: 1) { nodes { reactionGroups {
        content viewerHasReacted reactors(first: 10) { totalCount nodes { __typename
        ... on User { login } ... on Bot { login } } } users(first: 10) { nodes { login } }
      } } } } } } } }"""
    data = graphql(gh, groups_query)
    groups = threads_of(data)["nodes"][0]["comments"]["nodes"][0]["reactionGroups"]
    assert [g["content"] for g in groups] == [
        "THUMBS_UP", "THUMBS_DOWN", "LAUGH", "HOORAY", "CONFUSED", "HEART", "ROCKET", "EYES",
    ]  # fmt: skip
    down = groups[1]
    assert down["viewerHasReacted"] is True
    assert down["reactors"]["totalCount"] == 2
    assert down["reactors"]["nodes"] == [
        {"__typename": "User", "login": "carol"},
        {"__typename": "Bot", "login": "github-actions"},
    ]
    assert down["users"]["nodes"] == [{"login": "carol"}]
    assert groups[0]["reactors"]["totalCount"] == 0
    fake.assert_no_failures()


@pytest.mark.parametrize(
    ("role", "permission"),
    [
        ("admin", "admin"),
        ("maintain", "write"),
        ("write", "write"),
        ("triage", "read"),
        ("read", "read"),
        (None, "read"),  # not a collaborator: the public repository is readable
    ],
)
def test_the_collaborator_permission_endpoint(
    fake: FakeGitHub, role: str | None, permission: str
) -> None:
    if role is not None:
        fake.add_collaborator("bob", role)
    repo = client(fake).get_repo("acme/shop")
    assert repo.get_collaborator_permission("bob") == permission
    request = urllib.request.Request(
        f"{fake.base_url}/repos/acme/shop/collaborators/bob/permission",
        headers={"Authorization": "token t"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        body = json.loads(answer.read())
    assert body["permission"] == permission
    assert body["role_name"] == (role or "read")
    assert body["user"]["login"] == "bob"
    fake.assert_no_failures()


def test_comment_event_payloads(fake: FakeGitHub) -> None:
    root = fake.add_review_comment("app.py", 5, "Off by one.")
    carol = fake.person("carol")
    reply = carol.reply(root["id"], "Why?")
    event = fake.review_comment_event(reply)
    assert set(event) == {"action", "comment", "pull_request", "repository", "sender"}
    assert event["action"] == "created"
    assert event["comment"]["id"] == reply["id"]
    assert event["comment"]["in_reply_to_id"] == root["id"]
    assert (event["comment"]["path"], event["comment"]["line"]) == ("app.py", 5)
    assert event["comment"]["user"]["login"] == "carol"
    assert event["pull_request"]["number"] == 7
    assert event["repository"]["full_name"] == "acme/shop"
    assert event["sender"]["login"] == "carol"

    edited = carol.edit(reply["id"], "Why not?")
    event = fake.review_comment_event(edited, "edited", old_body="Why?")
    assert event["changes"] == {"body": {"from": "Why?"}}
    assert event["comment"]["body"] == "Why not?"

    said = carol.comment("@bot please explain")
    event = fake.issue_comment_event(said)
    assert set(event) == {"action", "comment", "issue", "repository", "sender"}
    assert event["issue"]["number"] == 7
    assert "pull_request" in event["issue"]  # a pull request's issue
    assert event["comment"]["body"] == "@bot please explain"
    with pytest.raises(ValueError, match="not one of"):
        fake.issue_comment_event(said, "opened")


def test_a_thread_is_outdated_when_its_line_changed(fake: FakeGitHub, pull_repo: GitRepo) -> None:
    changed = fake.add_review_comment("app.py", 5, "Off by one.")
    kept = fake.add_review_comment("app.py", 31, "Unused.")
    app = (pull_repo.root / "app.py").read_text().replace("line 5 changed\n", "line 5 fixed\n")
    pull_repo.write("app.py", app)
    fake.set_head(pull_repo.commit("fix"))
    outdated = {t["comment_ids"][0]: t["is_outdated"] for t in fake.threads()}
    assert outdated == {changed["id"]: True, kept["id"]: False}
    fake.set_thread_outdated(kept["id"])
    assert [t["isOutdated"] for t in _outdated_flags(fake)] == [True, True]
    fake.set_thread_outdated(kept["id"], None)
    assert [t["isOutdated"] for t in _outdated_flags(fake)] == [True, False]


def _outdated_flags(fake: FakeGitHub) -> list[dict[str, Any]]:
    query = """{ repository(owner: "acme", name: "shop") { pullRequest(number: 7) {
      reviewThreads(first: 10) { nodes { isOutdated line } } } } }"""
    return threads_of(graphql(client(fake), query))["nodes"]


def test_ghes_graphql_lives_at_api_graphql(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, prefix="/api/v3") as fake:
        fake.add_review_comment("app.py", 5, "Off by one.")
        gh = client(fake)
        assert gh.requester.graphql_url == f"{fake.url}/api/graphql"
        assert len(threads_of(graphql(gh, THREADS))["nodes"]) == 1
        fake.assert_no_failures()


def test_a_read_only_token_cannot_reply(pull_repo: GitRepo) -> None:
    with FakeGitHub(pull_repo.root, number=7, fork=True) as fake:
        fake.add_review_comment("app.py", 5, "Off by one.")
        (thread,) = threads_of(graphql(client(fake), THREADS))["nodes"]
        assert (thread["viewerCanReply"], thread["viewerCanResolve"]) == (False, False)
        _, body = raw_graphql(fake, REPLY, id=thread["id"], body="Hi")
        assert body["errors"][0]["type"] == "FORBIDDEN"
        assert len(fake.review_comments) == 1


def test_graphql_needs_a_token(fake: FakeGitHub) -> None:
    request = urllib.request.Request(
        fake.url + "/graphql", data=b'{"query": "{ id }"}', method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401


def test_the_vendored_schema_is_exactly_the_cut_subset() -> None:
    # Cutting the vendored file again changes nothing: it holds only the selected fields, in
    # GitHub's own words (a hand edit or a stale regeneration shows here).
    vendored = parse(SUBSET_FILE.read_text(encoding="utf-8"))
    assert print_ast(subset(vendored)) == print_ast(vendored)
