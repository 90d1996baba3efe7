"""Hostile-input security tests: every tool, every workspace mode, every search engine.

The model driving the tools is untrusted (prompt injection can steer it), and so is the
repository under review (a pull request can commit any symlink or file name). These tests
throw the inputs an attacker would try at the real tools over real repositories, and check
two things each time: the specific refusal (or safe answer) comes back, and nothing from
outside the reviewed files shows up. Canaries planted outside the repository, in `.git`, in
nested repositories and in the environment make a leak visible wherever it happens, and
every call runs under a watchdog so that a hang fails the test instead of the whole run.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import secrets
import signal
import socket
import stat
import string
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reviewer.errors import ReviewerError
from reviewer.tools import ToolResult, run_tool
from reviewer.tools.files import _READ_FILE_BYTES as READ_FILE_BYTES
from reviewer.tools.files import MAX_SCAN_BYTES
from reviewer.workspace import (
    Kind,
    RevisionWorkspace,
    Workspace,
    WorktreeWorkspace,
    open_workspace,
)
from reviewer.workspace.paths import echo_path
from reviewer.workspace.search import search
from tests.conftest import WORKSPACE_MODES, GitRepo, workspace_for

# --- canaries ------------------------------------------------------------------------------
# Fresh per run, so a match can only come from a leak, never from a stale file or this source.
# None of them looks like a token format: the redactor must not be what hides a leak.
OUTSIDE_CANARY = f"outside-canary-{secrets.token_hex(12)}"
GITCONFIG_CANARY = f"gitcfg-canary-{secrets.token_hex(12)}"
NESTED_CANARY = f"nested-canary-{secrets.token_hex(12)}"
IGNORED_CANARY = f"ignored-canary-{secrets.token_hex(12)}"
ENV_CANARY_NAME = "CANARY_API_TOKEN"
ENV_CANARY = "cnry" + secrets.token_hex(13)
# The secret env value is redacted by design, which would also hide a read of
# /proc/self/environ; this innocent-looking variable is not, so it shows such a leak.
ENV_MARKER_NAME = "CANARY_MARKER"
ENV_MARKER = f"canary marker {secrets.token_hex(6)} env"
PASSWD_MARKER = "root:x:0:0"
LEAK_MARKERS = (
    OUTSIDE_CANARY,
    GITCONFIG_CANARY,
    NESTED_CANARY,
    IGNORED_CANARY,
    ENV_CANARY,
    ENV_MARKER,
    PASSWD_MARKER,
)
assert len(ENV_CANARY) == 30

README_MARKER = "readme-marker"
# A guard only: a call still running after this long has hung (a FIFO, a device, a runaway
# regex). No test here asserts how fast a call was: machines are shared and noisy. What a
# bound promises is proven by the answer (complete, cut, stopped at the tool's own limit)
# and by counts (bytes read, engine output consumed, processes started).
HANG_SECONDS = 60.0
MAX_TOOL_CHARS = 61_000
TIMEOUT_NOTICE = "Search stopped after 5 s"
MORE_NOTICE = "there are more"

# Search has three engine paths: ripgrep over the working tree, ripgrep over a clean checkout
# of the reviewed commit, and `git grep -P` over the objects of a commit that is not checked
# out. "revision" is HEAD of a clean checkout in every scene; HEAD~1 is never checked out.
# revision-unchecked: HEAD~1 with a clean checkout of HEAD (rg on disk for what is the same,
# git grep over objects for what differs); revision-objects: the same commit when nothing
# on disk can be trusted (git grep over objects alone).
ENGINES = ("worktree", "revision", "revision-unchecked", "revision-objects")
assert set(WORKSPACE_MODES) == {"worktree", "revision"}


def canary_pattern(canary: str) -> str:
    """A regex that matches `canary` but does not contain it, so echoing it is not a leak."""
    return canary[:-6] + "[0-9a-z ]{6}"


# --- running tools ---------------------------------------------------------------------------


def assert_no_leak(text: str) -> None:
    for marker in LEAK_MARKERS:
        assert marker not in text, f"leaked {marker!r} in:\n{text[:3000]}"


def call(tool: str, arguments: object, workspace: Workspace) -> ToolResult:
    """Run a tool under a watchdog: a hang (a FIFO, a device, a runaway regex) fails the test."""
    box: list[ToolResult] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            box.append(run_tool(tool, arguments, workspace))
        except BaseException as exc:  # run_tool promises not to raise; report it if it does
            failure.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_SECONDS)
    if thread.is_alive():
        pytest.fail(f"{tool}({arguments!r:.300}) did not return within {HANG_SECONDS:.0f} s")
    if failure:
        raise AssertionError(f"{tool} raised instead of answering") from failure[0]
    result = box[0]
    # Every single output is checked, so no test can pass while something leaks on the side.
    assert_no_leak(result.text)
    assert len(result.text) <= MAX_TOOL_CHARS
    return result


# --- counting the work a call does -------------------------------------------------------------


@dataclass
class Work:
    """What the tools did, counted at their edges: what each file read returned, which
    processes they started, and how much of the search engines' output they consumed."""

    reads: list[tuple[str, int]] = field(default_factory=list)  # (path, bytes returned)
    processes: list[subprocess.Popen[Any]] = field(default_factory=list)
    engine_output_bytes: int = 0
    history_output_bytes: int = 0

    def bytes_read(self, rel: str | None = None) -> int:
        return sum(size for path, size in self.reads if rel is None or path == rel)

    def commands(self) -> list[str]:
        """Each process started, by name: the program, or git's subcommand (`git grep`)."""
        names = []
        for process in self.processes:
            argv = [str(arg) for arg in process.args]
            program = os.path.basename(argv[0])
            at = 1
            while program == "git" and at < len(argv) and argv[at].startswith("-"):
                at += 2 if argv[at] in ("-c", "-C") else 1
            names.append(f"git {argv[at]}" if program == "git" and at < len(argv) else program)
        return names

    def started(self, *names: str) -> list[str]:
        return [name for name in self.commands() if name in names]

    def clear(self) -> None:
        self.reads.clear()
        self.processes.clear()
        self.engine_output_bytes = self.history_output_bytes = 0


class _CountingStream:
    def __init__(self, stream: Any, work: Work) -> None:
        self._stream, self._work = stream, work

    def read1(self, size: int = -1) -> bytes:
        data = self._stream.read1(size)
        self._work.engine_output_bytes += len(data)
        return data

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._work.engine_output_bytes += len(data)
        return data


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    import reviewer.tools.git as git_tools
    import reviewer.workspace.search as search_module

    counted = Work()
    for cls in (WorktreeWorkspace, RevisionWorkspace):
        original = cls.read_bytes

        def read_bytes(
            self: Workspace, rel: str, limit: int, _original: Any = original
        ) -> bytes:
            data = _original(self, rel, limit)
            counted.reads.append((rel, len(data)))
            return data

        monkeypatch.setattr(cls, "read_bytes", read_bytes)

    original_init = subprocess.Popen.__init__

    def popen_init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        counted.processes.append(self)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen_init)
    records = search_module._records
    monkeypatch.setattr(
        search_module, "_records", lambda stream: records(_CountingStream(stream, counted))
    )
    run_git_for = git_tools.run_git_for

    def counting_run_git_for(*args: Any, **kwargs: Any) -> tuple[bytes, bool]:
        out, stopped = run_git_for(*args, **kwargs)
        counted.history_output_bytes += len(out)
        return out, stopped

    monkeypatch.setattr(git_tools, "run_git_for", counting_run_git_for)
    return counted


@pytest.fixture(autouse=True)
def canary_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Set in the real process environment (putenv), so /proc/self/environ holds them too.
    monkeypatch.setenv(ENV_CANARY_NAME, ENV_CANARY)
    monkeypatch.setenv(ENV_MARKER_NAME, ENV_MARKER)


# --- expected outcomes -----------------------------------------------------------------------

OUTSIDE = "outside"  # the canonical refusal, naming the raw path
GIT_DIR = "git-dir"  # the .git refusal, naming the raw path
DENIED = "denied"  # some other "Access denied" (a symlink to a refused target)
INVALID = "invalid"  # refused before any lookup (NUL, control characters, too long)
NOT_FOUND = "not-found"  # taken literally and not in the listing
LOOP = "loop"  # a symlink cycle
UNREADABLE = "unreadable"  # the file system refused (e.g. a name longer than NAME_MAX)
LOG = "log"  # get_git_log answers with commits of the path itself, never file content
LISTED = "listed"  # an answer made only of paths the listing holds
_LOG_LINE = re.compile(r"[0-9a-f]{7,40} \d{4}-\d\d-\d\d .+?: .*")
_HIT_LINE = re.compile(r"(.+?):(\d+): (.*)")


def is_log_listing(text: str) -> bool:
    if text.startswith("No commits touch "):
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(
        _LOG_LINE.fullmatch(line) or line.startswith("[count is capped") for line in lines
    )


def outside_message(raw: str) -> str:
    # The raw path as written, or quoted with escapes when it holds a character that could
    # break or hide part of the line (echo_path).
    return f"Error: Access denied: path '{echo_path(raw)}' resolves outside the working directory."


def git_dir_message(raw: str) -> str:
    return (
        f"Error: Access denied: path '{echo_path(raw)}' is inside a .git directory, which is "
        "not readable."
    )


def matches_kind(kind: str, tool: str, result: ToolResult, raw: str) -> bool:
    text = result.text
    if kind == OUTSIDE:
        return result.is_error and text == outside_message(raw)
    if kind == GIT_DIR:
        return result.is_error and text == git_dir_message(raw)
    if kind == DENIED:
        return result.is_error and text.startswith("Error: Access denied: ")
    if kind == INVALID:
        return result.is_error and text.startswith("Error: Invalid path")
    if kind == LOOP:
        return result.is_error and "too many levels of symbolic links" in text
    if kind == UNREADABLE:
        return result.is_error and "cannot be read" in text
    if kind == NOT_FOUND:
        if tool == "get_git_log":  # it names a pathspec, not a file: no match is not an error
            return not result.is_error and text.startswith("No commits touch ")
        return result.is_error and " not found: " in text
    if kind == LOG:
        return not result.is_error and is_log_listing(text)
    raise AssertionError(f"unknown kind {kind}")


