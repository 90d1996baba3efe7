"""What each tool answers, on real repositories, at a revision and on the working tree."""

from __future__ import annotations

import json
import subprocess

import pytest

from reviewer.tools import TOOLS, run_tool
from reviewer.workspace import Workspace
from tests.conftest import WORKSPACE_MODES, GitRepo, workspace_for


def ok(name: str, args: dict | str, workspace: Workspace) -> str:
    result = run_tool(name, args, workspace)
    assert not result.is_error, result.text
    return result.text


def err(name: str, args: dict | str, workspace: Workspace) -> str:
    result = run_tool(name, args, workspace)
    assert result.is_error, result.text
    assert result.text.startswith("Error: ")
    assert "\n" not in result.text, "errors are one line"
    return result.text


@pytest.fixture
def project(repo: GitRepo) -> GitRepo:
    repo.write("README.md", "# Demo\n\nA demo project.\n")
    repo.write("src/app/__init__.py", "")
    repo.write(
        "src/app/main.py",
        "import os\n\n\ndef handler(request):\n    token = request.headers['x']\n"
        "    return token\n",
    )
    repo.write("src/app/util.py", "def helper():\n    return 42\n")
    repo.write("src/app/deep/er/est/leaf.py", "LEAF = True\n")
    repo.write("tests/test_main.py", "from app.main import handler\n")
    repo.write(".github/workflows/ci.yml", "on: push\n")
    repo.write(".gitignore", ".env\nbuild/\n")
    repo.write("crlf.txt", "one\r\ntwo\r\n")
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    repo.symlink("docs-link.md", "README.md")
    repo.commit("initial import", author="Alice")
    repo.write("src/app/util.py", "def helper():\n    return 43\n")
    repo.commit("change the answer", author="Bob")
    # Present on disk but never visible: ignored by .gitignore.
    repo.write(".env", "SECRET=1\n")
    repo.write("build/out.py", "handler = 1\n")
    return repo


@pytest.fixture(params=WORKSPACE_MODES)
def ws(request: pytest.FixtureRequest, project: GitRepo) -> Workspace:
    return workspace_for(project, request.param)


# --- read_file ------------------------------------------------------------------------


def test_read_file_returns_the_whole_file(ws: Workspace) -> None:
    assert ok("read_file", {"path": "src/app/util.py"}, ws) == "def helper():\n    return 43"


@pytest.mark.parametrize("alias", ["path", "file_path", "filepath", "filename", "file"])
def test_read_file_accepts_path_aliases(ws: Workspace, alias: str) -> None:
    assert ok("read_file", {alias: "README.md"}, ws).startswith("# Demo")


def test_read_file_normalizes_harmless_spellings(ws: Workspace) -> None:
    for spelling in ("./README.md", "src/../README.md", "src//app/../../README.md", " README.md "):
        assert ok("read_file", {"path": spelling}, ws).startswith("# Demo"), spelling
    assert ok("read_file", {"path": str(ws.root / "README.md")}, ws).startswith("# Demo")


def test_read_file_strips_crlf_line_endings(ws: Workspace) -> None:
    assert ok("read_file", {"path": "crlf.txt"}, ws) == "one\ntwo"


def test_read_file_follows_a_symlink_inside_the_repository(ws: Workspace) -> None:
    assert ok("read_file", {"path": "docs-link.md"}, ws).startswith("# Demo")


def test_read_file_of_an_empty_file_says_so(ws: Workspace) -> None:
    assert "empty file" in ok("read_file", {"path": "src/app/__init__.py"}, ws)


def test_read_file_refuses_binary_files(ws: Workspace) -> None:
    assert "binary file" in err("read_file", {"path": "logo.png"}, ws)


def test_read_file_on_a_directory_points_to_list_files(ws: Workspace) -> None:
    assert "list_files" in err("read_file", {"path": "src/app"}, ws)


def test_read_file_not_found_suggests_files_with_that_name(ws: Workspace) -> None:
    message = err("read_file", {"path": "main.py"}, ws)
    assert "not found" in message and "src/app/main.py" in message


def test_ignored_files_are_not_part_of_the_repository(ws: Workspace) -> None:
    assert "not found" in err("read_file", {"path": ".env"}, ws)
    assert "not found" in err("read_file", {"path": "build/out.py"}, ws)


