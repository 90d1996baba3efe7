"""The fake GitLab answers the real python-gitlab over real HTTP as GitLab documents.

Each test cites the page of GitLab's REST API documentation it checks.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import gitlab
import pytest
import requests

from reviewer.testing.fake_gitlab import ActionRefused, FakeGitLab
from tests.conftest import GitRepo
from tests.gitlab_fixtures import make_merge_request

LINE_CODE = (
    "400 Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}"
)
SCHEMA = '400 Bad request - Note {:position=>["must be a valid json schema"]}'


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake(repo: GitRepo) -> Iterator[FakeGitLab]:
    make_merge_request(repo)
    with FakeGitLab(repo.root, project="acme/shop", project_id=7, iid=3, author="alice") as it:
        yield it


def client(fake: FakeGitLab, **options: Any) -> gitlab.Gitlab:
    return gitlab.Gitlab(fake.url, private_token=fake.token, **options)


def merge_request(fake: FakeGitLab) -> Any:
    return client(fake).projects.get("acme/shop", lazy=True).mergerequests.get(3)


def position(mr: Any, **lines: Any) -> dict[str, Any]:
    paths = {"old_path": "app.py", "new_path": "app.py"}
    return {"position_type": "text", **mr.diff_refs, **paths, **lines}


def refused(mr: Any, pos: dict[str, Any]) -> tuple[int, str]:
    with pytest.raises(gitlab.GitlabCreateError) as caught:
        mr.discussions.create({"body": "x", "position": pos})
    return caught.value.response_code, str(caught.value.error_message)


def test_project_by_id_or_encoded_path_and_the_merge_request(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/rest/#namespaced-paths and https://docs.gitlab.com/api/merge_requests/#get-single-mr
    gl = client(fake)
    assert gl.projects.get(7).path_with_namespace == "acme/shop"
    assert gl.projects.get("acme/shop").id == 7
    mr = merge_request(fake)
    assert (mr.iid, mr.title, mr.author["username"]) == (3, "Change things", "alice")
    assert mr.sha == fake.head_sha == mr.diff_refs["head_sha"]
    assert set(mr.diff_refs) == {"base_sha", "start_sha", "head_sha"}
    assert mr.source_project_id == mr.target_project_id == 7
    assert mr.web_url.endswith("/acme/shop/-/merge_requests/3")
    changes = {c["new_path"]: c for c in mr.changes()["changes"]}
    assert changes["new_name.py"]["old_path"] == "old_name.py"
    assert changes["new_name.py"]["renamed_file"] and changes["new.py"]["new_file"]
    assert changes["app.py"]["diff"].startswith("@@ -2,7 +2,7 @@")
    with pytest.raises(gitlab.GitlabGetError) as caught:
        gl.projects.get("acme/other")
    assert (caught.value.response_code, caught.value.error_message) == (
        404, "404 Project Not Found"
    )


def test_tokens_private_token_bearer_and_401(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/rest/authentication/ and https://docs.gitlab.com/api/users/#get-the-current-user
    gl = client(fake)
    gl.auth()
    assert gl.user is not None and gl.user.username == "project_7_bot" and gl.user.bot
    bearer = requests.get(
        f"{fake.api_url}/user", headers={"Authorization": f"Bearer {fake.token}"}, timeout=10
    )
    assert bearer.json()["username"] == "project_7_bot"
    anonymous = requests.get(f"{fake.api_url}/user", timeout=10)
    assert (anonymous.status_code, anonymous.json()) == (401, {"message": "401 Unauthorized"})
    with pytest.raises(gitlab.GitlabAuthenticationError):
        gitlab.Gitlab(fake.url, private_token="wrong").auth()
    # A private project is not there for an anonymous reader.
    hidden = requests.get(f"{fake.api_url}/projects/7", timeout=10)
    assert hidden.status_code == 404


def test_a_read_api_token_cannot_write(repo: GitRepo) -> None:
    # https://docs.gitlab.com/api/rest/authentication/ (scopes): 403 insufficient_scope
    make_merge_request(repo)
    with FakeGitLab(repo.root, token_scope="read_api") as fake:
        mr = client(fake).projects.get(7, lazy=True).mergerequests.get(1)
        with pytest.raises(gitlab.GitlabCreateError) as caught:
            mr.notes.create({"body": "hello"})
        assert caught.value.response_code == 403
        assert json.loads(caught.value.response_body)["error"] == "insufficient_scope"


def test_positions_by_the_line_role_in_the_diff(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/discussions/#create-a-new-thread-in-the-merge-request-diff
    # An added line has
    # new_line only, a removed line old_line only, an unchanged line both.
    mr = merge_request(fake)
    added = mr.discussions.create({"body": "added", "position": position(mr, new_line=31)})
    removed = mr.discussions.create({"body": "gone", "position": position(mr, old_line=5)})
    context = mr.discussions.create(
        {"body": "same", "position": position(mr, old_line=4, new_line=4)}
    )
    renamed = mr.discussions.create({"body": "renamed", "position": {
        **position(mr, new_line=3), "old_path": "old_name.py", "new_path": "new_name.py"}})
    notes = [d.attributes["notes"][0] for d in (added, removed, context, renamed)]
    assert [n["type"] for n in notes] == ["DiffNote"] * 4
    assert [(n["position"]["old_line"], n["position"]["new_line"]) for n in notes] == [
        (None, 31), (5, None), (4, 4), (None, 3)
    ]
    assert all(n["resolvable"] and not n["resolved"] for n in notes)


def test_a_position_not_on_the_diff_is_refused_like_gitlab(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/discussions/#create-a-new-thread-in-the-merge-request-diff
    # The 400's text is
    # DiffNote's validation (gitlabhq app/models/diff_note.rb), as reported by bots.
    mr = merge_request(fake)
    assert refused(mr, position(mr, new_line=4)) == (400, LINE_CODE)  # context: both needed
    assert refused(mr, position(mr, new_line=20)) == (400, LINE_CODE)  # not in a hunk
    assert refused(mr, position(mr, old_line=5, new_line=5)) == (400, LINE_CODE)
    status, text = refused(mr, position(mr))
    assert status == 400 and ':position=>["is incomplete"]' in text
    stale = {**position(mr, new_line=31), "head_sha": "0" * 40}
    assert refused(mr, stale) == (400, LINE_CODE)
    missing = position(mr, new_line=31)
    del missing["head_sha"]
    assert refused(mr, missing) == (400, "position[head_sha] is missing")
    assert fake.discussions == []  # nothing stored on a 400


def code(path: str, old_pos: int, new_pos: int) -> str:
    """GitLab's line code, written out here from doc/api/discussions.md ("Line code"):
    the SHA1 of the file name, the line's old-side and new-side positions."""
    return f"{hashlib.sha1(path.encode()).hexdigest()}_{old_pos}_{new_pos}"