def assert_kind(tool: str, result: ToolResult, raw: str, kinds: Iterable[str]) -> None:
    kinds = tuple(kinds)
    assert any(matches_kind(k, tool, result, raw) for k in kinds), (
        f"{tool}({raw!r:.200}) should be one of {kinds}, got:\n{result.text[:1500]}"
    )


def search_hits(text: str) -> list[tuple[str, int, str]]:
    hits = []
    for line in text.split("\n\n[")[0].splitlines():
        match = _HIT_LINE.fullmatch(line)
        if match:
            hits.append((match[1], int(match[2]), match[3]))
    return hits


def listed_entries(text: str) -> list[str]:
    """The paths of a list_files answer, without the kind labels and the notices."""
    entries = []
    for line in text.split("\n\n[")[0].splitlines():
        entry = line.removesuffix(" (symlink)").removesuffix("/ (submodule, not readable)")
        entries.append(entry.rstrip("/"))
    return entries


# Every tool that takes a path, with the smallest arguments that make it touch that path.
PATH_CALLS: dict[str, Callable[[str], dict[str, Any]]] = {
    "read_file": lambda p: {"path": p},
    "read_file_lines": lambda p: {"path": p, "startLine": 1, "endLine": 20},
    "list_files": lambda p: {"directory": p},
    "search_text": lambda p: {"pattern": ".", "path": p},
    "get_file_structure": lambda p: {"path": p},
    "get_git_blame": lambda p: {"path": p},
    "get_git_log": lambda p: {"path": p},
}
FILE_TOOLS = ("read_file", "read_file_lines", "get_git_blame", "search_text")


def tool_modes(tools: Iterable[str]) -> list[Any]:
    """(tool, mode) pairs: both workspace modes, and all three engines for search_text."""
    return [
        pytest.param(tool, mode, id=f"{tool}-{mode}")
        for tool in tools
        for mode in (ENGINES if tool == "search_text" else WORKSPACE_MODES)
    ]


def case(raw: str, *kinds: str, id: str | None = None) -> Any:
    return pytest.param(raw, frozenset(kinds), id=id or ascii(raw)[1:-1][:60])


# --- scenes: real repositories with hostile content, built once per module --------------------


@dataclass
class Scene:
    """A repository at base/repo, with canaries at base/outside and base/repo-evil."""

    repo: GitRepo
    base: Path
    _workspaces: dict[str, Workspace] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.repo.root

    def expand(self, template: str) -> str:
        return template.replace("<ROOT>", str(self.root)).replace("<BASE>", str(self.base))

    def workspace(self, mode: str) -> Workspace:
        # Workspaces only read, and the scene does not change after it is built: share them.
        if mode not in self._workspaces:
            self._workspaces[mode] = self._open(mode)
        return self._workspaces[mode]

    def _open(self, mode: str) -> Workspace:
        if mode in WORKSPACE_MODES:
            workspace = workspace_for(self.repo, mode)
        elif mode == "revision-unchecked":
            workspace = self.repo.revision("HEAD~1")
        elif mode == "revision-objects":
            workspace = self.repo.revision("HEAD~1")
            # What a dirty working tree gives: no file on disk may stand in for the commit.
            workspace.__dict__["disk_differences"] = None
        else:
            raise AssertionError(mode)
        # The engine a search uses follows from these; check the premise, not just the label.
        if mode == "revision":
            assert isinstance(workspace, RevisionWorkspace) and workspace.matches_checkout
        if mode in ("revision-unchecked", "revision-objects"):
            assert isinstance(workspace, RevisionWorkspace) and not workspace.matches_checkout
        return workspace


def new_scene(factory: pytest.TempPathFactory, name: str) -> Scene:
    return scene_at(factory.mktemp(name).resolve())


def scene_at(base: Path) -> Scene:
    for folder in ("outside", "repo-evil"):
        (base / folder).mkdir()
        (base / folder / "secret.txt").write_text(OUTSIDE_CANARY + "\n")
    return Scene(GitRepo(base / "repo"), base)


def seal(scene: Scene) -> None:
    """Commit the content, then one more commit, so that HEAD~1 is a commit not checked out."""
    scene.repo.commit("hostile content")
    scene.repo.write("later.txt", "a later commit, so that HEAD~1 is not checked out\n")
    scene.repo.commit("later")


DASH_FILES = {
    "--output=pwned.txt": "dash-output-file\n",
    "-n": "dash-n-file\n",
    "--help": "dash-help-file\n",
}
NFC_NAME = "unicode/caf\u00e9.txt"
NFD_NAME = "unicode/nfd-cafe\u0301.txt"
DEEP = "../" * 40  # more `..` than any temp folder is deep: reaches /