def test_read_file_truncates_large_files_with_directions(repo: GitRepo) -> None:
    repo.write("big.txt", "".join(f"line {n:05d} " + "x" * 90 + "\n" for n in range(1, 2001)))
    repo.commit()
    for mode in WORKSPACE_MODES:
        text = ok("read_file", {"path": "big.txt"}, workspace_for(repo, mode))
        body, _, notice = text.rpartition("\n\n")
        assert len(text) <= 50_500
        shown = body.split("\n")
        assert shown[0].startswith("line 00001 ")
        last = len(shown)
        assert shown[-1].startswith(f"line {last:05d} ")
        assert f"showing lines 1-{last}" in notice and "2,000 lines" in notice
        assert f"startLine={last + 1}" in notice


def test_read_file_cuts_very_long_lines(repo: GitRepo) -> None:
    repo.write("min.js", "a" * 5000 + "\nshort\n")
    repo.commit()
    text = ok("read_file", {"path": "min.js"}, repo.revision())
    first, second = text.split("\n")
    assert first == "a" * 2000 + " … [line cut: 5,000 characters]"
    assert second == "short"


# --- read_file_lines -------------------------------------------------------------------


def test_read_file_lines_numbers_each_line(ws: Workspace) -> None:
    text = ok("read_file_lines", {"path": "src/app/main.py", "startLine": 4, "endLine": 5}, ws)
    assert text == "4: def handler(request):\n5:     token = request.headers['x']"


def test_read_file_lines_accepts_snake_case_and_strings(ws: Workspace) -> None:
    args = {"file_path": "src/app/main.py", "start_line": "1", "end_line": "1"}
    assert ok("read_file_lines", args, ws) == "1: import os"


def test_read_file_lines_past_the_end(ws: Workspace) -> None:
    text = ok("read_file_lines", {"path": "src/app/util.py", "startLine": 2, "endLine": 99}, ws)
    assert text.startswith("2:     return 43")
    assert "has 2 lines" in text
    assert "past the end" in err(
        "read_file_lines", {"path": "src/app/util.py", "startLine": 9, "endLine": 10}, ws
    )


def test_counts_of_one_are_singular(ws: Workspace) -> None:
    """`1 line`, `1 file`: every count goes through reviewer.wording.plural."""
    one_line = {"path": "src/app/deep/er/est/leaf.py"}
    assert ok("read_file_lines", {**one_line, "startLine": 1, "endLine": 5}, ws).endswith(
        "has 1 line.]"
    )
    assert err("read_file_lines", {**one_line, "startLine": 3, "endLine": 5}, ws).endswith(
        "which has 1 line."
    )
    assert err("get_git_blame", {**one_line, "startLine": 3}, ws).endswith("which has 1 line.")
    assert "      deep/ (1 file)" in ok("get_file_structure", {}, ws).split("\n")


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [(0, 3, "greater than or equal to 1"), (5, 2, "before startLine"), (-1, 2, "greater")],
)
def test_read_file_lines_rejects_bad_ranges(
    ws: Workspace, start: int, end: int, expected: str
) -> None:
    args = {"path": "src/app/main.py", "startLine": start, "endLine": end}
    assert expected in err("read_file_lines", args, ws)


def test_read_file_lines_caps_output_and_says_where_to_continue(repo: GitRepo) -> None:
    repo.write("wide.txt", "".join("y" * 1500 + "\n" for _ in range(100)))
    repo.commit()
    text = ok(
        "read_file_lines", {"path": "wide.txt", "startLine": 1, "endLine": 100}, repo.revision()
    )
    assert len(text) < 51_000
    assert "Continue with startLine=" in text


# --- list_files ------------------------------------------------------------------------


def test_list_files_shows_the_root(ws: Workspace) -> None:
    assert ok("list_files", {}, ws).split("\n") == [
        ".github/",
        ".gitignore",
        "README.md",
        "crlf.txt",
        "docs-link.md (symlink)",
        "logo.png",
        "src/",
        "tests/",
    ]


def test_list_files_of_a_directory(ws: Workspace) -> None:
    assert ok("list_files", {"directory": "src/app"}, ws).split("\n") == [
        "src/app/__init__.py",
        "src/app/deep/",
        "src/app/main.py",
        "src/app/util.py",
    ]
    assert ok("list_files", {"path": "src/app/"}, ws).startswith("src/app/__init__.py")


def test_list_files_with_a_recursive_pattern(ws: Workspace) -> None:
    assert ok("list_files", {"pattern": "**/*.py"}, ws).split("\n") == [
        "src/app/__init__.py",
        "src/app/deep/er/est/leaf.py",
        "src/app/main.py",
        "src/app/util.py",
        "tests/test_main.py",
    ]
    assert ok("list_files", {"directory": "src", "pattern": "app/*.py"}, ws).count("\n") == 2
    assert ok("list_files", {"pattern": "src/**/{main,leaf}.py"}, ws).count("\n") == 1


