"""The GitLab client (python-gitlab, its only importer) against the fake GitLab over real HTTP:
each call, each error, and retries that never post twice."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest

from reviewer.gitlab.client import (
    GitLabClient,
    GitLabError,
    Position,
    RangeEnd,
    ReadOnlyToken,
    RefusedPosition,
)
from reviewer.testing.fake_gitlab import FakeGitLab
from tests.conftest import GitRepo
from tests.gitlab_fixtures import make_merge_request


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake(repo: GitRepo) -> Iterator[FakeGitLab]:
    make_merge_request(repo)
    with FakeGitLab(repo.root, project="acme/shop", project_id=7, iid=3) as it:
        yield it


def make_client(fake: FakeGitLab, waits: list[float], token: str | None = None) -> GitLabClient:
    return GitLabClient(fake.url, token or fake.token, "acme/shop", 3, sleep=waits.append)


def test_reads_the_merge_request_and_who_the_token_is(fake: FakeGitLab) -> None:
    client = make_client(fake, [])
    info = client.merge_request()
    assert (info.iid, info.author, info.sha) == (3, "alice", fake.head_sha)
    assert info.diff_refs.head_sha == fake.head_sha and not info.is_fork
    assert client.me() == (fake.user_id("project_7_bot"), "project_7_bot")
    assert client.access_level(fake.user_id("alice")) == 30
    assert client.access_level(fake.user_id("nobody")) == 0


def test_inline_discussions_replies_resolve_and_awards(fake: FakeGitLab) -> None:
    client = make_client(fake, [])
    refs = client.merge_request().diff_refs
    added = client.post_discussion("added", Position("app.py", "app.py", None, 31), refs)
    removed = client.post_discussion("removed", Position("app.py", "app.py", 5, None), refs)
    sha = hashlib.sha1(b"app.py").hexdigest()  # lines 31-32 added at old position 31
    ends = (RangeEnd(f"{sha}_31_31", "new"), RangeEnd(f"{sha}_31_32", "new"))
    ranged = client.post_discussion("range", Position("app.py", "app.py", None, 32, ends), refs)
    assert added.resolvable and not added.resolved and added.position is not None
    assert removed.position is not None and removed.position["old_line"] == 5
    assert ranged.position is not None
    assert ranged.position["line_range"]["start"] == {"line_code": f"{sha}_31_31", "type": "new"}
    reply = client.reply(added.id, "fixed")
    client.resolve(added.id)
    fake.person("dana", "developer").award(removed.notes[0].id)
    fake.person("dana").reply(removed.id, "won't fix")
    threads = {d.id: d for d in client.discussions()}
    assert threads[added.id].resolved and threads[added.id].resolved_by == "project_7_bot"
    assert [n.id for n in threads[added.id].notes][1] == reply.id
    assert [(a.name, a.username) for a in threads[removed.id].notes[0].awards] == [
        ("thumbsdown", "dana")
    ]
    assert threads[removed.id].notes[1].body == "won't fix"


def test_a_refused_position_is_a_typed_error_and_nothing_is_posted(fake: FakeGitLab) -> None:
    client = make_client(fake, [])
    refs = client.merge_request().diff_refs
    with pytest.raises(RefusedPosition, match="line_code"):
        client.post_discussion("context", Position("app.py", "app.py", None, 4), refs)
    assert fake.discussions == []
    # The caller's fallback: the same finding as a discussion without a position.
    assert client.post_discussion("on the file", None, refs).notes[0].body == "on the file"


def test_the_summary_note_is_created_then_edited(fake: FakeGitLab) -> None:
    client = make_client(fake, [])
    note = client.create_note("summary 1")
    edited = client.edit_note(note.id, "summary 2")
    assert (edited.id, edited.body) == (note.id, "summary 2")
    assert [d["notes"][0]["body"] for d in fake.discussions] == ["summary 2"]


def test_a_429_waits_as_gitlab_says_and_posts_once(fake: FakeGitLab) -> None:
    waits: list[float] = []
    fake.rate_limit("POST", "*/notes", retry_after=7)
    make_client(fake, waits).create_note("summary")
    assert waits == [7.0]
    assert [d["notes"][0]["body"] for d in fake.discussions] == ["summary"]


def test_a_retry_after_too_long_fails_without_waiting(fake: FakeGitLab) -> None:
    waits: list[float] = []
    fake.rate_limit("GET", "*", retry_after=3600)
    with pytest.raises(GitLabError, match="429"):
        make_client(fake, waits).merge_request()
    assert waits == []


def test_a_5xx_after_the_note_was_stored_does_not_post_it_twice(fake: FakeGitLab) -> None:
    """python-gitlab with retry_transient_errors would POST again: two summaries."""
    waits: list[float] = []
    fake.inject("POST", "*/discussions", 502, persist=True)
    client = make_client(fake, waits)
    refs = client.merge_request().diff_refs
    posted = client.post_discussion("bug", Position("app.py", "app.py", None, 31), refs)
    assert waits == [2.0] and posted.notes[0].body == "bug"
    assert len(fake.discussions) == 1
    fake.inject("POST", "*/notes", 503, persist=True)
    client.create_note("summary")
    fake.inject("POST", "*/discussions/*/notes", 500, persist=True)
    client.reply(posted.id, "fixed")
    bodies = [n["body"] for d in fake.discussions for n in d["notes"]]
    assert sorted(bodies) == ["bug", "fixed", "summary"]


def test_a_5xx_before_the_note_was_stored_posts_it_once(fake: FakeGitLab) -> None:
    waits: list[float] = []
    fake.inject("POST", "*/notes", 502)
    make_client(fake, waits).create_note("summary")
    assert waits == [2.0]
    assert [d["notes"][0]["body"] for d in fake.discussions] == ["summary"]
    assert len(fake.requests_to("POST", "/notes")) == 2


def test_a_bad_token_and_a_read_only_token_say_what_to_do(repo: GitRepo) -> None:
    make_merge_request(repo)
    with FakeGitLab(repo.root, iid=3, token_scope="read_api") as fake:
        with pytest.raises(GitLabError, match="401") as bad:
            make_client(fake, [], token="wrong").merge_request()
        assert "api scope" in str(bad.value)
        with pytest.raises(ReadOnlyToken, match=r"insufficient_scope|403"):
            make_client(fake, []).create_note("summary")
        assert fake.discussions == []


def test_a_404_is_not_retried(fake: FakeGitLab) -> None:
    waits: list[float] = []
    client = GitLabClient(fake.url, fake.token, "acme/other", 3, sleep=waits.append)
    with pytest.raises(GitLabError, match="404"):
        client.merge_request()
    assert waits == []