# Committed symlinks. <BASE> and <ROOT> are filled in when the scene is built.
LINKS = {
    # Stay inside: these must work.
    "links/inside": "../docs/readme.txt",
    "links/chain": "inside",
    "links/chain2": "chain",
    "docsdir": "docs",
    "dot": ".",
    "sub/up": "..",
    # Leave the repository.
    "outlink": "../outside/secret.txt",
    "outlink_abs": "<BASE>/outside/secret.txt",
    "outdir": "../outside",
    "outdir_abs": "<BASE>/outside",
    "hop1": "hop2",
    "hop2": "../outside/secret.txt",
    "sneaky": "sub/../../outside/secret.txt",
    "sub/deep_out": "../../outside/secret.txt",
    "sibling": "../repo-evil/secret.txt",
    "environ": "/proc/self/environ",
    "environ_rel": DEEP + "proc/self/environ",
    "passwd": DEEP + "etc/passwd",
    "zero": "/dev/zero",
    "urandom": "/dev/urandom",
    "zero_rel": DEEP + "dev/zero",
    # Cycles.
    "loop_a": "loop_b",
    "loop_b": "loop_a",
    "self_loop": "self_loop",
    # Into .git.
    "gitconf": ".git/config",
    "gitdir": ".git",
    "gitconf_up": "sub/../.git/config",
    # An absolute link to a file of the repository itself.
    "abs_own": "<ROOT>/docs/readme.txt",
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = new_scene(tmp_path_factory, "hostile")
    repo, root = scene.repo, scene.root
    repo.write("docs/readme.txt", f"{README_MARKER}: inside content\nsecond line\n")
    repo.write("src/app.py", "def main() -> int:\n    return 0\n")
    repo.write("sub/placeholder.txt", "placeholder\n")
    repo.write("notes/flags.txt", "use --files here\n")
    repo.write(".gitignore", ".env\nignored/\n")
    # If a search pattern ever became `--pre=sh`, ripgrep would run this for every file.
    repo.write("evil.sh", f"touch {scene.base}/pwned-pre\n")
    for name, text in DASH_FILES.items():
        repo.write(name, text)
    repo.write(NFC_NAME, "nfc-file\n")
    repo.write(NFD_NAME, "nfd-file\n")
    for link, target in LINKS.items():
        repo.symlink(link, scene.expand(target))
    # A repository inside the folder before the commit: git records it as a gitlink (160000).
    gitlinked = GitRepo(root / "gitlinked")
    gitlinked.write("inner.txt", NESTED_CANARY + "\n")
    gitlinked.commit("inner")
    repo.git("config", "http.extraheader", f"AUTHORIZATION: bearer {GITCONFIG_CANARY}")
    with (root / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(f"# {GITCONFIG_CANARY}\n")
    seal(scene)
    assert repo.git("ls-files", "-s", "gitlinked").startswith("160000")
    assert repo.git("ls-files", "-s", "outdir").startswith("120000")
    # After the commits: an untracked nested repository (git lists it as `nested/`).
    nested = GitRepo(root / "nested")
    nested.write("inner.txt", NESTED_CANARY + "\n")
    nested.commit("inner")
    nested.git("config", "canary.value", GITCONFIG_CANARY)
    # Ignored files hold a developer's local secrets; the tools never list them.
    repo.write(".env", f"LOCAL_PASSWORD={IGNORED_CANARY}\n")
    repo.write("ignored/creds.txt", f"{IGNORED_CANARY}\n")
    return scene


# --- the premise: three engines ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ENGINES)
def test_search_modes_select_the_three_engine_paths(hostile: Scene, mode: str) -> None:
    workspace = hostile.workspace(mode)
    outcome = search(
        workspace,
        README_MARKER,
        base="",
        base_is_file=False,
        file_glob=None,
        max_hits=5,
        timeout=5.0,
    )
    expected = {
        "worktree": "rg",
        "revision": "rg",
        "revision-unchecked": "rg+git grep",
        "revision-objects": "git grep",
    }[mode]
    assert outcome.engine == expected
    assert [hit.path for hit in outcome.hits] == ["docs/readme.txt"]


# --- `..` in every spelling, absolute paths, home, Windows ------------------------------------

DOTDOT = [
    case("../outside/secret.txt", OUTSIDE),
    case("..", OUTSIDE),
    case("../", OUTSIDE),
    case("docs/../../outside/secret.txt", OUTSIDE),
    case("./../outside/secret.txt", OUTSIDE),
    case("..//outside/secret.txt", OUTSIDE),
    case(".//..//..//outside/secret.txt", OUTSIDE),
    case("docs/../..", OUTSIDE, id="trailing-dotdot"),
    case("../outside/..", OUTSIDE, id="trailing-dotdot-outside"),
    case("docs/../docs/../../outside/secret.txt", OUTSIDE),
    case("docs/./../../repo/docs/readme.txt", OUTSIDE, id="out-and-back-in"),
    case(" ../outside/secret.txt", OUTSIDE, id="leading-space"),
    case("../outside/secret.txt ", OUTSIDE, id="trailing-space"),
    case("../../../../../../../../../../../../etc/passwd", OUTSIDE),
    case("docsdir/../../outside/secret.txt", OUTSIDE),
    # Taken literally: these are names, not parents.
    case(".../outside/secret.txt", NOT_FOUND),
    case("..../outside/secret.txt", NOT_FOUND),
    case("..;/outside/secret.txt", NOT_FOUND),
]

ABSOLUTE = [
    case("/etc/passwd", OUTSIDE),
    case("//etc/passwd", OUTSIDE),
    case("/", OUTSIDE),
    case("/..", OUTSIDE),
    case("/proc/self/environ", OUTSIDE),
    case("/dev/zero", OUTSIDE),
    case("<ROOT>/../outside/secret.txt", OUTSIDE, id="root-then-dotdot"),
    case("<ROOT>/..", OUTSIDE, id="root-dotdot"),
    case("<ROOT>/docs/../../outside/secret.txt", OUTSIDE, id="root-docs-dotdot"),
    case("<BASE>/outside/secret.txt", OUTSIDE, id="outside-absolute"),
    # Shares the root as a string prefix but is a sibling folder.
    case("<ROOT>-evil/secret.txt", OUTSIDE, id="sibling-prefix"),
    case("<ROOT>/../repo-evil/secret.txt", OUTSIDE, id="sibling-via-dotdot"),
    case("~", OUTSIDE),
    case("~/.ssh/id_rsa", OUTSIDE),
    case("~root/.bashrc", OUTSIDE),
    case("~/../../etc/passwd", OUTSIDE),
    case("$HOME/.ssh/id_rsa", NOT_FOUND, id="dollar-home-is-literal"),
]

WINDOWS = [
    case("..\\outside\\secret.txt", OUTSIDE),
    case("..\\..\\x", OUTSIDE),
    case("docs\\..\\..\\outside\\secret.txt", OUTSIDE),
    case("..\\/outside/secret.txt", OUTSIDE),
    case("C:\\Windows\\win.ini", OUTSIDE),
    case("C:\\Windows", OUTSIDE),
    case("C:/x", OUTSIDE),
    case("c:secret.txt", OUTSIDE),
    case("C:", OUTSIDE),
    case("\\etc\\passwd", OUTSIDE),
    case("\\\\server\\share\\x", OUTSIDE),
    case("\\\\?\\C:\\x", OUTSIDE),
    case("\\\\.\\pipe\\x", OUTSIDE),
]

# Percent-encoding is not decoded anywhere: these are file names, which do not exist.
ENCODED = [
    case("%2e%2e%2foutside%2fsecret.txt", NOT_FOUND),
    case("%2e%2e/outside/secret.txt", NOT_FOUND),
    case("..%2foutside%2fsecret.txt", NOT_FOUND),
    case("%252e%252e%252foutside%252fsecret.txt", NOT_FOUND),
    case("..%252f..%252fetc%252fpasswd", NOT_FOUND),
    case("%2e%2e%5coutside%5csecret.txt", NOT_FOUND),
    case("..%c0%afoutside%c0%afsecret.txt", NOT_FOUND),
    case("%2e%2e", NOT_FOUND),
    case("%00", NOT_FOUND),
    case("file:///etc/passwd", NOT_FOUND),
]

CONTROL = [
    case("docs/readme.txt\x00", INVALID),
    case("\x00", INVALID),
    case("../outside/secret.txt\x00.txt", INVALID, OUTSIDE),
    case("docs/readme.txt\x00/../../../outside/secret.txt", INVALID),
    case("docs\n../../outside/secret.txt", INVALID),
    case("docs/readme.txt\r", INVALID),
    case("docs/\x1b[2J", INVALID),
    case("docs/\x7f", INVALID),
]

LONG = [
    case("a/" * 2500, INVALID, id="5000-chars-of-components"),
    case("../" * 1700 + "outside/secret.txt", INVALID, id="5100-chars-of-dotdot"),
    case("a" * 5000, INVALID, id="5000-char-name"),
    case("x/../" * 780 + "../outside/secret.txt", OUTSIDE, id="780-in-out-then-out"),
    case("a/" * 600 + "../" * 601 + "outside/secret.txt", OUTSIDE, id="600-down-601-up"),
    case("./" * 2000 + "../outside/secret.txt", OUTSIDE, id="2000-dots-then-out"),
    case("docs/" + "a" * 300 + "/../../../outside/secret.txt", OUTSIDE, id="long-name-then-out"),
    case("a/" * 2000 + "x", NOT_FOUND, UNREADABLE, id="2000-components"),
    case("a" * 300, NOT_FOUND, UNREADABLE, id="name-over-255"),
]

UNICODE = [
    case("\uff0e\uff0e\uff0foutside\uff0fsecret.txt", NOT_FOUND, id="fullwidth-dots-slashes"),
    case("\uff0e\uff0e/outside/secret.txt", NOT_FOUND, id="fullwidth-dots"),
    case("..\uff0foutside\uff0fsecret.txt", NOT_FOUND, id="fullwidth-slashes"),
    # NFKC would turn these into `..` or `.`; nothing may normalize them that way.
    case("\u2025/outside/secret.txt", NOT_FOUND, id="two-dot-leader"),
    case("\ufe52\ufe52/outside/secret.txt", NOT_FOUND, id="small-full-stops"),
    case("..\u2215outside\u2215secret.txt", NOT_FOUND, id="division-slash"),
    case("..\u2044outside\u2044secret.txt", NOT_FOUND, id="fraction-slash"),
    # Format characters are legal in names (a changed file may hold them), so such a path
    # is a literal name: found or not, never a way out; messages show them as escapes.
    case("\u202e../outside/secret.txt", NOT_FOUND, id="rtl-override"),
    case("docs/\u202etxt.emdaer", NOT_FOUND, id="rtl-override-name"),
    case("..\u200d/outside/secret.txt", NOT_FOUND, id="zero-width-joiner"),
    case(".\u200b./outside/secret.txt", NOT_FOUND, id="zero-width-space"),
    case("\ufeff../outside/secret.txt", NOT_FOUND, id="byte-order-mark"),
    case("..\u0301/outside/secret.txt", NOT_FOUND, id="combining-acute"),
    case(".\u0338./outside/secret.txt", NOT_FOUND, id="combining-overlay"),
    case("..\u00a0/outside/secret.txt", NOT_FOUND, id="nbsp-inside"),
    # Unicode whitespace around the whole path is stripped: the `..` under it is still seen.
    case("\u00a0../outside/secret.txt", OUTSIDE, id="nbsp-leading"),
    case("\u3000../outside/secret.txt", OUTSIDE, id="ideographic-space-leading"),
    case("\u2028../outside/secret.txt", OUTSIDE, id="line-separator-leading"),
    case("\uff0egit/config", NOT_FOUND, GIT_DIR, id="fullwidth-dot-git"),
    case(".\uff47\uff49\uff54/config", NOT_FOUND, GIT_DIR, id="fullwidth-git"),
]

PATH_TABLES = {
    "dotdot": DOTDOT,
    "absolute": ABSOLUTE,
    "windows": WINDOWS,
    "encoded": ENCODED,
    "control": CONTROL,
    "long": LONG,
    "unicode": UNICODE,
}


def check_path(scene: Scene, tool: str, mode: str, template: str, kinds: Iterable[str]) -> None:
    raw = scene.expand(template)
    result = call(tool, PATH_CALLS[tool](raw), scene.workspace(mode))
    assert_kind(tool, result, raw, kinds)


@pytest.mark.parametrize("raw,kinds", DOTDOT)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_dotdot_in_every_spelling_is_refused(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", ABSOLUTE)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_absolute_and_home_paths_are_refused(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", WINDOWS)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_windows_separators_and_drives_are_refused(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", ENCODED)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_url_encoded_paths_are_literal_names(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", CONTROL)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_nul_and_control_characters_are_refused(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", LONG)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_overlong_paths_are_refused_or_not_found(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", UNICODE)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_unicode_lookalikes_are_not_separators(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize(
    "requested,actual,content",
    [
        pytest.param(unicodedata.normalize("NFD", NFC_NAME), NFC_NAME, "nfc", id="nfd-for-nfc"),
        pytest.param(unicodedata.normalize("NFC", NFD_NAME), NFD_NAME, "nfd", id="nfc-for-nfd"),
    ],
)
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_nfc_and_nfd_names_find_the_same_file_or_nothing(
    hostile: Scene, mode: str, requested: str, actual: str, content: str
) -> None:
    workspace = hostile.workspace(mode)
    assert requested != actual
    content += "-file"
    exact = call("read_file", {"path": actual}, workspace)
    assert not exact.is_error and exact.text == content
    other = call("read_file", {"path": requested}, workspace)
    # Either spelling may or may not be folded; it may never reach anything but that file.
    assert other.text == content or (other.is_error and " not found: " in other.text)


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(json.dumps({"path": "../outside/secret.txt"}), id="json"),
        pytest.param(json.dumps(json.dumps({"path": "../outside/secret.txt"})), id="double-json"),
        pytest.param('{"path": "..\\u002foutside\\u002fsecret.txt"}', id="json-escaped-slash"),
        pytest.param('{"path": "\\u002e\\u002e/outside/secret.txt"}', id="json-escaped-dots"),
    ],
)
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_json_string_arguments_are_contained(hostile: Scene, mode: str, arguments: str) -> None:
    result = call("read_file", arguments, hostile.workspace(mode))
    assert result.text == outside_message("../outside/secret.txt")


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param('{"path": "docs/readme.txt\\u0000../../../etc/passwd"}', id="json-nul"),
        pytest.param({"path": ["../outside/secret.txt"]}, id="list"),
        pytest.param({"path": {"$ne": ""}}, id="object"),
        pytest.param({"path": None}, id="null"),
        pytest.param({"path": 0}, id="number"),
        pytest.param('["../outside/secret.txt"]', id="json-array"),
    ],
)
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_malformed_path_arguments_are_refused(hostile: Scene, mode: str, arguments: object) -> None:
    result = call("read_file", arguments, hostile.workspace(mode))
    assert result.is_error
    assert result.text.startswith(("Error: invalid arguments", "Error: Invalid path", "Error: arg"))


