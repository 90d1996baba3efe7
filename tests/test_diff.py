"""The diff module: git's patches parsed into files, hunks and lines, and GitHub's line rule.

Every case runs on a diff made by real git in a temp repository, and every parsed change is
replayed against the blobs git holds (`check_replay`): the context and added lines of each
hunk must be exactly the new file's lines at those numbers, the context and deleted lines the
old file's. Golden files in tests/golden/diff/ pin the whole parsed structure of a few
representative repositories; each line is written `kind[!] old new |text`, where `!` marks
"\\ No newline at end of file" and `-` an absent number. To accept a deliberate change, run
`REVIEWER_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_diff.py` and commit the new files.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import reviewer.change.load
from reviewer.change import (
    MAX_FILE_PATCH_BYTES,
    Change,
    DiffLine,
    FileChange,
    PatchError,
    load_change,
    merge_base,
    parse_patch,
    unquote,
)
from reviewer.change.load import added_file, split_raw
from reviewer.errors import ReviewerError
from tests.conftest import GIT_IDENTITY, GitRepo

GOLDEN = Path(__file__).parent / "golden" / "diff"
MakeRepo = Callable[[str], GitRepo]

# Names that break naive parsers: spaces, quotes, tabs, a newline, a backslash, unicode,
# latin-1 bytes (not UTF-8), a leading dash, and " b/" inside a name.
WEIRD_NAMES = [
    "with space.txt",
    'say "hi".txt',
    "tab\there.txt",
    "new\nline.txt",
    "back\\slash.txt",
    "ünï/cödé ☃.txt",
    os.fsdecode(b"caf\xe9.txt"),
    "-dash.txt",
    "x b/y.txt",
]


# --- helpers ----------------------------------------------------------------------------


def git_bytes(repo: GitRepo, *args: str) -> bytes:
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(
        ["git", *args], cwd=repo.root, env=env, capture_output=True, check=True
    ).stdout


def file_lines(data: bytes) -> list[str]:
    """A file's lines as the parser reports them: split on \\n only, CRLF's \\r dropped."""
    parts = data.split(b"\n")
    complete = parts[-1] == b""
    if complete:
        parts.pop()
    out = [p[:-1] if p.endswith(b"\r") else p for p in parts]
    if not complete and parts:
        out[-1] = parts[-1]  # no line ending at all: a \r there is content
    return [p.decode("utf-8", "replace") for p in out]


def read_blobs(repo: GitRepo, specs: list[str]) -> dict[str, bytes]:
    """`rev:path` -> content, in one `git cat-file --batch` (a name with a newline aside)."""
    found = {spec: git_bytes(repo, "show", spec) for spec in specs if "\n" in spec}
    batch = [spec for spec in specs if "\n" not in spec]
    if batch:
        out = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=repo.root,
            input=b"".join(os.fsencode(spec) + b"\n" for spec in batch),
            capture_output=True,
            check=True,
        ).stdout
        pos = 0
        for spec in batch:
            header_end = out.index(b"\n", pos)
            size = int(out[pos:header_end].split()[2])
            found[spec] = out[header_end + 1 : header_end + 1 + size]
            pos = header_end + 1 + size + 1
    return found


def side_content(repo: GitRepo, blobs: dict[str, bytes], rev: str | None, f: FileChange) -> bytes:
    if rev is not None:
        return blobs[f"{rev}:{f.path}"]
    full = repo.root / f.path
    return os.fsencode(os.readlink(full)) if f.new_mode == "120000" else full.read_bytes()


def check_replay(repo: GitRepo, change: Change) -> int:
    """Replay every hunk against both sides' blobs; return how many lines were checked."""
    checked = 0
    replayed = [f for f in change.files if f.hunks and "160000" not in (f.old_mode, f.new_mode)]
    specs = [f"{change.base}:{f.old_path}" for f in replayed if f.status != "added"]
    if change.head is not None:
        specs += [f"{change.head}:{f.path}" for f in replayed if f.status != "deleted"]
    blobs = read_blobs(repo, specs)
    for f in change.files:
        assert f.additions == sum(d.kind == "add" for h in f.hunks for d in h.lines)
        assert f.deletions == sum(d.kind == "del" for h in f.hunks for d in h.lines)
    for f in replayed:
        new = old = b""
        if f.status != "deleted":
            new = side_content(repo, blobs, change.head, f)
        if f.status != "added":
            old = blobs[f"{change.base}:{f.old_path}"]
        new_lines, old_lines = file_lines(new), file_lines(old)
        for hunk in f.hunks:
            news = [d for d in hunk.lines if d.kind != "del"]
            olds = [d for d in hunk.lines if d.kind != "add"]
            assert [d.new_line for d in news] == list(
                range(hunk.new_start, hunk.new_start + hunk.new_count)
            )
            assert [d.old_line for d in olds] == list(
                range(hunk.old_start, hunk.old_start + hunk.old_count)
            )
            for d in news:
                assert d.new_line is not None
                assert new_lines[d.new_line - 1] == d.text, (f.path, d)
                assert f.line(d.new_line, "RIGHT") == d
                assert change.locate(f.path, d.new_line, "RIGHT") == d
            for d in olds:
                assert d.old_line is not None
                assert old_lines[d.old_line - 1] == d.text, (f.path, d)
                assert f.line(d.old_line, "LEFT") == d
            for d in hunk.lines:
                if d.no_newline_at_eof:
                    data, number = (old, d.old_line) if d.kind == "del" else (new, d.new_line)
                    assert not data.endswith(b"\n") and number == len(file_lines(data))
            checked += len(hunk.lines)
    return checked