def test_list_files_pattern_without_slash_hints_at_recursion(ws: Workspace) -> None:
    text = ok("list_files", {"directory": "src", "pattern": "*.py"}, ws)
    assert "No files match" in text and "'**/*.py'" in text


def test_list_files_caps_at_200_entries(repo: GitRepo) -> None:
    for n in range(250):
        repo.write(f"many/f{n:03d}.txt", "x\n")
    repo.commit()
    text = ok("list_files", {"directory": "many"}, repo.revision())
    lines = text.split("\n")
    assert lines[0] == "many/f000.txt" and lines[199] == "many/f199.txt"
    assert "Showing 200 of 250 entries" in text


def test_list_files_errors(ws: Workspace) -> None:
    assert "is a file" in err("list_files", {"directory": "README.md"}, ws)
    assert "not found" in err("list_files", {"directory": "nope"}, ws)


# --- search_text -----------------------------------------------------------------------


SEARCH_PATHS = [
    "worktree",
    "revision-on-disk",
    "revision-dirty-overlay",
    "revision-objects",
    "worktree-without-rg",
    "revision-on-disk-without-rg",
]


@pytest.fixture(params=SEARCH_PATHS)
def search_ws(
    request: pytest.FixtureRequest, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> Workspace:
    """Every engine path: rg on the working tree, rg for a clean checkout, git grep over
    objects, and git grep on disk where no rg binary is installed."""
    if request.param.endswith("-without-rg"):
        monkeypatch.setattr("reviewer.workspace.search.ripgrep_binary", lambda: None)
    if request.param.startswith("worktree"):
        return project.worktree()
    workspace = project.revision()
    if request.param == "revision-dirty-overlay":
        # Local changes: rg on disk for the files git vouches are the commit's, git grep
        # over objects for the one that differs.
        project.write("src/app/util.py", "def helper():\n    return 'dirty'\n")
        assert workspace.disk_differences == frozenset({"src/app/util.py"})
    elif request.param == "revision-objects":
        # Git objects alone (more than MAX_OVERLAY_FILES differ, or git cannot say).
        project.write("src/app/util.py", "def helper():\n    return 'dirty'\n")
        workspace.__dict__["disk_differences"] = None
    else:
        assert workspace.matches_checkout
    return workspace


def test_search_text_finds_lines(search_ws: Workspace) -> None:
    assert ok("search_text", {"pattern": r"def \w+\("}, search_ws).split("\n") == [
        "src/app/main.py:4: def handler(request):",
        "src/app/util.py:1: def helper():",
    ]


def test_search_text_answers_for_the_revision(search_ws: Workspace) -> None:
    expected = "src/app/util.py:2:     return 43"
    if search_ws.label == "the working tree":
        assert ok("search_text", {"pattern": "return 43"}, search_ws) == expected
    else:  # the dirty working tree must not leak into a revision's answers
        assert ok("search_text", {"pattern": "return"}, search_ws).split("\n")[1] == expected


def test_search_text_narrowed_by_path_and_file_pattern(search_ws: Workspace) -> None:
    assert ok("search_text", {"pattern": "handler", "path": "tests"}, search_ws) == (
        "tests/test_main.py:1: from app.main import handler"
    )
    assert ok("search_text", {"pattern": "handler", "filePattern": "main.py"}, search_ws) == (
        "src/app/main.py:4: def handler(request):"
    )
    assert ok(
        "search_text", {"pattern": "handler", "path": "src", "filePattern": "app/*.py"}, search_ws
    ).startswith("src/app/main.py:4:")
    assert ok("search_text", {"pattern": "LEAF", "path": "src/app/deep/er/est/leaf.py"}, search_ws)


def test_search_text_never_shows_ignored_or_git_files(search_ws: Workspace) -> None:
    assert ok("search_text", {"pattern": "SECRET|handler = 1"}, search_ws).startswith("No matches")
    assert ok("search_text", {"pattern": "repositoryformatversion"}, search_ws).startswith(
        "No matches"
    )


def test_search_text_case_insensitive_and_invalid_regex(search_ws: Workspace) -> None:
    assert ok("search_text", {"pattern": "(?i)DEF HELPER"}, search_ws).startswith(
        "src/app/util.py:1:"
    )
    assert "Invalid search" in err("search_text", {"pattern": "def ("}, search_ws)


def test_search_text_caps_at_100_matches(repo: GitRepo) -> None:
    repo.write("many.txt", "match\n" * 150)
    repo.commit()
    for workspace in (repo.revision(), repo.worktree()):
        lines = ok("search_text", {"pattern": "match"}, workspace).split("\n")
        assert len([ln for ln in lines if ln.startswith("many.txt:")]) == 100
        assert "there are more" in lines[-1]


def test_search_text_finds_untracked_files_only_in_the_working_tree(project: GitRepo) -> None:
    project.write("notes/new.py", "def brand_new():\n    pass\n")
    assert ok("search_text", {"pattern": "brand_new"}, project.worktree()).startswith(
        "notes/new.py:1:"
    )
    assert ok("search_text", {"pattern": "brand_new"}, project.revision()).startswith("No matches")


# --- get_file_structure ----------------------------------------------------------------


def test_get_file_structure_three_levels_without_hidden_entries(ws: Workspace) -> None:
    assert ok("get_file_structure", {}, ws).split("\n") == [
        "./",
        "  src/",
        "    app/",
        "      deep/ (1 file)",
        "      __init__.py",
        "      main.py",
        "      util.py",
        "  tests/",
        "    test_main.py",
        "  README.md",
        "  crlf.txt",
        "  docs-link.md",
        "  logo.png",
    ]


def test_get_file_structure_of_a_subdirectory(ws: Workspace) -> None:
    assert ok("get_file_structure", {"directory": "src/app/deep"}, ws).split("\n") == [
        "src/app/deep/",
        "  er/",
        "    est/",
        "      leaf.py",
    ]


# --- get_git_blame and get_git_log -----------------------------------------------------


def test_get_git_blame_names_commit_author_and_line(ws: Workspace) -> None:
    text = ok("get_git_blame", {"path": "src/app/util.py"}, ws)
    lines = text.split("\n")
    assert lines[0].endswith(" 2024-05-01 Alice  1: def helper():")
    assert lines[1].endswith(" 2024-05-01 Bob  2:     return 43")
    assert "Commits:" in text and "Bob: change the answer" in text


def test_get_git_blame_of_a_range(ws: Workspace) -> None:
    text = ok("get_git_blame", {"path": "src/app/main.py", "startLine": 4, "endLine": 4}, ws)
    assert text.split("\n")[0].endswith("Alice  4: def handler(request):")


def test_get_git_blame_marks_uncommitted_lines(project: GitRepo) -> None:
    project.write("src/app/util.py", "def helper():\n    return 44\n")
    text = ok("get_git_blame", {"path": "src/app/util.py"}, project.worktree())
    assert "uncommitted (working tree)  2:     return 44" in text
    committed = ok("get_git_blame", {"path": "src/app/util.py"}, project.revision())
    assert "return 43" in committed and "uncommitted" not in committed


def test_get_git_blame_of_an_untracked_file(project: GitRepo) -> None:
    project.write("new.py", "x = 1\n")
    assert "not committed yet" in err("get_git_blame", {"path": "new.py"}, project.worktree())


def test_get_git_log(ws: Workspace) -> None:
    lines = ok("get_git_log", {}, ws).split("\n")
    assert [ln.split(" ", 1)[1] for ln in lines] == [
        "2024-05-01 Bob: change the answer",
        "2024-05-01 Alice: initial import",
    ]
    assert ok("get_git_log", {"path": "README.md"}, ws).endswith("Alice: initial import")
    assert ok("get_git_log", {"count": 1}, ws).count("\n") == 0
    assert "No commits touch 'nope.txt'" in ok("get_git_log", {"path": "nope.txt"}, ws)


def test_get_git_log_follows_renames(repo: GitRepo) -> None:
    repo.write("old_name.py", "value = 1\n" * 20)
    repo.commit("add old name")
    repo.git("mv", "old_name.py", "new_name.py")
    repo.commit("rename")
    text = ok("get_git_log", {"path": "new_name.py"}, repo.revision())
    assert "rename" in text and "add old name" in text


# --- revisions -------------------------------------------------------------------------


def test_an_older_revision_is_read_from_git_objects(project: GitRepo) -> None:
    old = project.revision("HEAD~1")
    assert ok("read_file", {"path": "src/app/util.py"}, old) == "def helper():\n    return 42"
    assert ok("search_text", {"pattern": "return 4"}, old) == "src/app/util.py:2:     return 42"
    assert ok("get_git_log", {}, old).endswith("Alice: initial import")
    assert "Bob" not in ok("get_git_blame", {"path": "src/app/util.py"}, old)


def test_a_file_deleted_in_the_working_tree(project: GitRepo) -> None:
    (project.root / "README.md").unlink()
    assert "not found" in err("read_file", {"path": "README.md"}, project.worktree())
    assert ok("read_file", {"path": "README.md"}, project.revision()).startswith("# Demo")


# --- the runner ------------------------------------------------------------------------


def test_unknown_tool_lists_the_available_ones(ws: Workspace) -> None:
    message = err("write_file", {"path": "x"}, ws)
    assert "unknown tool 'write_file'" in message
    assert all(name in message for name in TOOLS)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ({"startLine": 1}, "path: Field required"),
        ({"path": 5}, "Input should be a valid string"),
    ],
)
def test_bad_arguments_come_back_as_errors(ws: Workspace, arguments: object, expected: str) -> None:
    assert expected in err("read_file", arguments, ws)