# --- symlinks ------------------------------------------------------------------------------

SYMLINK_ESCAPES = [
    case("outlink", OUTSIDE),
    case("outlink_abs", OUTSIDE),
    case("outdir", OUTSIDE),
    case("outdir/secret.txt", OUTSIDE),
    case("outdir/", OUTSIDE),
    case("outdir_abs", OUTSIDE),
    case("outdir_abs/secret.txt", OUTSIDE),
    case("hop1", OUTSIDE, id="chain-that-escapes"),
    case("sneaky", OUTSIDE),
    case("sub/deep_out", OUTSIDE),
    case("sibling", OUTSIDE),
    case("environ", OUTSIDE),
    case("environ_rel", OUTSIDE),
    case("passwd", OUTSIDE),
    case("zero", OUTSIDE),
    case("urandom", OUTSIDE),
    case("zero_rel", OUTSIDE),
    case("docsdir/../outlink", OUTSIDE, id="via-dir-link-to-escape"),
    case("links/../outdir/secret.txt", OUTSIDE, id="dotdot-then-link"),
    # Lexically these land inside (and on nothing); a kernel walk would reach the canary,
    # since `dot` is the root and `sub/up` is its parent's child `..`.
    case("dot/../outside/secret.txt", NOT_FOUND, OUTSIDE),
    case("sub/up/../outside/secret.txt", NOT_FOUND, OUTSIDE),
    case("sub/up/../../outside/secret.txt", NOT_FOUND, OUTSIDE),
]
SYMLINK_GIT = [
    case("gitconf", DENIED),
    case("gitdir", DENIED),
    case("gitdir/config", DENIED),
    case("gitconf_up", DENIED),
    case("dot/.git/config", GIT_DIR),
    case("sub/up/.git/config", GIT_DIR),
]
SYMLINK_LOOPS = [
    case("loop_a", LOOP),
    case("loop_b", LOOP),
    case("self_loop", LOOP),
    case("loop_a/x", LOOP),
]