def shape(f: FileChange) -> dict[str, object]:
    return {
        "path": f.path,
        "old_path": f.old_path,
        "status": f.status,
        "old_mode": f.old_mode,
        "new_mode": f.new_mode,
        "binary": f.binary,
        "similarity": f.similarity,
        "oversized": f.oversized,
        "additions": f.additions,
        "deletions": f.deletions,
        "hunks": [
            {
                "header": f"-{h.old_start},{h.old_count} +{h.new_start},{h.new_count}",
                "section": h.section,
                "lines": [line_text(d) for d in h.lines],
            }
            for h in f.hunks
        ],
    }


def line_text(d: DiffLine) -> str:
    flag = "!" if d.no_newline_at_eof else ""
    return f"{d.kind}{flag} {d.old_line or '-'} {d.new_line or '-'} |{d.text}"


def assert_golden(name: str, change: Change) -> None:
    # ensure_ascii: names that are not UTF-8 are lone surrogates, which only escapes can hold.
    current = json.dumps([shape(f) for f in change.files], indent=1, ensure_ascii=True) + "\n"
    path = GOLDEN / f"{name}.json"
    if os.environ.get("REVIEWER_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(current, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == current, (
        f"the parsed diff of '{name}' changed; if on purpose, update (see module docstring)"
    )


def set_gitlink(repo: GitRepo, path: str, commit_id: str) -> None:
    # A submodule pointer without a submodule: the diff only ever sees the gitlink.
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{commit_id},{path}")
    (repo.root / path).mkdir(exist_ok=True)  # so that `git add -A` keeps the entry


def commit_staged(repo: GitRepo, message: str = "change") -> str:
    repo.git("commit", "-q", "--allow-empty", "-m", message)
    return repo.head()


def numbered(count: int, tag: str = "line") -> str:
    return "".join(f"{tag} {n}\n" for n in range(1, count + 1))


def by_path(change: Change) -> dict[str, FileChange]:
    return {f.path: f for f in change.files}


# --- representative repositories (also the golden files) --------------------------------