def test_arguments_may_be_a_json_string_or_double_encoded(ws: Workspace) -> None:
    args = json.dumps({"path": "README.md"})
    assert ok("read_file", args, ws).startswith("# Demo")
    assert ok("read_file", json.dumps(args), ws).startswith("# Demo")
    assert ok("get_git_log", "", ws)  # no arguments at all


def test_unknown_arguments_are_reported_not_fatal(ws: Workspace) -> None:
    text = ok("read_file", {"path": "README.md", "encoding": "latin-1"}, ws)
    assert text.startswith("[Ignored unknown argument(s): encoding.]\n# Demo")


def test_history_walks_are_bounded_in_time_and_say_so(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer.tools.git as git_tools

    repo.write("rare.py", "x = 1\n")
    repo.commit("add rare")
    # Enough history that walking it takes git a moment: a log of rare.py walks it all.
    base = repo.head()
    script = "".join(
        f"commit refs/heads/main\ncommitter A <a@x> {1700000000 + n} +0000\n"
        f"data 6\nstep{n % 10}\n{f'from {base}' + chr(10) if n == 0 else ''}"
        f"M 644 inline busy.txt\ndata {len(str(n)) + 1}\n{n}\n\n"
        for n in range(3000)
    )
    subprocess.run(
        ["git", "fast-import", "--quiet", "--force", "--done"],
        cwd=repo.root,
        input=script + "done\n",
        text=True,
        check=True,
    )
    repo.git("reset", "-q", "--hard", "main")
    workspace = repo.revision()
    whole = ok("get_git_log", {"path": "rare.py"}, workspace)
    assert whole.endswith("add rare") and "[History searched" not in whole
    monkeypatch.setattr(git_tools, "LOG_SECONDS", 0.0)
    workspace = repo.revision()  # a fresh one: a workspace keeps the walks it has done
    cut = ok("get_git_log", {"path": "rare.py"}, workspace)
    assert "No commits touch 'rare.py' in the history searched." in cut
    assert "[History searched for 0 s and stopped: older commits were not searched.]" in cut
    monkeypatch.setattr(git_tools, "BLAME_SECONDS", 0.0)
    message = err("get_git_blame", {"path": "rare.py"}, workspace)
    assert "did not finish in 0 s" in message and "ask for fewer lines" in message


def test_a_dirty_tree_searches_the_commit_from_disk_and_objects(project: GitRepo) -> None:
    project.write("src/app/util.py", "def helper():\n    return 'dirty'\n")
    project.write("untracked.py", "return 43\n")
    workspace = project.revision()
    assert workspace.disk_differences == frozenset({"src/app/util.py"})
    text = ok("search_text", {"pattern": "return"}, workspace)
    # The changed file as committed (from objects), never as it is on disk; untracked files
    # are not the commit's.
    assert "src/app/util.py:2:     return 43" in text
    assert "dirty" not in text and "untracked.py" not in text
    assert "src/app/main.py:" in text  # read from disk


def test_a_history_walk_is_done_once_per_workspace(
    project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer.tools.git as git_tools

    calls = []
    real = git_tools.run_git_for

    def counted(*args: object, **kwargs: object) -> tuple[bytes, bool]:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git_tools, "run_git_for", counted)
    workspace = project.revision()
    first = ok("get_git_log", {"path": "README.md"}, workspace)
    again = ok("get_git_log", {"path": "README.md"}, workspace)
    other = ok("get_git_log", {"path": "README.md", "count": 1}, workspace)
    assert first == again and len(calls) == 2 and other.count("\n") == 0