def check_link(scene: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]) -> None:
    # get_git_log takes a pathspec and never reads through a link: it must show only the
    # link's own commits (or none), whatever the link points at.
    if tool == "get_git_log" and kinds - {GIT_DIR}:
        kinds = frozenset({LOG})
    check_path(scene, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", SYMLINK_ESCAPES)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_symlinks_out_of_the_repository_are_refused(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_link(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", SYMLINK_GIT)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_symlinks_into_git_dir_are_refused(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_link(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize("raw,kinds", SYMLINK_LOOPS)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_symlink_loops_end_with_an_error(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_link(hostile, tool, mode, raw, kinds)


INSIDE_LINKS = [
    "links/inside",
    "links/chain",
    "links/chain2",
    "docsdir/readme.txt",
    "dot/docs/readme.txt",
    "sub/up/docs/readme.txt",
    "sub/up/sub/up/dot/docsdir/readme.txt",
    "<ROOT>/docsdir/readme.txt",
]


@pytest.mark.parametrize("raw", INSIDE_LINKS)
@pytest.mark.parametrize("tool,mode", tool_modes(FILE_TOOLS))
def test_symlinks_that_stay_inside_work(hostile: Scene, tool: str, mode: str, raw: str) -> None:
    # The control for the refusals above: containment must not simply refuse every link.
    raw = hostile.expand(raw)
    arguments = PATH_CALLS[tool](raw)
    if tool == "search_text":
        arguments["pattern"] = README_MARKER
    result = call(tool, arguments, hostile.workspace(mode))
    assert not result.is_error, result.text
    expected = {
        "read_file": f"{README_MARKER}: inside content\nsecond line",
        "read_file_lines": f"1: {README_MARKER}: inside content\n2: second line",
        "search_text": f"docs/readme.txt:1: {README_MARKER}: inside content",
    }
    if tool in expected:
        assert result.text.startswith(expected[tool])
    else:
        assert f"1: {README_MARKER}: inside content" in result.text


@pytest.mark.parametrize("tool,mode", tool_modes(("list_files", "get_file_structure")))
def test_directory_symlink_inside_lists_its_target(hostile: Scene, tool: str, mode: str) -> None:
    result = call(tool, PATH_CALLS[tool]("docsdir"), hostile.workspace(mode))
    assert not result.is_error and "readme.txt" in result.text


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_absolute_symlink_to_own_file_is_refused_or_reads_that_file(
    hostile: Scene, mode: str
) -> None:
    result = call("read_file", {"path": "abs_own"}, hostile.workspace(mode))
    assert result.text == outside_message("abs_own") or result.text.startswith(README_MARKER)


@pytest.mark.parametrize("pattern", ["**", "**/*", "*", "out*/**", "**/secret*"])
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_listing_never_descends_symlinked_directories(
    hostile: Scene, mode: str, pattern: str
) -> None:
    workspace = hostile.workspace(mode)
    result = call("list_files", {"pattern": pattern}, workspace)
    assert not result.is_error
    entries = listed_entries(result.text)
    listing = set(workspace.listing.paths)
    assert all(e in listing for e in entries if not e.startswith("No files match")), entries
    assert not any(e.startswith(("outdir/", "outdir_abs/", "dot/", "sub/up/")) for e in entries)
    assert "secret.txt" not in result.text


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(canary_pattern(OUTSIDE_CANARY), id="outside-canary"),
        pytest.param(canary_pattern(ENV_MARKER), id="environ-marker"),
        pytest.param(ENV_MARKER_NAME, id="environ-name"),
        pytest.param(r"root:.:0:0", id="passwd"),
    ],
)
@pytest.mark.parametrize("path", [None, "docsdir", "dot", "sub"])
@pytest.mark.parametrize("mode", ENGINES)
def test_search_never_follows_symlinks_out(
    hostile: Scene, mode: str, path: str | None, pattern: str
) -> None:
    arguments = {"pattern": pattern, **({"path": path} if path else {})}
    result = call("search_text", arguments, hostile.workspace(mode))
    assert not result.is_error, result.text
    assert result.text.startswith(f"No matches for /{pattern}/"), result.text


# --- FIFOs, sockets, devices, hard links in the working tree -----------------------------------


@pytest.fixture(scope="module")
def special(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = new_scene(tmp_path_factory, "special")
    repo, root = scene.repo, scene.root
    repo.write("docs/readme.txt", f"{README_MARKER}: inside content\n")
    repo.write("sub/keep.txt", "keep\n")
    repo.symlink("fifolink", "fifo.txt")
    repo.symlink("devlink", "zero.dev")
    seal(scene)
    # Untracked and not ignored: exactly what a review of uncommitted changes walks over.
    os.mkfifo(root / "fifo.txt")
    os.mkfifo(root / "sub" / "pipe.log")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "app.sock"))
    for name, minor in (("zero.dev", 5), ("urandom.dev", 9)):
        # Only root may make devices; the tests for them skip otherwise.
        with contextlib.suppress(PermissionError):
            os.mknod(root / name, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    return scene


SPECIAL_PATHS = [
    "fifo.txt",
    "sub/pipe.log",
    "app.sock",
    "zero.dev",
    "urandom.dev",
    "fifolink",
    "devlink",
]
SPECIAL_TOOLS = ("read_file", "read_file_lines", "get_git_blame", "search_text", "list_files")


@pytest.mark.parametrize("raw", SPECIAL_PATHS)
@pytest.mark.parametrize("tool,mode", tool_modes(SPECIAL_TOOLS))
def test_special_files_are_refused_without_hanging(
    special: Scene, work: Work, tool: str, mode: str, raw: str
) -> None:
    if not os.path.lexists(special.root / raw):
        pytest.skip(f"{raw} could not be made here (devices need root)")
    workspace = special.workspace(mode)
    workspace.listing  # noqa: B018 - listed before counting: the call alone is counted
    work.clear()
    result = call(tool, PATH_CALLS[tool](raw), workspace)
    assert result.is_error, result.text
    # Opened and read, a device would come back as "binary"; that is a read, not a refusal.
    assert "binary" not in result.text
    # Refused before any read: it was never read, not even for 0 bytes (a commit's symlink
    # is a blob whose text, the target's name, is read to follow it), and no search engine
    # or history walk (rg, git grep, git blame) was started.
    kinds = workspace.listing.kinds
    assert not [read for read in work.reads if kinds.get(read[0]) is not Kind.LINK]
    assert not work.started("rg", "git grep", "git blame"), work.commands()


@pytest.mark.parametrize("file_pattern", [None, "*", "*.txt", "*.log", "*.dev", "*.sock"])
@pytest.mark.parametrize("mode", ENGINES)
def test_search_walks_past_special_files(
    special: Scene, mode: str, file_pattern: str | None
) -> None:
    arguments = {"pattern": README_MARKER}
    if file_pattern:
        arguments["filePattern"] = file_pattern
    result = call("search_text", arguments, special.workspace(mode))
    # Complete, not stopped at the search's limit: no engine blocked on a FIFO or read a device.
    assert not result.is_error and TIMEOUT_NOTICE not in result.text, result.text
    expected = [("docs/readme.txt", 1, f"{README_MARKER}: inside content")]
    assert search_hits(result.text) == (expected if file_pattern in (None, "*", "*.txt") else [])


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_special_files_are_not_listed(special: Scene, mode: str) -> None:
    result = call("list_files", {"pattern": "**"}, special.workspace(mode))
    entries = listed_entries(result.text)
    assert not set(entries) & {"fifo.txt", "sub/pipe.log", "app.sock", "zero.dev", "urandom.dev"}


def test_fifo_in_place_of_a_tracked_file(make_repo: Callable[[str], GitRepo]) -> None:
    repo = make_repo("fifo-victim")
    repo.write("victim.txt", f"{README_MARKER}: committed content\n")
    repo.write("other.txt", "other\n")
    repo.commit()
    (repo.root / "victim.txt").unlink()
    os.mkfifo(repo.root / "victim.txt")
    worktree, revision = repo.worktree(), repo.revision()
    # A dirty tree: the revision's search reads victim.txt (which differs) from git objects.
    assert not revision.matches_checkout
    assert revision.disk_differences is not None and "victim.txt" in revision.disk_differences
    for tool in ("read_file", "read_file_lines", "get_git_blame", "search_text"):
        result = call(tool, PATH_CALLS[tool]("victim.txt"), worktree)
        assert result.is_error and "not a regular file" in result.text, result.text
    result = call("search_text", {"pattern": README_MARKER}, worktree)
    # "No matches" is only said of a complete search: the engine did not wait on the FIFO
    # until the search's time limit stopped it.
    assert result.text.startswith("No matches") and TIMEOUT_NOTICE not in result.text
    # The commit still holds the file: read from objects, the FIFO on disk is irrelevant.
    result = call("search_text", {"pattern": README_MARKER}, revision)
    assert search_hits(result.text) == [("victim.txt", 1, f"{README_MARKER}: committed content")]
    assert call("read_file", {"path": "victim.txt"}, revision).text.startswith(README_MARKER)


@pytest.fixture(scope="module")
def hardlinked(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = new_scene(tmp_path_factory, "hardlink")
    scene.repo.write("docs/readme.txt", f"{README_MARKER}: inside content\n")
    seal(scene)
    try:
        # A second name for the canary inside the working tree: same inode, no symlink.
        os.link(scene.base / "outside" / "secret.txt", scene.root / "linked.txt")
    except OSError as exc:
        pytest.skip(f"cannot hard-link into the repository here: {exc}")
    return scene


@pytest.mark.parametrize("tool,mode", tool_modes(FILE_TOOLS))
def test_hard_link_to_outside_file_is_not_read(hardlinked: Scene, tool: str, mode: str) -> None:
    arguments = PATH_CALLS[tool]("linked.txt")
    result = call(tool, arguments, hardlinked.workspace(mode))
    assert result.is_error, result.text
    if mode != "worktree":
        assert " not found: " in result.text, result.text
    else:  # refused when the path is resolved, before any tool reads or searches it
        assert "hard links" in result.text, result.text


@pytest.mark.parametrize("mode", ENGINES)
def test_hard_link_to_outside_file_is_not_searched(hardlinked: Scene, mode: str) -> None:
    pattern = canary_pattern(OUTSIDE_CANARY)
    result = call("search_text", {"pattern": pattern}, hardlinked.workspace(mode))
    assert result.text == f"No matches for /{pattern}/."


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_hard_link_in_place_of_a_tracked_file(tmp_path: Path, mode: str) -> None:
    scene = scene_at(tmp_path.resolve())
    scene.repo.write("docs/readme.txt", f"{README_MARKER}: inside content\n")
    seal(scene)
    target = scene.root / "docs" / "readme.txt"
    target.unlink()
    try:
        os.link(scene.base / "outside" / "secret.txt", target)
    except OSError as exc:
        pytest.skip(f"cannot hard-link into the repository here: {exc}")
    # The tracked file is modified, so revision HEAD is searched in objects (third path).
    workspace = scene.workspace("worktree") if mode == "worktree" else scene.repo.revision()
    for tool in ("read_file", "read_file_lines", "get_git_blame"):
        result = call(tool, PATH_CALLS[tool]("docs/readme.txt"), workspace)
        if mode == "worktree":
            assert result.is_error and "hard links" in result.text, result.text
        else:
            assert not result.is_error and README_MARKER in result.text, result.text
    pattern = canary_pattern(OUTSIDE_CANARY)
    result = call("search_text", {"pattern": pattern}, workspace)
    assert result.text == f"No matches for /{pattern}/."


@pytest.mark.parametrize("target", ["../outside", "<BASE>/outside"])
def test_directory_swapped_for_a_symlink_out(tmp_path: Path, target: str) -> None:
    # An uncommitted change replaces a tracked folder by a link to a folder outside that
    # holds a file of the same name: every path the model knows now leads out.
    scene = scene_at(tmp_path.resolve())
    scene.repo.write("docs/readme.txt", f"{README_MARKER}: inside content\n")
    seal(scene)
    (scene.base / "outside" / "readme.txt").write_text(f"{README_MARKER} {OUTSIDE_CANARY}\n")
    (scene.root / "docs" / "readme.txt").unlink()
    (scene.root / "docs").rmdir()
    scene.repo.symlink("docs", scene.expand(target))
    worktree, revision = scene.workspace("worktree"), scene.repo.revision()
    assert not revision.matches_checkout
    for raw in ("docs/readme.txt", "docs"):
        for tool in PATH_CALLS:
            result = call(tool, PATH_CALLS[tool](raw), worktree)
            if tool == "get_git_log":
                assert is_log_listing(result.text), result.text
            else:
                assert result.text == outside_message(raw), (tool, result.text)
    for workspace in (worktree, revision):
        result = call("search_text", {"pattern": README_MARKER}, workspace)
        expected = [("docs/readme.txt", 1, f"{README_MARKER}: inside content")]
        assert search_hits(result.text) == ([] if workspace is worktree else expected)
    assert call("read_file", {"path": "docs/readme.txt"}, revision).text.startswith(README_MARKER)


@pytest.mark.parametrize("mode", ENGINES)
def test_search_hits_cannot_borrow_a_listed_name(tmp_path: Path, mode: str) -> None:
    # Engines print one record per line. A file named with a newline, inside a nested
    # repository the tools must never show, prints a record that reads like a hit in
    # docs/readme.txt; only the parsing stands between it and the answer.
    scene = scene_at(tmp_path.resolve())
    scene.repo.write("docs/readme.txt", f"{README_MARKER}: inside content\n")
    seal(scene)
    nested = GitRepo(scene.root / "nested")
    nested.write("odd\ndocs/readme.txt", f"{NESTED_CANARY}\n")
    nested.write("plain.txt", f"{NESTED_CANARY}\n")
    pattern = canary_pattern(NESTED_CANARY)
    result = call("search_text", {"pattern": pattern}, scene.workspace(mode))
    assert result.text == f"No matches for /{pattern}/."


# --- .git, nested repositories, gitlinks ------------------------------------------------------

GIT_PATHS = [
    case(".git/config", GIT_DIR),
    case(".git/HEAD", GIT_DIR),
    case(".git", GIT_DIR),
    case(".git/", GIT_DIR),
    case("./.git/config", GIT_DIR),
    case(".GIT/config", GIT_DIR),
    case(".Git/config", GIT_DIR),
    case(".git./config", GIT_DIR),
    case(".git../config", GIT_DIR),
    case(".git /config", GIT_DIR),
    case("git~1/config", GIT_DIR),
    case("GIT~1/config", GIT_DIR),
    case("sub/.git/config", GIT_DIR),
    case("nested/.git/config", GIT_DIR),
    case("gitlinked/.git/config", GIT_DIR),
    case("docs/../.git/config", GIT_DIR),
    case(".git\\config", GIT_DIR),
    case("<ROOT>/.git/config", GIT_DIR, id="absolute-git-config"),
    case(".git/info/exclude", GIT_DIR),
    case(".git/logs/HEAD", GIT_DIR),
]


@pytest.mark.parametrize("raw,kinds", GIT_PATHS)
@pytest.mark.parametrize("tool,mode", tool_modes(PATH_CALLS))
def test_git_dir_is_refused_in_every_spelling(
    hostile: Scene, tool: str, mode: str, raw: str, kinds: frozenset[str]
) -> None:
    check_path(hostile, tool, mode, raw, kinds)


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(canary_pattern(GITCONFIG_CANARY), id="config-canary"),
        "extraheader",
        "repositoryformatversion",
        "ref: refs/heads/",
        "logallrefupdates",
        pytest.param(canary_pattern(NESTED_CANARY), id="nested-canary"),
    ],
)
@pytest.mark.parametrize("file_pattern", [None, "config", "**/config", "*", "HEAD"])
@pytest.mark.parametrize("mode", ENGINES)
def test_search_never_sees_git_dirs_or_nested_repositories(
    hostile: Scene, mode: str, file_pattern: str | None, pattern: str
) -> None:
    arguments = {"pattern": pattern, **({"filePattern": file_pattern} if file_pattern else {})}
    result = call("search_text", arguments, hostile.workspace(mode))
    assert result.text.startswith(f"No matches for /{pattern}/"), result.text


@pytest.mark.parametrize("pattern", ["**", "**/*", ".*", "**/.*", "**/config", "*/*", "**/HEAD"])
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_listing_never_shows_git_dirs_or_nested_files(
    hostile: Scene, mode: str, pattern: str
) -> None:
    result = call("list_files", {"pattern": pattern}, hostile.workspace(mode))
    assert not result.is_error
    for entry in listed_entries(result.text):
        parts = entry.split("/")
        assert ".git" not in parts and "inner.txt" not in parts, entry


@pytest.mark.parametrize("path", [None, "nested", "gitlinked", "sub"])
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_structure_never_shows_git_dirs_or_nested_files(
    hostile: Scene, mode: str, path: str | None
) -> None:
    result = call("get_file_structure", {"path": path}, hostile.workspace(mode))
    assert ".git" not in result.text and "inner.txt" not in result.text


