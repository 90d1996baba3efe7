"""The lexical half of containment, and the glob matcher, as plain functions."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reviewer.errors import ToolError
from reviewer.workspace.globs import basename_or_path_matcher, glob_matcher
from reviewer.workspace.paths import check_glob, echo_path, normalize_path

ROOT = "/work/repo"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a/b.py", "a/b.py"),
        ("./a//b.py", "a/b.py"),
        ("a/./c/../b.py", "a/b.py"),
        ("a\\b.py", "a/b.py"),
        ("", ""),
        (".", ""),
        ("/work/repo/a.py", "a.py"),
        ("/work/repo", ""),
        ("%2e%2e/x", "%2e%2e/x"),
        ("-rf", "-rf"),
    ],
)
def test_normalize_path(raw: str, expected: str) -> None:
    assert normalize_path(raw, root=ROOT) == expected


def test_format_characters_name_a_file_and_are_echoed_visibly() -> None:
    # A changed file may be named with a zero-width joiner or a bidi mark: its path is a
    # name like any other, and every message shows such characters as escapes.
    assert normalize_path("a\u202eb", root="/r") == "a\u202eb"
    assert echo_path("a\u202eb") == '"a\\u202eb"'
    assert echo_path("x\u2028y") == '"x\\u2028y"'


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("../x", "resolves outside"),
        ("a/../../x", "resolves outside"),
        ("/etc/passwd", "resolves outside"),
        ("/work/repository/x", "resolves outside"),
        ("~/.ssh/id_rsa", "resolves outside"),
        ("C:\\Windows", "resolves outside"),
        (".git/config", ".git directory"),
        ("sub/.GIT/config", ".git directory"),
        (".git./config", ".git directory"),
        ("GIT~1/config", ".git directory"),
        ("a\x00b", "NUL byte"),
        ("a\nb", "control"),
        ("x" * 5000, "longer than"),
    ],
)
def test_normalize_path_refuses(raw: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        normalize_path(raw, root=ROOT)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("**/*.py", "x/a.pyc", False),
        ("*.py", "x/a.py", False),
        ("src/**", "src/a/b", True),
        ("src/**", "srcx/a", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("*.{py,md}", "a.md", True),
        ("{a,{b,c}}/x", "c/x", True),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "c.py", True),
        ("[!ab].py", "a.py", False),
        ("a?c", "a/c", False),
        ("*", ".hidden", True),
        ("a+b(c).py", "a+b(c).py", True),
        ("[unclosed", "[unclosed", True),
    ],
)
def test_glob_matcher(pattern: str, path: str, matches: bool) -> None:
    assert (glob_matcher(pattern).fullmatch(path) is not None) is matches


def test_file_filters_match_names_at_any_depth() -> None:
    assert basename_or_path_matcher("*.py").fullmatch("deep/er/x.py")
    assert not basename_or_path_matcher("src/*.py").fullmatch("lib/src/x.py")


@pytest.mark.parametrize("raw", ["../**", "/etc/*", "**/../../*", "~/*", ".git/**", "C:/x"])
def test_check_glob_refuses_climbing(raw: str) -> None:
    with pytest.raises(ToolError):
        check_glob(raw)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*{ab,a}*bc", "abc", True),  # the shorter alternative must still be tried
        ("*a*b", "xaxb", True),
        ("*a*a*b", "aab", True),
        ("**/**/x", "x", True),
        ("a/**/b/**/c", "a/b/c", True),
        ("a/**/b/**/c", "a/x/b/y/b/c", True),
        ("a/**/b/**/c", "a/x/c", False),
        ("{x,y}/{1,2}.py", "y/2.py", True),
        ("[{]a,b}", "{", False),
    ],
)
def test_glob_matcher_edge_cases(pattern: str, path: str, matches: bool) -> None:
    assert (glob_matcher(pattern).fullmatch(path) is not None) is matches


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*a" * 12 + "*b", "a" * 4000),
        ("**/a/" * 10 + "b", "a/" * 1500 + "c"),
        ("*?" * 20 + "x", "y" * 4000),
        ("*{a,b}" * 6 + "c", "ab" * 2000),
    ],
)
def test_hostile_globs_stay_fast(pattern: str, path: str) -> None:
    # A backtracking matcher takes years on these (a dozen nested stars over 4,000
    # characters); a linear one, milliseconds. The match runs in a child process: a regex
    # engine that backtracks holds the interpreter's lock for the whole match, so no thread
    # of this process could stop it, and a regression would hang the suite instead of
    # failing. The timeout is a guard against that hang and measures nothing.
    script = (
        "import sys; from reviewer.workspace.globs import glob_matcher; "
        "print(glob_matcher(sys.argv[1]).fullmatch(sys.argv[2]))"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, pattern, path],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the match did not finish")
    assert done.stdout.strip() == "None"


def test_too_many_brace_alternatives_are_refused() -> None:
    with pytest.raises(ToolError, match="alternatives"):
        glob_matcher("{a,b}" * 7)