def build_kinds(repo: GitRepo) -> tuple[str, str]:
    """One repository with one file of every kind of change. Returns (base, head)."""
    repo.write("renamed_same.txt", numbered(20, "same"))
    repo.write("renamed_edit.txt", numbered(20, "edit"))
    repo.write("deleted.txt", "gone\nfor good\n")
    repo.write("script.sh", "#!/bin/sh\necho hi\n")
    repo.write("image.bin", b"\x89PNG\0\x01\x02" * 10)
    repo.write("eol_gain.txt", "one\ntwo")
    repo.write("eol_lose.txt", "one\ntwo\n")
    repo.write("crlf.txt", "alpha\r\nbeta\r\ngamma\r\n")
    repo.write("latin1.txt", "caf\xe9\nna\xefve\n".encode("latin-1"))
    repo.symlink("link", "renamed_same.txt")
    repo.write("every.txt", "a\nb\nc\n")
    repo.write("multi.txt", numbered(60))
    repo.write("close.txt", numbered(30))
    repo.write("single.txt", "only\n")
    repo.write("typechange", "a file\n")
    repo.git("add", "-A")
    set_gitlink(repo, "sub", "1" * 40)
    base = commit_staged(repo, "base")

    (repo.root / "moved").mkdir()
    repo.git("mv", "renamed_same.txt", "moved/renamed_same.txt")
    repo.git("mv", "renamed_edit.txt", "renamed_edited.txt")
    repo.write("renamed_edited.txt", numbered(20, "edit").replace("edit 10\n", "edited 10\n"))
    (repo.root / "deleted.txt").unlink()
    (repo.root / "script.sh").chmod(0o755)
    repo.write("image.bin", b"\x89PNG\0\x01\x03" * 10)
    repo.write("new_image.bin", b"\0\0\0data")
    repo.write("eol_gain.txt", "one\ntwo\n")
    repo.write("eol_lose.txt", "one\ntwo")
    repo.write("crlf.txt", "alpha\r\nBETA\r\ngamma\r\n")
    repo.write("latin1.txt", "caf\xe9\nna\xefve!\n".encode("latin-1"))
    (repo.root / "link").unlink()
    repo.symlink("link", "renamed_edited.txt")
    repo.write("every.txt", "x\ny\nz\n")
    lines = numbered(60).splitlines(keepends=True)
    lines[4] = "changed 5\n"
    lines[49] = "changed 50\n"
    repo.write("multi.txt", "".join(lines))
    repo.write("copy_of_multi.txt", numbered(60))  # a copy of a file changed alongside
    # Changes 10 lines apart: two hunks with 3 lines of context, one if hunks are merged.
    repo.write("close.txt", numbered(30).replace("line 5\n", "five\n").replace("line 15\n", "x\n"))
    repo.write("single.txt", "only, changed\n")
    repo.write("empty.txt", "")
    repo.write("added.py", "def f():\n    return 1\n")
    (repo.root / "typechange").unlink()
    repo.symlink("typechange", "single.txt")
    repo.git("add", "-A")
    set_gitlink(repo, "sub", "2" * 40)
    head = commit_staged(repo, "head")
    return base, head


def build_names(repo: GitRepo) -> tuple[str, str]:
    for name in WEIRD_NAMES:
        repo.write(name, f"content of {name!r}\n")
    repo.write("plain.txt", "plain\n")
    base = repo.commit("base")
    for name in WEIRD_NAMES[:5]:
        repo.write(name, f"content of {name!r}\nmore\n")
    (repo.root / "x b/y.txt").chmod(0o755)  # a mode-only change: no ---/+++ lines
    repo.git("mv", "--", WEIRD_NAMES[5], "ünï/rënamed ☃.txt")
    repo.git("mv", "--", WEIRD_NAMES[6], "plain-renamed.txt")
    repo.git("mv", "--", "plain.txt", "tab\tand space renamed.txt")
    (repo.root / "-dash.txt").unlink()
    repo.write(os.fsdecode(b"new \xff\xfe name.txt"), "fresh\n")
    return base, repo.commit("head")


# --- golden files and replay over real git --------------------------------------------


def test_every_kind_of_change_matches_golden_and_replays(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    change = load_change(repo.root, base, head)
    assert change.base == base and change.head == head
    assert_golden("kinds", change)
    assert check_replay(repo, change) > 0


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 4096])
def test_the_diff_is_parsed_the_same_whatever_pieces_it_arrives_in(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, chunk_size: int
) -> None:
    base, head = build_names(repo)
    whole = load_change(repo.root, base, head)
    real = reviewer.change.load.stream_git

    def small_pieces(*args: Any, **kwargs: Any) -> Any:
        return real(*args, **kwargs, chunk_size=chunk_size)

    monkeypatch.setattr(reviewer.change.load, "stream_git", small_pieces)
    pieces = load_change(repo.root, base, head)
    assert pieces == whole and len(pieces.files) > 5
    assert_golden("names", pieces)


def test_weird_file_names_round_trip_exactly(repo: GitRepo) -> None:
    base, head = build_names(repo)
    change = load_change(repo.root, base, head)
    assert_golden("names", change)
    check_replay(repo, change)
    files = by_path(change)
    for name in WEIRD_NAMES[:5]:
        assert files[name].status == "modified" and files[name].old_path == name
    assert files["x b/y.txt"].mode_changed and files["x b/y.txt"].hunks == ()
    assert files["ünï/rënamed ☃.txt"].old_path == WEIRD_NAMES[5]
    assert files["plain-renamed.txt"].old_path == os.fsdecode(b"caf\xe9.txt")
    assert files["tab\tand space renamed.txt"].old_path == "plain.txt"
    assert files["-dash.txt"].status == "deleted"
    # Each reported path names the file on disk, byte for byte.
    for f in change.files:
        if f.status != "deleted":
            assert (repo.root / f.path).is_file(), f.path