NESTED_PATHS = ["nested/inner.txt", "gitlinked/inner.txt", "nested", "gitlinked"]


@pytest.mark.parametrize("raw", NESTED_PATHS)
@pytest.mark.parametrize("tool,mode", tool_modes((*FILE_TOOLS, "list_files")))
def test_nested_repository_and_gitlink_contents_are_unreadable(
    hostile: Scene, tool: str, mode: str, raw: str
) -> None:
    workspace = hostile.workspace(mode)
    result = call(tool, PATH_CALLS[tool](raw), workspace)
    assert result.is_error, result.text
    # The gitlink itself may be named in the answer; what it holds may not be.
    allowed = (" not found: ", "submodule", "not a directory", "is a file")
    assert any(word in result.text for word in allowed), result.text


@pytest.mark.parametrize("raw", [".env", "ignored/creds.txt", "ignored", "./.env"])
@pytest.mark.parametrize("tool,mode", tool_modes((*FILE_TOOLS, "list_files")))
def test_ignored_files_are_unreadable(hostile: Scene, tool: str, mode: str, raw: str) -> None:
    result = call(tool, PATH_CALLS[tool](raw), hostile.workspace(mode))
    assert result.is_error and " not found: " in result.text, result.text


@pytest.mark.parametrize("file_pattern", [None, ".env", "*", "**/*.txt"])
@pytest.mark.parametrize("mode", ENGINES)
def test_ignored_files_are_not_searched(
    hostile: Scene, mode: str, file_pattern: str | None
) -> None:
    pattern = canary_pattern(IGNORED_CANARY)
    arguments = {"pattern": pattern}
    if file_pattern:
        arguments["filePattern"] = file_pattern
    result = call("search_text", arguments, hostile.workspace(mode))
    assert result.text.startswith(f"No matches for /{pattern}/"), result.text


# --- arguments that look like options ----------------------------------------------------------

PWNED = ("<ROOT>/pwned.txt", "<BASE>/pwned-abs.txt", "<BASE>/pwned-exec", "<BASE>/pwned-pre")


def assert_nothing_written(scene: Scene) -> None:
    for template in PWNED:
        path = Path(scene.expand(template))
        assert not path.exists(), f"an option was injected: {path} was written"


DASH_PATHS = [pytest.param(name, text.strip(), id=name) for name, text in DASH_FILES.items()] + [
    pytest.param(raw, None, id=raw[:40])
    for raw in (
        "--output=<BASE>/pwned-abs.txt",
        "--exec=touch <BASE>/pwned-exec",
        "--contents=/etc/passwd",
        "-L1,9:/etc/passwd",
        "-C/",
        "--no-index",
        "--work-tree=/",
        "--git-dir=/",
        "-S",
        "--all",
    )
]


@pytest.mark.parametrize("raw,content", DASH_PATHS)
@pytest.mark.parametrize(
    "tool,mode",
    tool_modes(("read_file", "read_file_lines", "get_git_blame", "get_git_log"))
    + tool_modes(("search_text",)),
)
def test_paths_starting_with_dash_are_never_options(
    hostile: Scene, tool: str, mode: str, raw: str, content: str | None
) -> None:
    raw = hostile.expand(raw)
    arguments = PATH_CALLS[tool](raw)
    if tool == "search_text":
        arguments["pattern"] = "dash"
    result = call(tool, arguments, hostile.workspace(mode))
    assert_nothing_written(hostile)
    assert "usage" not in result.text.lower()
    if content is None:
        assert_kind(tool, result, raw, {NOT_FOUND})
    elif tool == "get_git_log":
        assert is_log_listing(result.text) and "hostile content" in result.text, result.text
    else:
        assert not result.is_error and content in result.text, result.text
        if tool == "search_text":
            assert search_hits(result.text) == [(raw, 1, content)]


DASH_PATTERNS = [
    "--files",
    "-f/etc/passwd",
    "--file=/etc/passwd",
    "--pre=sh",
    "--pre=./evil.sh",
    "-Osh",
    "--open-files-in-pager=sh",
    "--no-index",
    "--help",
    "--version",
    "-v",
    "-l",
    "--files-with-matches",
    "-e",
    "--",
    "--follow",
    "--no-config",
    "-uuu",
    "--replace=x",
]


@pytest.mark.parametrize("pattern", DASH_PATTERNS)
@pytest.mark.parametrize("mode", ENGINES)
def test_search_patterns_starting_with_dash_are_patterns(
    hostile: Scene, mode: str, pattern: str
) -> None:
    result = call("search_text", {"pattern": pattern}, hostile.workspace(mode))
    assert_nothing_written(hostile)
    assert not result.is_error or result.text.startswith("Error: Invalid search"), result.text
    lowered = result.text.lower()
    assert "usage" not in lowered and "ripgrep" not in lowered
    # Each hit must be a line the pattern matches: an option would show other lines.
    for path, _line, text in search_hits(result.text):
        assert re.search(pattern, text), (path, text)
        assert path in hostile.workspace(mode).listing.kinds
    if pattern == "--files":
        assert ("notes/flags.txt", 1, "use --files here") in search_hits(result.text)


DASH_GLOBS = [
    "--pre=cat",
    "--pre=sh",
    "--follow",
    "-L",
    "--files",
    "-uuu",
    "--no-ignore",
    "-g*",
    "--glob=*",
    "--iglob=*",
    "--no-config",
]


@pytest.mark.parametrize("file_pattern", DASH_GLOBS)
@pytest.mark.parametrize("mode", ENGINES)
def test_file_patterns_starting_with_dash_are_globs(
    hostile: Scene, mode: str, file_pattern: str
) -> None:
    arguments = {"pattern": README_MARKER, "filePattern": file_pattern}
    result = call("search_text", arguments, hostile.workspace(mode))
    assert_nothing_written(hostile)
    # No file name starts with these, so as globs they match nothing; as options they would
    # let the readme (or, with --follow, the outside canary) through.
    assert result.text == f"No matches for /{README_MARKER}/ (files matching '{file_pattern}')."


@pytest.mark.parametrize(
    "revision",
    [
        "--all",
        "-n1",
        "-",
        "--",
        "--end-of-options",
        "-p",
        "--output=<BASE>/pwned-abs.txt",
        "--exec=touch <BASE>/pwned-exec",
        "HEAD\x00--all",
        "HEAD --all",
        "HEAD:docs/readme.txt",
        "HEAD^{tree}",
        "..",
        "HEAD..HEAD",
        "@{-1}",
        "../outside",
    ],
)
def test_revisions_that_are_options_or_not_commits_are_refused(
    hostile: Scene, revision: str
) -> None:
    with pytest.raises(ReviewerError) as info:
        open_workspace(hostile.root, revision=hostile.expand(revision))
    assert "revision" in str(info.value)
    assert_nothing_written(hostile)


# --- globs ------------------------------------------------------------------------------------

CLIMBING_GLOBS = [
    case("../**", OUTSIDE),
    case("../outside/*", OUTSIDE),
    case("/etc/*", OUTSIDE),
    case("/**", OUTSIDE),
    case("**/../../*", OUTSIDE),
    case("**/../**", OUTSIDE),
    case("*/../../outside/*", OUTSIDE),
    case("./../*", OUTSIDE),
    case("docs/../../*", OUTSIDE),
    case("~/*", OUTSIDE),
    case("~/.ssh/*", OUTSIDE),
    case("C:/*", OUTSIDE),
    case("..\\*", OUTSIDE),
    case("<ROOT>/../outside/*", OUTSIDE, id="absolute-root-climb"),
    case("**/.git/**", GIT_DIR),
    case(".git/*", GIT_DIR),
    case(".GIT/*", GIT_DIR),
    case("nested/.git/*", GIT_DIR),
    # Not refused, but only ever matched against listed paths, so nothing outside can match.
    case("{..,x}/**", LISTED),
    case("{x,..}/*", LISTED),
    case("{..,.git}/**", LISTED),
    case("[.][.]/**", LISTED),
    case("..?/**", LISTED),
    case("?./**", LISTED),
    case("{.git,x}/config", LISTED),
    case(".gi[t]/*", LISTED),
    case("*git/config", LISTED),
]


@pytest.mark.parametrize("glob,kinds", CLIMBING_GLOBS)
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_list_files_globs_cannot_climb_out(
    hostile: Scene, mode: str, glob: str, kinds: frozenset[str]
) -> None:
    glob = hostile.expand(glob)
    workspace = hostile.workspace(mode)
    result = call("list_files", {"pattern": glob}, workspace)
    if LISTED in kinds:
        assert not result.is_error, result.text
        if not result.text.startswith("No files match"):
            entries = listed_entries(result.text)
            assert set(entries) <= set(workspace.listing.paths), entries
    else:
        assert_kind("list_files", result, glob, kinds)


@pytest.mark.parametrize("glob,kinds", CLIMBING_GLOBS)
@pytest.mark.parametrize("mode", ENGINES)
def test_search_file_patterns_cannot_climb_out(
    hostile: Scene, mode: str, glob: str, kinds: frozenset[str]
) -> None:
    glob = hostile.expand(glob)
    workspace = hostile.workspace(mode)
    result = call("search_text", {"pattern": ".", "filePattern": glob}, workspace)
    if LISTED in kinds:
        assert not result.is_error, result.text
        for path, _line, _text in search_hits(result.text):
            assert path in workspace.listing.kinds, path
    else:
        assert_kind("search_text", result, glob, kinds)


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_list_files_glob_from_a_subdirectory_cannot_climb(hostile: Scene, mode: str) -> None:
    arguments = {"directory": "docs", "pattern": "../../outside/*"}
    result = call("list_files", arguments, hostile.workspace(mode))
    assert result.text == outside_message("../../outside/*")


