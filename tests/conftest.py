"""Shared fixtures: real git repositories made in temp folders, and a temporary home for
the whole session."""

from __future__ import annotations

import os
import re
import subprocess
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reviewer.workspace import RevisionWorkspace, Workspace, WorktreeWorkspace, open_workspace

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2024-05-01T12:00:00Z",
    "GIT_COMMITTER_DATE": "2024-05-01T12:00:00Z",
}


class GitRepo:
    """A real repository in a temp folder, with helpers to write files and commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "core.symlinks", "true")

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        full_env = {**os.environ, **GIT_IDENTITY, **(env or {})}
        proc = subprocess.run(
            ["git", *args], cwd=self.root, env=full_env, capture_output=True, text=True, check=True
        )
        return proc.stdout

    def write(self, rel: str, content: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
        return path

    def symlink(self, rel: str, target: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
        return path

    def commit(self, message: str = "change", *, author: str | None = None) -> str:
        self.git("add", "-A")
        env = {"GIT_AUTHOR_NAME": author} if author else None
        self.git("commit", "-q", "--allow-empty", "-m", message, env=env)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def revision(self, rev: str = "HEAD") -> RevisionWorkspace:
        workspace = open_workspace(self.root, revision=rev)
        assert isinstance(workspace, RevisionWorkspace)
        return workspace

    def worktree(self) -> WorktreeWorkspace:
        workspace = open_workspace(self.root, revision=None, uncommitted=True)
        assert isinstance(workspace, WorktreeWorkspace)
        return workspace


def temporary_home_variables(home: Path) -> dict[str, str]:
    """Every variable by which the suite's programs find the user's home, pointed into `home`:
    the home itself (`~`, Path.home()), the XDG folders (reviewer's eval cache,
    XDG_CACHE_HOME/reviewer/eval; the tests' downloads, XDG_CACHE_HOME/reviewer-tests; pip's
    and npm's configuration), git's global configuration, and none of the machine's (a
    credential helper or an identity there would make a test pass here and fail elsewhere)."""
    return {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }


@pytest.fixture(scope="session", autouse=True)
def _temporary_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No test reads or writes the user's home: for the whole session (and every process it
    starts, which inherits the environment) the home and its caches are a temporary folder,
    so a run with a warm ~/.cache and one on a fresh machine see the same."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in temporary_home_variables(home).items():
            patch.setenv(name, value)
        yield home


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "verification: run with the verification pass on (verify = all)"
    )


@pytest.fixture(autouse=True)
def _verification_off_for_scripted_models(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scripts of the tests before the verification pass (reviewer/checks/verify.py) give each
    loop its replies in order, with no verification requests between them: they run with
    `verify = "off"` (REVIEWER_VERIFY, which their subprocesses inherit too). Users' default
    stays "all"; tests marked `verification` (tests/test_verification.py) run with it."""
    if request.node.get_closest_marker("verification") is None:
        monkeypatch.setenv("REVIEWER_VERIFY", "off")


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[str], GitRepo]:
    counter = iter(range(1000))

    def make(name: str = "") -> GitRepo:
        return GitRepo(tmp_path / (name or f"repo{next(counter)}"))

    return make


@pytest.fixture
def repo(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    return make_repo("repo")


WORKSPACE_MODES = ("revision", "worktree")


def workspace_for(repo: GitRepo, mode: str) -> Workspace:
    """The same committed content seen as a revision (git objects) or as the working tree."""
    return repo.revision() if mode == "revision" else repo.worktree()


# The breaks a sink writes itself: a zero-width space inside `##[` and `::` (the runner's
# command forms), a zero-width joiner after `@` and GitLab's sigils (mentions, references).
_OWN_BREAKS = re.compile("(?<=##)\u200b(?=\\[)|(?<=:)\u200b(?=:)|(?<=[@#!~%$&\\[])\u200d")
# Invisible by Unicode's own definition (Default_Ignorable_Code_Point, not derivable from
# unicodedata: its categories Cf and Mn/Lo members listed), and the annotation characters.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000e0000-\U000e0fff]"
)


def hidden_characters(text: str) -> list[str]:
    """The invisible characters a reader of `text` would not see, but for the sink's own."""
    text = _OWN_BREAKS.sub("", text)
    return [c for c in text if unicodedata.category(c) == "Cf" or _IGNORABLE.match(c)]


def acting_markdown(markdown: str) -> list[str]:
    """What would act when GitHub renders `markdown`, by a real CommonMark parser with GitHub's
    tables: raw HTML and live mentions in prose. Code (spans and blocks) acts on nothing."""
    from markdown_it import MarkdownIt

    found = []
    for token in MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown):
        if token.type == "html_block":
            found.append(token.content)
        for child in token.children or []:
            if child.type == "html_inline":
                found.append(child.content)
            if child.type == "text":
                found += re.findall(r"(?<![A-Za-z0-9])@[A-Za-z0-9][\w/-]*", child.content)
    return found