def test_worktree_with_untracked_files_matches_golden(repo: GitRepo) -> None:
    repo.write(".gitignore", "ignored.log\n")
    repo.write("tracked.txt", numbered(10))
    repo.write("staged.txt", "old\n")
    repo.commit("base")
    repo.write("tracked.txt", numbered(10).replace("line 3\n", "line three\n"))
    repo.write("staged.txt", "new\n")
    repo.git("add", "staged.txt")
    repo.write("untracked/notes.md", "# notes\r\nsecond\r\n")
    repo.write("untracked/blob.dat", b"\x00\x01binary")
    repo.write("untracked/empty", "")
    repo.write("untracked/no_eol.txt", "last line")
    repo.write("untracked/run.sh", "#!/bin/sh\n").chmod(0o755)
    repo.write("untracked/latin1.txt", b"\xe9t\xe9\n")
    repo.symlink("untracked/link", "../tracked.txt")
    repo.write("ignored.log", "secret\n")
    index_before = (repo.root / ".git" / "index").read_bytes()

    change = load_change(repo.root, "main", None)

    assert change.head is None and change.base == repo.head()
    assert_golden("worktree", change)
    check_replay(repo, change)
    files = by_path(change)
    assert "ignored.log" not in files
    assert files["untracked/run.sh"].new_mode == "100755"
    assert files["untracked/link"].new_mode == "120000"
    assert files["untracked/blob.dat"].binary
    # Read-only: the index is not touched (no `git add`, no refresh written back).
    assert (repo.root / ".git" / "index").read_bytes() == index_before
    assert repo.git("status", "--porcelain", "--", "untracked").startswith("??")


# --- specific kinds of change -----------------------------------------------------------