# --- runaway regexes and huge answers -------------------------------------------------------

REDOS_PATTERNS = [
    "(a+)+$",
    "(a|aa)*b",
    "(.*)*x",
    "(a*)*\\1",
    "((a+)*)+\\2",
    "^(a|a?)+$",
    "(a|aa)+!$",
    "(x+x+)+y",
    "(a+)+(b|c)",
    "(\\w+\\s?)+$",
    "(a{1,100}){1,100}$",
]


@pytest.fixture(scope="module")
def redos(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = new_scene(tmp_path_factory, "redos")
    lines = ["a" * 48 + "!"] * 200 + ["a" * 64] * 200 + ["aaaa aaaa " * 8 + "!"] * 50
    scene.repo.write("redos/aaaa.txt", "\n".join(lines) + "\n")
    seal(scene)
    return scene


@pytest.mark.parametrize("pattern", REDOS_PATTERNS)
@pytest.mark.parametrize("mode", ENGINES)
def test_catastrophic_regexes_return_in_bounded_time(
    redos: Scene, work: Work, mode: str, pattern: str
) -> None:
    # The real engines on hostile patterns: an answer comes back, of a kind the model can
    # use, and no engine is left running. That whatever runs too long is stopped at the
    # search's own limit is proven by the test after this one, with an engine that never ends.
    arguments = {"pattern": pattern, "path": "redos"}
    result = call("search_text", arguments, redos.workspace(mode))
    names = work.commands()
    engines = [p for p, n in zip(work.processes, names, strict=True) if n in ("rg", "git grep")]
    assert engines and all(process.poll() is not None for process in engines), names
    if result.is_error:
        assert result.text.startswith("Error: Invalid search"), result.text
    else:
        hits = search_hits(result.text)
        assert hits or TIMEOUT_NOTICE in result.text or result.text.startswith("No matches")


def never_ending_engine(folder: Path) -> str:
    """An engine that answers a pattern check at once and otherwise never ends on its own:
    what a runaway regex or a blocked read looks like from outside, without the clock."""
    script = folder / "stuck-engine"
    script.write_text(
        '#!/bin/sh\ncase "$*" in *--quiet*) exit 0;; esac\n'
        f"exec sleep {2 * HANG_SECONDS:.0f}\n"  # outlives the guard, then ends on its own
    )
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("mode", ENGINES)
def test_a_search_that_does_not_end_is_stopped_at_the_limit_and_says_so(
    redos: Scene, work: Work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    import reviewer.tools.search as search_tool
    import reviewer.workspace.search as search_module

    workspace = redos.workspace(mode)
    workspace.listing  # noqa: B018 - the listing's git commands are not the engines
    if isinstance(workspace, RevisionWorkspace):
        workspace.disk_differences  # noqa: B018
    stuck = never_ending_engine(tmp_path)
    # Both engines replaced: rg (on disk) and git grep (over objects; git itself is real
    # for everything else). The limit is made tiny; nothing here depends on how long it is.
    monkeypatch.setattr(search_module, "ripgrep_binary", lambda: stuck)
    real_git_argv = search_module.git_argv
    monkeypatch.setattr(search_module, "git_argv", lambda args: [stuck, *real_git_argv(args)])
    monkeypatch.setattr(search_tool, "SEARCH_SECONDS", 0.05)
    work.clear()
    result = call("search_text", {"pattern": "a+", "path": "redos"}, workspace)
    assert not result.is_error, result.text
    assert "[Search stopped after" in result.text and "results are incomplete" in result.text
    assert not search_hits(result.text)
    # Every engine started was killed by the limit (it could end no other way); none is left.
    # (The pattern check that runs before a search over objects answers at once.)
    engines = [p for p in work.processes if p.args[0] == stuck and "--quiet" not in p.args]
    expected = {"worktree": 1, "revision": 1, "revision-unchecked": 2, "revision-objects": 1}
    assert len(engines) == expected[mode], work.commands()
    assert [p.returncode for p in engines] == [-signal.SIGKILL] * len(engines)


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = new_scene(tmp_path_factory, "wide")
    body = "".join(f"row {n} of a file that matches every search\n" for n in range(1000))
    for index in range(300):
        scene.repo.write(f"d{index % 10}/file{index:03d}.txt", body)
    seal(scene)
    return scene


@pytest.mark.parametrize("pattern", [".", "^", "(?i)ROW", "$"])
@pytest.mark.parametrize("mode", ENGINES)
def test_search_matching_everything_is_capped(
    wide: Scene, work: Work, mode: str, pattern: str
) -> None:
    result = call("search_text", {"pattern": pattern}, wide.workspace(mode))
    assert not result.is_error and TIMEOUT_NOTICE not in result.text
    assert len(search_hits(result.text)) == 100
    assert MORE_NOTICE in result.text
    # The engine is stopped at the cap, not drained: of the 300,000 matching lines (over
    # 15 MB of engine output), a few of the 64 KiB chunks the answer is read in were read.
    assert 0 < work.engine_output_bytes <= 4 * 64 * 1024, work.engine_output_bytes


GLOB_BOMB = "*a" * 9 + "*b"


def test_glob_patterns_cannot_stall_the_process(tmp_path: Path) -> None:
    # Globs are matched in-process against listed paths. A backtracking translation of a
    # glob with many stars, against one long name, never returns, and Python's regex engine
    # holds the GIL, so a watchdog thread cannot fire: each call runs in its own process,
    # under a guard that only a hang reaches (the backtracking costs about 10^16 steps here).
    # How fast globs match is not asserted; that each call ends with a complete answer is.
    scene = scene_at(tmp_path.resolve())
    scene.repo.write("a" * 200, "long name\n")
    scene.repo.write("docs/readme.txt", f"{README_MARKER}\n")
    seal(scene)
    flags = {
        "worktree": ["--uncommitted"],
        "revision": ["--rev", "HEAD"],
        "revision-unchecked": ["--rev", "HEAD~1"],
        "revision-objects": ["--rev", "HEAD~1"],
    }
    calls = [("list_files", {"pattern": GLOB_BOMB}, mode) for mode in WORKSPACE_MODES]
    calls += [("search_text", {"pattern": "x", "filePattern": GLOB_BOMB}, m) for m in ENGINES]
    processes = {}
    for tool, arguments, mode in calls:
        argv = [sys.executable, "-m", "reviewer", "tool", tool, json.dumps(arguments)]
        argv += ["--repo", str(scene.root), *flags[mode]]
        processes[f"{tool}-{mode}"] = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    deadline = time.monotonic() + HANG_SECONDS
    hung = []
    for name, process in processes.items():
        try:
            output, _ = process.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            hung.append(name)
            continue
        assert_no_leak(output)
        assert process.returncode in (0, 1), output
        # Complete answers: the glob was matched against every name, and matched none.
        complete = "No files match" if name.startswith("list_files") else "No matches for /x/"
        assert complete in output, output
    assert not hung, f"still running after {HANG_SECONDS:.0f} s: {hung}"


BIG_LINES = 660_000  # about 42 MB, beyond the 32 MB read_file_lines scans


def big_line(number: int) -> str:
    return f"line {number:08d} " + "x" * 50


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = new_scene(tmp_path_factory, "large")
    repo, root = scene.repo, scene.root
    repo.git("config", "core.compression", "1")  # the content is repetitive; keep setup fast
    repo.write("big.txt", "".join(big_line(n) + "\n" for n in range(1, BIG_LINES + 1)))
    repo.write("binary.bin", bytes(range(256)) * 4096)
    seal(scene)
    # Untracked, not ignored, 3 GB but sparse: costs no disk, would cost minutes to read.
    with (root / "sparse.img").open("wb") as sparse:
        sparse.write("".join(f"sparse-marker line {n}\n" for n in range(1, 1001)).encode())
        sparse.truncate(3 * 1024**3)
    return scene


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_large_file_reads_are_bounded(large: Scene, work: Work, mode: str) -> None:
    workspace = large.workspace(mode)
    size = (large.root / "big.txt").stat().st_size
    assert size > MAX_SCAN_BYTES + READ_FILE_BYTES
    # Bounded by what is read, not by how long it took: read_file reads the 2 MiB it can
    # show, read_file_lines the 32 MiB it can scan, never the whole 42 MB file.
    result = call("read_file", {"path": "big.txt"}, workspace)
    assert not result.is_error and "[Truncated" in result.text
    assert result.text.startswith(big_line(1))
    assert work.reads == [("big.txt", READ_FILE_BYTES)]
    work.clear()
    arguments = {"path": "big.txt", "startLine": 5, "endLine": 7}
    result = call("read_file_lines", arguments, workspace)
    assert result.text == "\n".join(f"{n}: {big_line(n)}" for n in (5, 6, 7))
    assert work.reads == [("big.txt", MAX_SCAN_BYTES)]
    work.clear()
    arguments = {"path": "big.txt", "startLine": BIG_LINES - 1, "endLine": BIG_LINES}
    result = call("read_file_lines", arguments, workspace)
    assert result.is_error and "only its first" in result.text
    assert work.reads == [("big.txt", MAX_SCAN_BYTES)]


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_large_file_blame_is_bounded(large: Scene, work: Work, mode: str) -> None:
    arguments = {"path": "big.txt", "startLine": 1, "endLine": 2}
    result = call("get_git_blame", arguments, large.workspace(mode))
    # Not stopped at blame's own time limit (that is an error saying so), and the two lines.
    assert not result.is_error and big_line(2) in result.text, result.text
    assert [line.split("  ")[-1] for line in result.text.split("\n\n")[0].splitlines()] == [
        f"{n}: {big_line(n)}" for n in (1, 2)
    ]
    # One blame, of the two lines asked for: git's answer is a few hundred bytes, where the
    # whole file's blame would be larger than the file (42 MB). The file is read for its
    # text no further than read_file_lines would scan.
    assert work.started("git blame") == ["git blame"]
    assert 0 < work.history_output_bytes < 4096, work.history_output_bytes
    assert work.bytes_read("big.txt") <= MAX_SCAN_BYTES


@pytest.mark.parametrize("tool", ["read_file", "read_file_lines", "get_git_blame"])
@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_binary_file_is_refused_as_text(large: Scene, work: Work, mode: str, tool: str) -> None:
    result = call(tool, PATH_CALLS[tool]("binary.bin"), large.workspace(mode))
    assert result.is_error and "binary file" in result.text
    # Refused on one bounded read of the file, before any history walk.
    assert work.reads == [("binary.bin", (large.root / "binary.bin").stat().st_size)]
    assert not work.started("git blame")


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"pattern": big_line(BIG_LINES - 3)}, id="last-lines-of-big"),
        pytest.param({"pattern": ".", "path": "binary.bin"}, id="binary"),
        pytest.param({"pattern": "sparse-marker"}, id="everything"),
        pytest.param({"pattern": "zzz-never", "filePattern": "*.img"}, id="sparse-glob"),
    ],
)
@pytest.mark.parametrize("mode", ENGINES)
def test_search_over_large_files_is_bounded(
    large: Scene, mode: str, arguments: dict[str, str]
) -> None:
    result = call("search_text", arguments, large.workspace(mode))
    # Complete, not stopped at the search's own limit: no engine read the 3 GB sparse file
    # or the binary one as text. The hit past the 32 MiB the read tools scan shows that the
    # search itself is not cut by size.
    assert not result.is_error and TIMEOUT_NOTICE not in result.text, result.text
    if arguments["pattern"].startswith("line "):
        assert search_hits(result.text) == [("big.txt", BIG_LINES - 3, big_line(BIG_LINES - 3))]


