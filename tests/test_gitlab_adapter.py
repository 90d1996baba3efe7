"""The GitLab adapter (reviewer/gitlab/adapter.py) as the core's ChangeRequestForge, against the
fake GitLab over real HTTP."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from reviewer.findings import Finding
from reviewer.forge.interface import InlineComment, Permission
from reviewer.forge.signing import Signer
from reviewer.gitlab.adapter import GitLabMergeRequest
from reviewer.gitlab.client import GitLabClient
from reviewer.report.github import fingerprint_marker
from reviewer.testing.fake_gitlab import FakeGitLab
from tests.conftest import GitRepo
from tests.gitlab_fixtures import make_merge_request

SIGNER = Signer.from_secret("k", "acme/shop!3")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake(repo: GitRepo) -> Iterator[FakeGitLab]:
    make_merge_request(repo)
    with FakeGitLab(repo.root, project_id=7, iid=3) as it:
        yield it


def forge(fake: FakeGitLab) -> GitLabMergeRequest:
    return GitLabMergeRequest(GitLabClient(fake.url, fake.token, 7, 3, sleep=lambda s: None),
                              SIGNER)  # fmt: skip


def finding(path: str, line: int, *, side: str = "RIGHT", end_line: int | None = None,
            fingerprint: str = "f") -> Any:  # fmt: skip
    made = Finding(path, line, "high", "t", "b", end_line=end_line, side=side,  # type: ignore[arg-type]
                   fingerprint=fingerprint)  # fmt: skip
    signed = fingerprint_marker(hexed(fingerprint), SIGNER)
    return InlineComment(made, f"finding {fingerprint}\n{signed}")


def hexed(name: str) -> str:
    """A fingerprint as the pipeline writes them (16 hex digits), from a readable name."""
    return name.encode().hex().ljust(16, "0")[:16]


def test_inline_findings_land_by_line_role_and_refused_ones_are_kept(fake: FakeGitLab) -> None:
    mr = forge(fake)
    comments = [
        finding("app.py", 31, fingerprint="added"),
        finding("app.py", 5, side="LEFT", fingerprint="removed"),
        finding("app.py", 4, fingerprint="context"),
        finding("app.py", 31, end_line=32, fingerprint="range"),
        finding("new_name.py", 3, fingerprint="renamed"),
        finding("app.py", 20, fingerprint="outside"),
    ]
    bodies: list[tuple[int, list[str]]] = []

    def body_for(posted: int, refused: object) -> str:
        bodies.append((posted, [f.fingerprint for f in refused]))  # type: ignore[attr-defined]
        return "review body"

    result = mr.post_review(fake.head_sha, comments, body_for, "run-1")
    assert (result.posted, [f.fingerprint for f in result.refused]) == (5, ["outside"])
    assert bodies == []  # no note stands for the review on GitLab
    positions = [d["notes"][0].get("position") for d in fake.discussions]
    lines = [(p["old_path"], p["old_line"], p["new_line"]) for p in positions if p]
    assert lines == [("app.py", None, 31), ("app.py", 5, None), ("app.py", 4, 4),
                     ("app.py", None, 32), ("old_name.py", None, 3)]  # fmt: skip
    # The line GitLab did not take: a thread of its own, its place named, its text whole.
    outside = fake.discussions[-1]
    assert not outside["individual_note"] and "position" not in outside["notes"][0]
    assert outside["notes"][0]["body"].startswith("**On `app.py:20`**, not on the line itself")
    assert outside["notes"][0]["body"].endswith(finding("app.py", 20, fingerprint="outside").body)
    names = ("added", "removed", "context", "range", "renamed", "outside")
    assert mr.posted_fingerprints() == {hexed(name) for name in names}


def code(path: str, old_pos: int, new_pos: int) -> str:
    return f"{hashlib.sha1(path.encode()).hexdigest()}_{old_pos}_{new_pos}"


def test_ranges_of_every_kind_land_with_gitlabs_line_codes(fake: FakeGitLab) -> None:
    """Each end is GitLab's code of its line (the diff's running counters) and, for a
    changed line, its type; a context end has none. The fake refuses anything else, so a
    range that fell back to a plain note would show as refused here."""
    mr = forge(fake)
    comments = [
        finding("app.py", 31, end_line=32, fingerprint="added"),  # @@ -28,6 +28,8 @@
        finding("app.py", 2, end_line=4, fingerprint="context"),  # @@ -2,7 +2,7 @@
        finding("app.py", 4, side="LEFT", end_line=5, fingerprint="removed"),
        finding("app.py", 30, end_line=33, fingerprint="across"),  # context, added, context
        finding("new_name.py", 2, end_line=3, fingerprint="renamed"),
        finding("new.py", 1, end_line=1, fingerprint="one line"),
    ]
    result = mr.post_review(fake.head_sha, comments, lambda p, r: "body", "run-1")
    assert (result.posted, result.refused) == (6, ())
    ranges = [d["notes"][0]["position"]["line_range"] for d in fake.discussions
              if d["notes"][0].get("position")]  # fmt: skip
    assert ranges == [
        {"start": {"line_code": code("app.py", 31, 31), "type": "new"},
         "end": {"line_code": code("app.py", 31, 32), "type": "new"}},
        {"start": {"line_code": code("app.py", 2, 2)},
         "end": {"line_code": code("app.py", 4, 4)}},
        {"start": {"line_code": code("app.py", 4, 4)},
         "end": {"line_code": code("app.py", 5, 5), "type": "old"}},
        {"start": {"line_code": code("app.py", 30, 30)},
         "end": {"line_code": code("app.py", 31, 33)}},
        {"start": {"line_code": code("new_name.py", 2, 2)},
         "end": {"line_code": code("new_name.py", 4, 3), "type": "new"}},
        None,  # one line: no range
    ]  # fmt: skip


def test_people_roles_resolves_and_thumbs_down(fake: FakeGitLab) -> None:
    mr = forge(fake)
    mr.post_review(fake.head_sha, [finding("app.py", 31)], lambda p, r: "body", "run-1")
    thread = fake.discussions[0]
    fake.person("dana", "developer").award(thread["notes"][0]["id"])
    fake.person("rita", "reporter").reply(thread["id"], "won't fix")
    threads = mr.threads()
    assert [t.comments[0].reactions for t in threads] == [{"-1": ("dana",)}]
    assert threads[0].viewer_can_resolve and threads[0].reply_to == thread["id"]
    assert mr.permission("dana") == Permission.WRITE
    assert mr.permission("rita") == Permission.TRIAGE
    assert mr.permission("nobody") == Permission.NONE
    assert mr.resolve_thread(thread["id"])
    assert mr.threads()[0].is_resolved


def test_the_summary_is_created_then_edited_in_place(fake: FakeGitLab) -> None:
    mr = forge(fake)
    first = mr.upsert_summary(None, "summary 1")
    existing = next(c for c in mr.conversation_comments() if mr.is_ours(c.author))
    second = mr.upsert_summary(existing, "summary 2")
    assert first == second and first.endswith(f"#note_{existing.id}")
    assert [c.body for c in mr.conversation_comments()] == ["summary 2"]


def test_a_token_that_may_not_resolve_says_false(repo: GitRepo) -> None:
    make_merge_request(repo)
    with FakeGitLab(repo.root, project_id=7, iid=3, bot_access_level=20) as fake:
        thread = fake.person("dana", "developer").note("x")
        del thread
        mr = forge(fake)
        mr.post_review(fake.head_sha, [finding("app.py", 31)], lambda p, r: "body", "run-1")
        assert not mr.threads()[0].viewer_can_resolve
        assert mr.resolve_thread(fake.discussions[1]["id"]) is False