def test_renames_with_and_without_edits(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    files = by_path(load_change(repo.root, base, head))
    same = files["moved/renamed_same.txt"]
    assert (same.status, same.old_path, same.similarity, same.hunks) == (
        "renamed",
        "renamed_same.txt",
        100,
        (),
    )
    # The modes of a pure rename come from --raw: the patch does not print them.
    assert (same.old_mode, same.new_mode) == ("100644", "100644")
    edited = files["renamed_edited.txt"]
    assert edited.status == "renamed" and edited.old_path == "renamed_edit.txt"
    assert edited.similarity is not None and 50 <= edited.similarity < 100
    assert (edited.additions, edited.deletions) == (1, 1)
    assert edited.line(10) == DiffLine("add", None, 10, "edited 10")
    assert edited.line(10, "LEFT") == DiffLine("del", 10, None, "edit 10")


def test_copies_are_reported_as_added_files(repo: GitRepo) -> None:
    repo.write("original.py", numbered(30))
    base = repo.commit()
    repo.write("copy.py", numbered(30))
    head = repo.commit()
    copy = by_path(load_change(repo.root, base, head))["copy.py"]
    # Like GitHub: a copy is a new file, every line of it commentable.
    assert copy.status == "added" and copy.old_path is None and copy.additions == 30
    assert copy.line(30) == DiffLine("add", None, 30, "line 30")


def test_added_deleted_empty_and_mode_only(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    files = by_path(load_change(repo.root, base, head))
    added = files["added.py"]
    assert (added.status, added.old_path, added.old_mode, added.new_mode) == (
        "added",
        None,
        None,
        "100644",
    )
    deleted = files["deleted.txt"]
    assert (deleted.status, deleted.old_path, deleted.new_mode) == (
        "deleted",
        "deleted.txt",
        None,
    )
    assert deleted.line(1, "LEFT") == DiffLine("del", 1, None, "gone")
    assert deleted.line(1, "RIGHT") is None
    empty = files["empty.txt"]
    assert (empty.status, empty.hunks, empty.binary, empty.additions) == ("added", (), False, 0)
    script = files["script.sh"]
    assert script.mode_changed and (script.old_mode, script.new_mode) == ("100644", "100755")
    assert script.status == "modified" and script.hunks == ()
    assert not files["added.py"].mode_changed and not files["multi.txt"].mode_changed


def test_binary_files_added_and_modified(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    change = load_change(repo.root, base, head)
    files = by_path(change)
    for path, status in (("image.bin", "modified"), ("new_image.bin", "added")):
        f = files[path]
        assert (f.status, f.binary, f.hunks, f.additions, f.deletions) == (status, True, (), 0, 0)
        assert change.locate(path, 1) is None


def test_no_newline_at_end_of_file_on_either_side(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    files = by_path(load_change(repo.root, base, head))
    gain = files["eol_gain.txt"].hunks[0].lines
    assert gain[-2:] == (
        DiffLine("del", 2, None, "two", no_newline_at_eof=True),
        DiffLine("add", None, 2, "two"),
    )
    lose = files["eol_lose.txt"].hunks[0].lines
    assert lose[-2:] == (
        DiffLine("del", 2, None, "two"),
        DiffLine("add", None, 2, "two", no_newline_at_eof=True),
    )


def test_context_line_without_newline_marks_both_sides(repo: GitRepo) -> None:
    repo.write("f.txt", "a\nb\nc")
    base = repo.commit()
    repo.write("f.txt", "A\nb\nc")
    head = repo.commit()
    lines = load_change(repo.root, base, head).files[0].hunks[0].lines
    assert lines[-1] == DiffLine("context", 3, 3, "c", no_newline_at_eof=True)


def test_crlf_latin1_symlink_submodule_and_typechange(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    change = load_change(repo.root, base, head)
    files = by_path(change)
    assert files["crlf.txt"].line(2) == DiffLine("add", None, 2, "BETA")
    assert files["crlf.txt"].line(1) == DiffLine("context", 1, 1, "alpha")
    assert files["latin1.txt"].line(2) == DiffLine("add", None, 2, "na\ufffdve!")
    link = files["link"]
    assert (link.old_mode, link.new_mode, link.status) == ("120000", "120000", "modified")
    assert link.line(1) == DiffLine("add", None, 1, "renamed_edited.txt", True)
    sub = files["sub"]
    assert (sub.old_mode, sub.new_mode) == ("160000", "160000")
    assert [d.text for d in sub.hunks[0].lines] == [
        "Subproject commit " + "1" * 40,
        "Subproject commit " + "2" * 40,
    ]
    # A file that became a symlink: git prints a deletion and an addition under one path.
    pair = [f for f in change.files if f.path == "typechange"]
    assert [(f.status, f.old_mode, f.new_mode) for f in pair] == [
        ("deleted", "100644", None),
        ("added", None, "120000"),
    ]
    assert change.file("typechange") is pair[1]
    assert change.locate("typechange", 1, "LEFT") == DiffLine("del", 1, None, "a file")
    assert change.locate("typechange", 1, "RIGHT") == DiffLine("add", None, 1, "single.txt", True)


def test_every_line_changed_and_multiple_hunks(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    files = by_path(load_change(repo.root, base, head))
    every = files["every.txt"]
    assert [(h.old_start, h.old_count, h.new_start, h.new_count) for h in every.hunks] == [
        (1, 3, 1, 3)
    ]
    assert (every.additions, every.deletions) == (3, 3)
    multi = files["multi.txt"]
    assert [(h.old_start, h.old_count, h.new_start, h.new_count) for h in multi.hunks] == [
        (2, 7, 2, 7),
        (47, 7, 47, 7),
    ]
    assert multi.line(5) == DiffLine("add", None, 5, "changed 5")
    assert multi.line(50, "LEFT") == DiffLine("del", 50, None, "line 50")
    assert multi.line(20) is None  # between the hunks
    assert multi.hunk_at(50) is multi.hunks[1] and multi.hunk_at(20) is None


def test_hunk_header_with_counts_left_out(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    single = by_path(load_change(repo.root, base, head))["single.txt"]
    raw = git_bytes(repo, "diff", base, head, "--", "single.txt")
    assert b"@@ -1 +1 @@" in raw
    hunk = single.hunks[0]
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (1, 1, 1, 1)


def test_line_numbers_shift_after_insertions(repo: GitRepo) -> None:
    repo.write("f.txt", numbered(40))
    base = repo.commit()
    lines = numbered(40).splitlines(keepends=True)
    lines[2:2] = ["new a\n", "new b\n"]  # +2 after line 2
    del lines[30]  # the old line 29
    repo.write("f.txt", "".join(lines))
    head = repo.commit()
    change = load_change(repo.root, base, head)
    f = change.files[0]
    assert [(h.old_start, h.old_count, h.new_start, h.new_count) for h in f.hunks] == [
        (1, 5, 1, 7),
        (26, 7, 28, 6),
    ]
    assert f.line(29, "LEFT") == DiffLine("del", 29, None, "line 29")
    assert f.line(28) == DiffLine("context", 26, 28, "line 26")
    check_replay(repo, change)


def test_oversized_file_is_listed_without_hunks(repo: GitRepo) -> None:
    repo.write("small.txt", "a\n")
    base = repo.commit()
    big = "".join(f"{n:08d} {'x' * 96}\n" for n in range(10_000))  # ~1 MiB, 10,000 lines
    repo.write("big.txt", big)
    repo.write("many_short_lines.txt", "x\n" * 25_000)  # small, but over the line limit
    repo.write("small.txt", "b\n")
    head = repo.commit()
    assert len(big) > 2 * MAX_FILE_PATCH_BYTES
    change = load_change(repo.root, base, head)
    files = by_path(change)
    for path, count in (("big.txt", 10_000), ("many_short_lines.txt", 25_000)):
        f = files[path]
        assert (f.oversized, f.hunks, f.additions, f.status) == (True, (), count, "added")
        assert change.locate(path, 1) is None
    assert not files["small.txt"].oversized and files["small.txt"].line(1) is not None


def test_untracked_oversized_file(repo: GitRepo) -> None:
    repo.write("a.txt", "a\n")
    repo.commit()
    repo.write("big.txt", "y" * 99 + "\n" * 1 + "z" * (MAX_FILE_PATCH_BYTES + 10))
    f = by_path(load_change(repo.root, "main", None))["big.txt"]
    assert (f.oversized, f.hunks, f.additions) == (True, (), 2)


def test_hundreds_of_files(repo: GitRepo) -> None:
    for n in range(400):
        repo.write(f"pkg{n % 7}/mod_{n:03d}.py", numbered(30, f"v{n}"))
    base = repo.commit()
    for n in range(400):
        lines = numbered(30, f"v{n}").replace(f"v{n} 15\n", f"v{n} fifteen\nv{n} extra\n")
        repo.write(f"pkg{n % 7}/mod_{n:03d}.py", lines)
    head = repo.commit()
    change = load_change(repo.root, base, head)
    assert len(change.files) == 400
    assert all((f.additions, f.deletions, len(f.hunks)) == (2, 1, 1) for f in change.files)
    assert (change.additions, change.deletions) == (800, 400)
    assert check_replay(repo, change) == 400 * 9


# --- three-dot semantics and the merge base --------------------------------------------


def test_the_diff_is_three_dot_from_the_merge_base(repo: GitRepo) -> None:
    repo.write("shared.txt", "shared\n")
    fork = repo.commit("fork")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature.txt", "feature work\n")
    feature = repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.write("main_only.txt", "moved on\n")
    repo.write("shared.txt", "changed on main\n")
    repo.commit("main moves on")
    assert merge_base(repo.root, "main", "feature") == fork
    change = load_change(repo.root, "main", "feature")
    assert change.base == fork and change.head == feature
    assert [f.path for f in change.files] == ["feature.txt"]


def test_working_tree_diff_starts_at_the_merge_base_of_base_and_head(repo: GitRepo) -> None:
    repo.write("a.txt", "a\n")
    fork = repo.commit()
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("b.txt", "b\n")
    repo.commit()
    repo.git("checkout", "-q", "main")
    repo.write("c.txt", "c\n")
    repo.commit()
    repo.git("checkout", "-q", "feature")
    repo.write("a.txt", "a edited, not staged\n")
    change = load_change(repo.root, "main", None)
    assert change.base == fork and change.head is None
    assert [(f.path, f.status) for f in change.files] == [
        ("a.txt", "modified"),
        ("b.txt", "added"),
    ]
    check_replay(repo, change)


def test_unrelated_histories_say_what_to_do(repo: GitRepo) -> None:
    repo.write("a.txt", "a\n")
    repo.commit()
    repo.git("checkout", "-q", "--orphan", "other")
    repo.write("b.txt", "b\n")
    repo.commit()
    with pytest.raises(ReviewerError, match=r"no common ancestor.*unrelated") as info:
        merge_base(repo.root, "main", "other")
    assert "\n" not in str(info.value)
    with pytest.raises(ReviewerError, match="unrelated"):
        load_change(repo.root, "main", "other")


def test_unknown_revision_mentions_fetching(repo: GitRepo) -> None:
    repo.write("a.txt", "a\n")
    repo.commit()
    with pytest.raises(ReviewerError, match=r"unknown revision 'origin/nope'.*fetch"):
        load_change(repo.root, "origin/nope", "HEAD")
    with pytest.raises(ReviewerError, match="invalid revision"):
        merge_base(repo.root, "--output=x", "HEAD")


def test_shallow_clone_without_the_merge_base_says_fetch_more(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    origin = make_repo("origin")
    origin.write("a.txt", "a\n")
    origin.commit()
    origin.git("checkout", "-q", "-b", "feature")
    origin.write("b.txt", "b\n")
    origin.commit()
    origin.git("checkout", "-q", "main")
    origin.write("c.txt", "c\n")
    origin.commit()
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", "--no-single-branch", origin.root.as_uri(), str(clone)],
        check=True,
        capture_output=True,
    )
    with pytest.raises(ReviewerError, match=r"shallow clone.*fetch"):
        merge_base(clone, "origin/main", "origin/feature")


# --- pinned config: the user's settings cannot move an anchor ----------------------------


def test_user_diff_config_does_not_change_the_result(repo: GitRepo) -> None:
    base, head = build_kinds(repo)
    before = load_change(repo.root, base, head)
    hostile = {
        "diff.noprefix": "true",
        "diff.mnemonicPrefix": "true",
        "diff.suppressBlankEmpty": "true",
        "diff.algorithm": "histogram",
        "diff.indentHeuristic": "false",
        "diff.interHunkContext": "30",
        "diff.context": "9",
        "diff.renames": "copies",
        "diff.renameLimit": "1",
        "diff.relative": "true",
        "diff.submodule": "log",
        "diff.ignoreSubmodules": "all",
        "diff.external": "false",
        "color.diff": "always",
        "color.ui": "always",
        "core.quotePath": "true",
        "core.abbrev": "7",
    }
    for key, value in hostile.items():
        repo.git("config", key, value)
    after = load_change(repo.root, base, head)
    assert [shape(f) for f in after.files] == [shape(f) for f in before.files]


def test_context_lines_can_be_changed(repo: GitRepo) -> None:
    repo.write("f.txt", numbered(20))
    base = repo.commit()
    repo.write("f.txt", numbered(20).replace("line 10\n", "ten\n"))
    head = repo.commit()
    (hunk,) = load_change(repo.root, base, head, context_lines=0).files[0].hunks
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (10, 1, 10, 1)
    (hunk,) = load_change(repo.root, base, head, context_lines=5).files[0].hunks
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (5, 11, 5, 11)


# --- GitHub's commentable-line rule -----------------------------------------------------


def test_locate_follows_githubs_rule(repo: GitRepo) -> None:
    repo.write("f.py", numbered(30))
    base = repo.commit()
    repo.write("f.py", numbered(30).replace("line 15\n", "fifteen\n"))
    head = repo.commit()
    change = load_change(repo.root, base, head)
    # The hunk covers old and new lines 12..18, line 15 replaced.
    assert change.locate("f.py", 15) == DiffLine("add", None, 15, "fifteen")
    assert change.locate("f.py", 15, "LEFT") == DiffLine("del", 15, None, "line 15")
    assert change.locate("f.py", 12) == DiffLine("context", 12, 12, "line 12")
    assert change.locate("f.py", 18, "LEFT") == DiffLine("context", 18, 18, "line 18")
    for outside in (11, 19, 1, 30, 31, 0, -1):
        assert change.locate("f.py", outside) is None
        assert change.locate("f.py", outside, "LEFT") is None
    assert change.locate("nope.py", 15) is None
    assert change.file("f.py") is change.files[0] and change.file("nope.py") is None
    with pytest.raises(ValueError, match="side"):
        change.locate("f.py", 15, "right")  # type: ignore[arg-type]


def test_deleted_file_is_found_by_its_old_path_on_the_left(repo: GitRepo) -> None:
    repo.write("old.txt", "one\ntwo\n")
    base = repo.commit()
    (repo.root / "old.txt").unlink()
    head = repo.commit()
    change = load_change(repo.root, base, head)
    assert change.file("old.txt") is change.files[0]
    assert change.locate("old.txt", 2, "LEFT") == DiffLine("del", 2, None, "two")
    assert change.locate("old.txt", 2, "RIGHT") is None


# --- untracked files in the working tree ------------------------------------------------


def test_untracked_special_files_are_skipped_safely(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("a.txt", "a\n")
    repo.commit()
    os.mkfifo(repo.root / "fifo")  # reading it would block forever
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("secret\n")
    os.link(outside, repo.root / "hardlink.txt")  # may alias a file outside the repository
    repo.symlink("escape", str(outside))  # shown as a link (its target), never followed
    nested = GitRepo(repo.root / "nested")
    nested.write("inner.txt", "inner\n")
    nested.commit()
    change = load_change(repo.root, "main", None)
    files = by_path(change)
    assert set(files) == {"escape"}
    assert files["escape"].line(1) == DiffLine("add", None, 1, str(outside), True)


def test_added_file_synthesis_matches_git(repo: GitRepo) -> None:
    repo.write("base.txt", "b\n")
    base = repo.commit()
    contents = [b"one\ntwo\n", b"no newline", b"crlf\r\nend\r", b"\xe9\n\n\n", b"x\0y", b""]
    for n, content in enumerate(contents):
        repo.write(f"f{n}", content)
    repo.write("run", "#!/bin/sh\n").chmod(0o755)
    repo.symlink("link", "base.txt")
    # The same files untracked, then committed: what we synthesize must be what git prints.
    mine = [shape(f) for f in load_change(repo.root, "main", None).files]
    head = repo.commit()
    theirs = [shape(f) for f in load_change(repo.root, base, head).files]
    assert mine == theirs and len(mine) == len(contents) + 2


# --- the pure parser --------------------------------------------------------------------


def test_parse_patch_on_handmade_input() -> None:
    patch = (
        b"preamble from an email\n"
        b"diff --git a/f.c b/f.c\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/f.c\n"
        b"+++ b/f.c\n"
        b"@@ -1 +1 @@ int main(void)\n"
        b"-old\n"
        b"+new\r\n"
        b"@@ -10,3 +10,2 @@\n"
        b" ten\n"
        b"\n"  # an empty context line, as diff.suppressBlankEmpty prints it
        b"-twelve\r\n"
        b"\\ No newline at end of file\n"
    )
    (f,) = parse_patch(patch)
    assert (f.path, f.old_path, f.status, f.old_mode, f.new_mode) == (
        "f.c",
        "f.c",
        "modified",
        "100644",
        "100644",
    )
    first, second = f.hunks
    assert first.section == "int main(void)" and second.section == ""
    assert first.lines == (DiffLine("del", 1, None, "old"), DiffLine("add", None, 1, "new"))
    assert second.lines == (
        DiffLine("context", 10, 10, "ten"),
        DiffLine("context", 11, 11, ""),
        # No line ending at all: the \r is content, not half of a CRLF.
        DiffLine("del", 12, None, "twelve\r", no_newline_at_eof=True),
    )
    assert parse_patch(b"") == [] and parse_patch(b"no diff here\n") == []


@pytest.mark.parametrize(
    "bad",
    [
        b"@@ -1,2 +1 @@\n-a\n+b\n",  # fewer old lines than announced
        b"@@ -1 +1 @@\n-a\n+b\n+c\n",  # more new lines than announced
        b"@@ -x +1 @@\n-a\n+b\n",
        b"@@ -1 +1 @@\n-a\n?b\n",
    ],
)
def test_malformed_hunks_are_refused(bad: bytes) -> None:
    with pytest.raises(PatchError):
        parse_patch(b"diff --git a/f b/f\n--- a/f\n+++ b/f\n" + bad)


def test_git_binary_patch_and_quoted_names() -> None:
    patch = (
        b'diff --git "a/t\\tb \\"q\\" \\303\\251" "b/t\\tb \\"q\\" \\303\\251"\n'
        b"new file mode 100755\n"
        b"index 0000000..1111111\n"
        b"GIT binary patch\n"
        b"literal 3\n"
        b"KcmZQz00031000\n"
        b"\n"
        b"literal 0\n"
        b"HcmV?d00001\n"
        b"\n"
        b"diff --git a/x b/y b/x b/y\n"
        b"old mode 100644\n"
        b"new mode 100755\n"
    )
    binary, mode_only = parse_patch(patch)
    assert (binary.path, binary.status, binary.binary, binary.new_mode) == (
        'tb "q" é'.replace("tb", "t\tb"),
        "added",
        True,
        "100755",
    )
    assert (mode_only.path, mode_only.old_path, mode_only.mode_changed) == ("x b/y", "x b/y", True)
    assert unquote(b'"\\001\\a\\\\ \\377"') == b"\x01\x07\\ \xff"
    assert unquote(b"bare name") == b"bare name"
    with pytest.raises(PatchError):
        unquote(b'"unterminated')


def test_split_raw_reads_modes_and_leaves_the_patch() -> None:
    raw = (
        b":100644 100755 " + b"1" * 40 + b" " + b"2" * 40 + b" M\0odd\nname\0"
        b":120000 120000 " + b"3" * 40 + b" " + b"3" * 40 + b" R100\0old\0new\0"
        b"\0diff --git a/odd b/odd\n"
    )
    modes, patch_at = split_raw(raw)
    assert modes == {"odd\nname": ("100644", "100755"), "new": ("120000", "120000")}
    assert raw[patch_at:] == b"diff --git a/odd b/odd\n"


def test_added_file_helper() -> None:
    f = added_file("n.txt", b"a\r\nb")
    assert f.hunks[0].lines == (
        DiffLine("add", None, 1, "a"),
        DiffLine("add", None, 2, "b", no_newline_at_eof=True),
    )
    assert added_file("z", b"\0").binary and added_file("e", b"").hunks == ()
    assert added_file("big", b"x\n" * 30_000).oversized