def test_sparse_file_in_the_working_tree_is_bounded(large: Scene, work: Work) -> None:
    workspace = large.workspace("worktree")
    # A 3 GB file: each read stops at its tool's bound (counted), far short of the file.
    result = call("read_file", {"path": "sparse.img"}, workspace)
    assert result.is_error or result.text.startswith("sparse-marker line 1\n")
    assert work.bytes_read("sparse.img") <= READ_FILE_BYTES, work.reads
    work.clear()
    arguments = {"path": "sparse.img", "startLine": 2, "endLine": 3}
    result = call("read_file_lines", arguments, workspace)
    assert result.text == "2: sparse-marker line 2\n3: sparse-marker line 3"
    assert work.reads == [("sparse.img", MAX_SCAN_BYTES)]
    result = call("search_text", {"pattern": "marker", "path": "sparse.img"}, workspace)
    assert not result.is_error and TIMEOUT_NOTICE not in result.text, result.text
    for mode in ("revision", "revision-unchecked"):
        result = call("read_file", {"path": "sparse.img"}, large.workspace(mode))
        assert result.is_error and " not found: " in result.text


# --- secrets -----------------------------------------------------------------------------------


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


_ALNUM = string.ascii_letters + string.digits
# Built at run time so that this file holds nothing a secret scanner would flag.
TOKENS = {
    "github-classic": "ghp_" + _random(_ALNUM, 36),
    "github-fine-grained": "github_pat_" + _random(_ALNUM, 22) + "_" + _random(_ALNUM, 59),
    "aws-access-key-id": "AKIA" + _random(string.ascii_uppercase + string.digits, 16),
    "openai": "sk-proj-" + _random(_ALNUM, 48),
    "openai-legacy": "sk-" + _random(_ALNUM, 48),
    "slack-bot": "xoxb-" + _random(string.digits, 12) + "-" + _random(_ALNUM, 24),
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"
    + _random(_ALNUM, 40)
    + "."
    + _random(_ALNUM + "-_", 43),
}
KEY_BODY = [base64.b64encode(os.urandom(48)).decode() for _ in range(6)]
PRIVATE_KEYS = {
    "keys/id_rsa": ("RSA PRIVATE KEY", KEY_BODY[:3]),
    "keys/id_ed25519": ("OPENSSH PRIVATE KEY", KEY_BODY[3:]),
}


def key_text(kind: str, body: list[str]) -> str:
    return f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----\n"


@pytest.fixture(scope="module")
def secretive(tmp_path_factory: pytest.TempPathFactory) -> Scene:
    scene = new_scene(tmp_path_factory, "secrets")
    repo = scene.repo
    repo.write(
        "config/settings.env",
        f"{ENV_CANARY_NAME}={ENV_CANARY}\nDEBUG=1\ninline: prefix-{ENV_CANARY}-suffix\n",
    )
    repo.write("tokens.txt", "".join(f"{name} = {value}\n" for name, value in TOKENS.items()))
    for path, (kind, body) in PRIVATE_KEYS.items():
        repo.write(path, key_text(kind, body))
    repo.write("config/app.yaml", f"name: app\nkey: |\n  {key_text('PRIVATE KEY', KEY_BODY[:2])}")
    repo.commit("rotate credentials " + " ".join(TOKENS.values()))
    repo.write("later.txt", "a later commit, so that HEAD~1 is not checked out\n")
    repo.commit("later")
    return scene


@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("read_file", {"path": "config/settings.env"}),
        ("read_file_lines", {"path": "config/settings.env", "startLine": 1, "endLine": 3}),
        ("search_text", {"pattern": ENV_CANARY_NAME}),
        ("search_text", {"pattern": "prefix-"}),
        ("search_text", {"pattern": canary_pattern(ENV_CANARY)}),
        ("get_git_blame", {"path": "config/settings.env"}),
    ],
)
@pytest.mark.parametrize("mode", ENGINES)
def test_environment_secret_is_redacted_from_file_content(
    secretive: Scene, mode: str, tool: str, arguments: dict[str, object]
) -> None:
    result = call(tool, arguments, secretive.workspace(mode))
    assert not result.is_error, result.text
    assert "[REDACTED]" in result.text
    assert "DEBUG=1" in result.text or tool == "search_text"


@pytest.mark.parametrize("token", list(TOKENS))
@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("read_file", {"path": "tokens.txt"}),
        ("read_file_lines", {"path": "tokens.txt", "startLine": 1, "endLine": 20}),
        ("search_text", {"pattern": " = "}),
        ("get_git_blame", {"path": "tokens.txt"}),
        ("get_git_log", {}),
        ("get_git_log", {"path": "tokens.txt"}),
    ],
)
@pytest.mark.parametrize("mode", ENGINES)
def test_token_formats_are_redacted(
    secretive: Scene, mode: str, tool: str, arguments: dict[str, object], token: str
) -> None:
    result = call(tool, arguments, secretive.workspace(mode))
    assert not result.is_error, result.text
    assert TOKENS[token] not in result.text
    # The prefix alone is no secret; a partial redaction would leave most of the token.
    assert TOKENS[token][-12:] not in result.text
    assert "[REDACTED]" in result.text


@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("read_file", {"path": "keys/id_rsa"}),
        ("read_file", {"path": "keys/id_ed25519"}),
        ("read_file", {"path": "config/app.yaml"}),
        ("read_file_lines", {"path": "keys/id_rsa", "startLine": 1, "endLine": 5}),
        ("read_file_lines", {"path": "keys/id_rsa", "startLine": 1, "endLine": 3}),
        ("search_text", {"pattern": "PRIVATE KEY"}),
        ("search_text", {"pattern": ".", "path": "keys"}),
        ("get_git_blame", {"path": "keys/id_ed25519"}),
    ],
)
@pytest.mark.parametrize("mode", ENGINES)
def test_private_key_blocks_are_redacted(
    secretive: Scene, mode: str, tool: str, arguments: dict[str, object]
) -> None:
    result = call(tool, arguments, secretive.workspace(mode))
    assert not result.is_error, result.text
    assert "[REDACTED]" in result.text
    for line in KEY_BODY:
        assert line not in result.text


@pytest.mark.parametrize(
    "tool,arguments",
    [
        pytest.param(
            "read_file_lines",
            {"path": "keys/id_rsa", "startLine": 2, "endLine": 4},
            id="lines-inside-the-block",
        ),
        pytest.param(
            "search_text",
            {"pattern": re.sub(r"[+/=]", ".", KEY_BODY[1][:16])},
            id="search-hits-a-body-line",
        ),
        pytest.param(
            "get_git_blame",
            {"path": "keys/id_rsa", "startLine": 2, "endLine": 3},
            id="blame-inside-the-block",
        ),
    ],
)
@pytest.mark.parametrize("mode", ENGINES)
def test_private_key_body_is_redacted_without_its_header(
    secretive: Scene, mode: str, tool: str, arguments: dict[str, object]
) -> None:
    # A model reads ranges and searches: the BEGIN line need not be in the same answer.
    result = call(tool, arguments, secretive.workspace(mode))
    for line in KEY_BODY:
        assert line not in result.text, f"private key material shown:\n{result.text}"


# --- a last sweep: answers about the whole repository ------------------------------------------


WHOLE_REPOSITORY_CALLS = [
    pytest.param("list_files", {"pattern": "**"}, id="list_files"),
    pytest.param("get_file_structure", {}, id="get_file_structure"),
    pytest.param("get_git_log", {"count": 1000}, id="get_git_log"),
    pytest.param("search_text", {"pattern": "e"}, id="search_text"),
]


@pytest.mark.parametrize("tool,arguments", WHOLE_REPOSITORY_CALLS)
@pytest.mark.parametrize("mode", ENGINES)
def test_whole_repository_answers_hold_no_outside_content(
    hostile: Scene, mode: str, tool: str, arguments: dict[str, object]
) -> None:
    result = call(tool, arguments, hostile.workspace(mode))
    assert not result.is_error, result.text
    assert ".git/" not in result.text and "inner.txt" not in result.text