def ranged(mr: Any, start: dict[str, Any], end: dict[str, Any], **lines: Any) -> dict[str, Any]:
    return {**position(mr, **lines), "line_range": {"start": start, "end": end}}


def test_a_line_range_with_gitlabs_line_codes_and_types(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/discussions/#parameters-for-multiline-comments: each end is
    # `line_code` and `type`. The codes are the diff's running counters (gitlabhq
    # lib/gitlab/diff/parser.rb, lib/gitlab/diff/line_code.rb): in app.py's second hunk
    # (@@ -28,6 +28,8 @@) the added lines 31 and 32 were inserted at old position 31, so
    # they are _31_31 and _31_32; the context line after them is old 31, new 33.
    mr = merge_request(fake)
    added = ranged(mr, {"line_code": code("app.py", 31, 31), "type": "new"},
                   {"line_code": code("app.py", 31, 32), "type": "new"}, new_line=32)  # fmt: skip
    made = mr.discussions.create({"body": "range", "position": added})
    stored = made.attributes["notes"][0]["position"]
    # Stored as sent: an API-made range has no line numbers in its ends (gitlab#392800).
    assert stored["line_range"] == added["line_range"]
    assert (stored["old_line"], stored["new_line"]) == (None, 32)
    # A context line's end has no type (tuicr#598); a removed line's is `old`, and a removed
    # line sits before the new-side counter: line 5 removed at new position 5, the line that
    # replaces it added at old position 6.
    context = ranged(mr, {"line_code": code("app.py", 30, 30)},
                     {"line_code": code("app.py", 31, 33)}, old_line=31, new_line=33)  # fmt: skip
    changed = ranged(mr, {"line_code": code("app.py", 5, 5), "type": "old"},
                     {"line_code": code("app.py", 6, 5), "type": "new"}, new_line=5)  # fmt: skip
    assert mr.discussions.create({"body": "context", "position": context}).id
    assert mr.discussions.create({"body": "changed", "position": changed}).id
    backwards = ranged(mr, added["line_range"]["end"], added["line_range"]["start"],
                       new_line=31)  # fmt: skip
    assert refused(mr, backwards) == (400, LINE_CODE)


def test_line_numbers_in_a_ranges_ends_are_refused_as_gitlab_refuses_them(
    fake: FakeGitLab,
) -> None:
    # lib/api/discussions.rb declares the ends' old_line/new_line String, position.json wants
    # integers: 400 "must be a valid json schema" (gitlab-org/gitlab#571619, #572121, MR
    # !208052; agavra/tuicr#557; up to 17.7 the ends take no such key at all:
    # harrisoncramer/gitlab.nvim#588). Nothing is stored.
    mr = merge_request(fake)
    start = {"line_code": code("app.py", 31, 31), "type": "new"}
    end = {"line_code": code("app.py", 31, 32), "type": "new"}
    for extra in ({"new_line": 32}, {"old_line": None}, {"new_line": "32"}, {"line": 32}):
        numbered = ranged(mr, start, {**end, **extra}, new_line=32)
        assert refused(mr, numbered) == (400, SCHEMA), extra
    assert fake.discussions == []


def test_line_codes_other_than_gitlabs_are_refused(fake: FakeGitLab) -> None:
    # The client-side mistake of issue 33 (and of tuicr#598 before its fix): `_0_NEW` for
    # an added line, a type on a context line, a type that is not the line's role.
    mr = merge_request(fake)
    wrong = [
        ({"line_code": code("app.py", 0, 31), "type": "new"},
         {"line_code": code("app.py", 0, 32), "type": "new"}, {"new_line": 32}),
        ({"line_code": code("app.py", 30, 30), "type": "old"},
         {"line_code": code("app.py", 31, 33)}, {"old_line": 31, "new_line": 33}),
        ({"line_code": code("app.py", 31, 31), "type": "old"},
         {"line_code": code("app.py", 31, 32), "type": "new"}, {"new_line": 32}),
        ({"line_code": code("app.py", 31, 31)},
         {"line_code": code("app.py", 31, 32), "type": "new"}, {"new_line": 32}),
        # The right codes, but the range does not end on the position's own line.
        ({"line_code": code("app.py", 31, 31), "type": "new"},
         {"line_code": code("app.py", 31, 32), "type": "new"}, {"new_line": 31}),
    ]  # fmt: skip
    for start, end, lines in wrong:
        assert refused(mr, ranged(mr, start, end, **lines)) == (400, LINE_CODE), start
    assert fake.discussions == []


def test_an_independent_client_checks_the_same_rules_over_plain_http(fake: FakeGitLab) -> None:
    """Not python-gitlab: the requests a reader of GitLab's docs would write by hand."""
    api = f"{fake.api_url}/projects/{quote('acme/shop', safe='')}/merge_requests/3"
    headers = {"PRIVATE-TOKEN": fake.token}
    refs = requests.get(api, headers=headers, timeout=10).json()["diff_refs"]
    # A new file's hunk is @@ -0,0 +1 @@: its added line is at old position 0.
    diffs = requests.get(f"{api}/diffs", headers=headers, timeout=10).json()
    assert {d["new_path"]: d["diff"].split("\n", 1)[0] for d in diffs}["new.py"] == (
        "@@ -0,0 +1 @@"
    )
    renamed = {"position_type": "text", **refs, "old_path": "old_name.py",
               "new_path": "new_name.py", "new_line": 3, "line_range": {
                   "start": {"line_code": code("new_name.py", 3, 3), "type": "old"},
                   "end": {"line_code": code("new_name.py", 4, 3), "type": "new"}}}  # fmt: skip
    posted = requests.post(f"{api}/discussions", headers=headers, timeout=10,
                           json={"body": "renamed", "position": renamed})  # fmt: skip
    assert posted.status_code == 201, posted.text
    numbered = {**renamed, "line_range": {
        "start": {**renamed["line_range"]["start"], "old_line": 3},
        "end": renamed["line_range"]["end"]}}  # fmt: skip
    schema = requests.post(f"{api}/discussions", headers=headers, timeout=10,
                           json={"body": "numbers", "position": numbered})  # fmt: skip
    assert (schema.status_code, schema.json()) == (400, {"message": SCHEMA})
    zero = {**renamed, "line_range": {
        "start": {"line_code": code("new_name.py", 0, 3), "type": "new"},
        "end": renamed["line_range"]["end"]}}  # fmt: skip
    blank = requests.post(f"{api}/discussions", headers=headers, timeout=10,
                          json={"body": "zero", "position": zero})  # fmt: skip
    assert (blank.status_code, blank.json()) == (400, {"message": LINE_CODE})
    assert [d["notes"][0]["body"] for d in fake.discussions] == ["renamed"]


def test_reply_resolve_and_who_may_resolve(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/discussions/#add-note-to-existing-merge-request-thread and
    # https://docs.gitlab.com/api/discussions/#resolve-a-merge-request-thread
    # (Developer and above, or the author)
    mr = merge_request(fake)
    thread = mr.discussions.create({"body": "bug", "position": position(mr, new_line=31)})
    reply = thread.notes.create({"body": "more"})
    assert reply.type == "DiffNote" and reply.position["new_line"] == 31
    with pytest.raises(ActionRefused) as caught:
        fake.person("rita", "reporter").resolve(thread.id)
    assert caught.value.status == 403
    fake.person("dana", "developer").resolve(thread.id)
    notes = fake.discussions[0]["notes"]
    assert notes[0]["resolved"] and notes[0]["resolved_by"]["username"] == "dana"
    # `resolved_by` is a user (lib/api/entities/note.rb: `expose :resolved_by, using:
    # Entities::UserBasic`): its id is what members/all/:user_id takes, for someone who
    # wrote no note and gave no award.
    by = notes[0]["resolved_by"]
    assert by["id"] == fake.user_id("dana")
    member = requests.get(f"{fake.api_url}/projects/7/members/all/{by['id']}",
                          headers={"PRIVATE-TOKEN": fake.token}, timeout=10)  # fmt: skip
    assert (member.json()["username"], member.json()["access_level"]) == ("dana", 30)
    mr.discussions.update(thread.id, {"resolved": False})  # the bot is a Maintainer
    assert not fake.discussions[0]["notes"][0]["resolved"]
    fake.person("alice").resolve(thread.id)  # the author
    assert fake.discussions[0]["notes"][0]["resolved"]


def test_notes_edits_order_and_pagination(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/notes/#list-all-merge-request-notes (newest first),
    # https://docs.gitlab.com/api/notes/#modify-existing-merge-request-note (author only),
    # https://docs.gitlab.com/api/rest/#pagination (headers and Link)
    mr = merge_request(fake)
    summary = mr.notes.create({"body": "summary"})
    for number in range(3):
        fake.person("dana", "developer").note(f"note {number}")
    mr.notes.update(summary.id, {"body": "summary, edited"})
    assert [n.body for n in mr.notes.list(get_all=True, per_page=2)] == [
        "note 2", "note 1", "note 0", "summary, edited"
    ]
    raw = requests.get(
        f"{fake.api_url}/projects/7/merge_requests/3/notes",
        params={"per_page": 3, "sort": "asc"},
        headers={"PRIVATE-TOKEN": fake.token},
        timeout=10,
    )
    assert (raw.headers["x-total"], raw.headers["x-total-pages"], raw.headers["x-next-page"]) == (
        "4", "2", "2"
    )
    assert 'rel="next"' in raw.headers["link"] and raw.json()[0]["body"] == "summary, edited"
    other = fake.discussions[1]["notes"][0]["id"]
    with pytest.raises(gitlab.GitlabUpdateError) as caught:
        mr.notes.update(other, {"body": "not yours"})
    assert caught.value.response_code == 403
    with pytest.raises(gitlab.GitlabCreateError) as empty:
        mr.notes.create({"body": ""})
    assert (empty.value.response_code, empty.value.error_message) == (400, "body is missing")


def test_award_emoji_on_notes(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/emoji_reactions/#add-a-new-emoji-reaction-to-a-comment
    mr = merge_request(fake)
    thread = mr.discussions.create({"body": "bug", "position": position(mr, new_line=31)})
    note_id = thread.attributes["notes"][0]["id"]
    fake.person("dana", "developer").award(note_id)
    awards = mr.notes.get(note_id).awardemojis.list()
    assert [(a.name, a.user["username"], a.awardable_type) for a in awards] == [
        ("thumbsdown", "dana", "Note")
    ]
    with pytest.raises(ActionRefused) as caught:
        fake.person("dana").award(note_id)
    assert caught.value.body == {"message": "404 Award Emoji Name has already been taken"}


def test_members_and_access_levels(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/api/members/#get-a-member-of-a-group-or-project-including-inherited-and-invited-members
    project = client(fake).projects.get(7, lazy=True)
    fake.add_member("rita", "reporter")
    assert project.members_all.get(fake.user_id("rita")).access_level == 20
    assert project.members_all.get(fake.user_id("alice")).access_level == 30
    with pytest.raises(gitlab.GitlabGetError) as caught:
        project.members_all.get(fake.user_id("stranger"))
    assert (caught.value.response_code, caught.value.error_message) == (404, "404 Not found")


def test_a_push_is_a_new_version_with_new_diff_refs(fake: FakeGitLab, repo: GitRepo) -> None:
    # https://docs.gitlab.com/api/merge_requests/#get-merge-request-diff-versions (newest first)
    mr = merge_request(fake)
    old_refs = mr.diff_refs
    repo.write("new.py", "print('hi again')\n")
    head = repo.commit("fix")
    fake.push()
    mr = merge_request(fake)
    assert mr.diff_refs["head_sha"] == head and mr.diff_refs["base_sha"] == old_refs["base_sha"]
    assert [v.head_commit_sha for v in mr.diffs.list()] == [head, old_refs["head_sha"]]
    # A thread may still be placed on an older version, with that version's refs.
    older = {**position(mr, new_line=31), **old_refs}
    assert mr.discussions.create({"body": "old", "position": older}).id


def test_a_429_carries_retry_after_and_does_nothing(fake: FakeGitLab) -> None:
    # https://docs.gitlab.com/security/rate_limits/ (429, Retry-After, RateLimit-* headers)
    fake.rate_limit("POST", "*/notes", retry_after=1)
    raw = requests.post(
        f"{fake.api_url}/projects/7/merge_requests/3/notes",
        json={"body": "hi"},
        headers={"PRIVATE-TOKEN": fake.token},
        timeout=10,
    )
    assert (raw.status_code, raw.headers["retry-after"], raw.text) == (429, "1", "Retry later\n")
    assert fake.discussions == []


def test_the_program_keeps_its_state_across_restarts(repo: GitRepo, tmp_path: Path) -> None:
    make_merge_request(repo)
    state = tmp_path / "state.json"
    env_file = tmp_path / "job.env"

    def start() -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reviewer.testing.fake_gitlab", "--repo", str(repo.root),
             "--state", str(state), "--env", str(env_file)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        line = proc.stdout.readline()
        while line and not line.startswith("http"):
            line = proc.stdout.readline()
        assert line.startswith("http"), "the fake ended without printing its URL"
        return proc, line.strip()

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "reviewer.testing.fake_gitlab", *args],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return done.stdout

    proc, url = start()
    try:
        gl = gitlab.Gitlab(url, private_token="glpat-fake")
        mr = gl.projects.get(7, lazy=True).mergerequests.get(1)
        thread = mr.discussions.create({"body": "bug", "position": {
            "position_type": "text", **mr.diff_refs, "old_path": "app.py",
            "new_path": "app.py", "new_line": 31}})  # fmt: skip
        run("act", "dana", "--role", "developer", "--url", url, "resolve", thread.id)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    proc, url = start()
    try:
        gl = gitlab.Gitlab(url, private_token="glpat-fake")
        mr = gl.projects.get(7, lazy=True).mergerequests.get(1)
        kept = mr.discussions.list(get_all=True)
        assert [d.id for d in kept] == [thread.id]
        assert kept[0].attributes["notes"][0]["resolved_by"]["username"] == "dana"
        repo.write("new.py", "print('pushed')\n")
        head = repo.commit("push")
        assert "pushed" in run("push", "--url", url)
        # The control answer comes after the state file was rewritten, and the job's
        # environment (--env) with it: the pipeline of the push has another commit.
        assert json.loads(state.read_text())["versions"][-1]["head_sha"] == head
        exports = dict(line.removeprefix("export ").split("=", 1)
                       for line in env_file.read_text().splitlines())  # fmt: skip
        assert exports["CI_COMMIT_SHA"] == head
        base = repo.git("merge-base", "main", head).strip()
        assert exports["CI_MERGE_REQUEST_DIFF_BASE_SHA"] == base
        assert (exports["CI_API_V4_URL"], exports["CI_PROJECT_ID"]) == (f"{url}/api/v4", "7")
        # A discussion is named by its id or by one of its notes' ids.
        note = kept[0].attributes["notes"][0]["id"]
        run("act", "erin", "--role", "developer", "--url", url, "reply", str(note), "thanks")
        notes = mr.discussions.get(thread.id).attributes["notes"]
        assert [n["body"] for n in notes] == ["bug", "thanks"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
