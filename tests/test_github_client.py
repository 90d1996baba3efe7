"""GitHubClient's calls for the conversation on a pull request, over real HTTP to the fake:
who may act (the collaborator permission endpoint), replies in a thread, PR comments."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reviewer.forge.signing import Signer
from reviewer.github.client import GitHubClient
from reviewer.testing.fake_github import FakeGitHub
from tests.test_fake_github_graphql import pull_repo  # noqa: F401  (fixture)


@pytest.fixture
def fake(pull_repo) -> Iterator[FakeGitHub]:  # type: ignore[no-untyped-def]  # noqa: F811
    with FakeGitHub(pull_repo.root, number=7, title="Add things", author="alice") as server:
        yield server


def _client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient(
        fake.base_url, "t", "acme/shop", signer=Signer.from_secret("k", "acme/shop#7")
    )


def test_permission_folds_roles_and_is_asked_once_per_login(
    fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    for login, role in (("ada", "admin"), ("max", "maintain"), ("wes", "write"), ("tri", "triage")):
        fake.add_collaborator(login, role)
    client = _client(fake)
    asked = len(fake.requests)
    assert [client.permission(x) for x in ("ada", "max", "wes", "tri", "stranger")] == [
        "admin",
        "write",
        "write",
        "read",
        "read",  # a public repository: anyone reads (GitHub's answer for a non-collaborator)
    ]
    assert [client.may_write(x) for x in ("ada", "max", "wes", "tri", "stranger")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert len(fake.requests) - asked == 5  # the second round was answered from memory


def test_a_reply_joins_the_thread_and_a_comment_goes_to_the_conversation(
    fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    root = fake.add_review_comment("app.py", 5, "Off by one.")
    client = _client(fake)
    pull = client.pull(7)
    url = client.reply_in_thread(pull, root["id"], "Fixed in `abc1234`.")
    (thread,) = fake.threads()
    assert len(thread["comment_ids"]) == 2 and url.startswith("http")
    client.comment_on_pull(pull, "An answer.")
    assert [c.body for c in pull.get_issue_comments()][-1] == "An answer."
    fake.assert_no_failures()
