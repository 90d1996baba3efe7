"""A repository's own git configuration runs no program (issue 23, item 1).

A dataset shared as an archive ships its repository's `.git/config`; a reviewed repository's
config is read too. Each test gives a real repository a hostile knob whose command touches a
marker file, runs one of the bot's operations on it, and checks the marker is not there.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reviewer.change import load_change
from reviewer.errors import ReviewerError
from reviewer.eval.history import history_dataset
from reviewer.review.prepare import _change_info
from reviewer.safety.redact import Redactor
from reviewer.tools import run_tool
from tests.conftest import WORKSPACE_MODES, GitRepo, workspace_for
from tests.test_eval import Models, env, run_eval  # noqa: F401 (env is a fixture)

MakeRepo = Callable[[str], GitRepo]


def touch(marker: Path, then: str = "") -> str:
    """A shell command that leaves `marker` behind (and then runs `then`)."""
    return f"touch {shlex.quote(str(marker))}" + (f"; {then}" if then else "")


def two_commits(repo: GitRepo) -> tuple[str, str]:
    repo.write("a.txt", "one\n")
    base = repo.commit("base")
    repo.write("a.txt", "one\ntwo\n")
    return base, repo.commit("head")


def configure(root: Path, settings: dict[str, str]) -> None:
    for key, value in settings.items():
        subprocess.run(["git", "config", key, value], cwd=root, check=True)


def partial_clone(
    make_repo: MakeRepo, tmp_path: Path, missing: str = "blob"
) -> tuple[Path, str, str]:
    """A copy of a repository, made to look like a partial clone of it that lacks one object
    (the base's file, or the base commit): reading that object makes git fetch it from its
    promisor remote, `origin`."""
    source = make_repo("source")
    base, head = two_commits(source)
    clone = tmp_path / "clone"
    shutil.copytree(source.root, clone)
    gone = source.git("rev-parse", f"{base}:a.txt" if missing == "blob" else base).strip()
    (clone / ".git" / "objects" / gone[:2] / gone[2:]).unlink()
    configure(
        clone,
        {
            "core.repositoryformatversion": "1",
            "extensions.partialClone": "origin",
            "remote.origin.url": str(source.root),
            "remote.origin.promisor": "true",
            "remote.origin.fetch": "+refs/heads/*:refs/remotes/origin/*",
        },
    )
    return clone, base, head


def load_quietly(root: Path, base: str, head: str | None) -> None:
    """The diff loader; failing to read a missing object is fine, running a program is not."""
    with contextlib.suppress(ReviewerError):
        load_change(root, base, head)


# --- lazy fetches of a partial clone ------------------------------------------------------


def test_diff_of_a_partial_clone_runs_no_uploadpack_command(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    clone, base, head = partial_clone(make_repo, tmp_path)
    marker = tmp_path / "ran-uploadpack"
    configure(clone, {"remote.origin.uploadpack": touch(marker, "git-upload-pack")})
    load_quietly(clone, base, head)
    assert not marker.exists()


def test_a_protocol_the_repository_allows_stays_off(make_repo: MakeRepo, tmp_path: Path) -> None:
    clone, base, head = partial_clone(make_repo, tmp_path)
    marker = tmp_path / "ran-uploadpack"
    configure(
        clone,
        {
            "protocol.file.allow": "always",
            "remote.origin.uploadpack": touch(marker, "git-upload-pack"),
        },
    )
    load_quietly(clone, base, head)
    assert not marker.exists()


def test_a_remote_helper_cannot_reach_an_alias(make_repo: MakeRepo, tmp_path: Path) -> None:
    clone, base, head = partial_clone(make_repo, tmp_path)
    marker = tmp_path / "ran-alias"
    configure(
        clone,
        {
            "remote.origin.vcs": "evil",
            "protocol.evil.allow": "always",
            "alias.remote-evil": "!" + touch(marker),
        },
    )
    load_quietly(clone, base, head)
    assert not marker.exists()


def test_a_lazy_fetch_runs_no_ssh_command(make_repo: MakeRepo, tmp_path: Path) -> None:
    clone, base, head = partial_clone(make_repo, tmp_path)
    marker = tmp_path / "ran-ssh"
    configure(
        clone,
        {"remote.origin.url": "ssh://example.invalid/repo.git", "core.sshCommand": touch(marker)},
    )
    load_quietly(clone, base, head)
    assert not marker.exists()


class _AsksForAPassword(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="repo"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def https_asking_for_a_password(folder: Path) -> Iterator[str]:
    """An https server on 127.0.0.1 (a self-signed certificate) that answers every request
    with 401: git then asks its credential helpers and askpass program."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the test server's certificate")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AsksForAPassword)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/repo.git"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("knob", ["credential.helper", "credential.url.helper", "core.askPass"])
def test_a_lazy_fetch_asks_no_credential_program(
    make_repo: MakeRepo, tmp_path: Path, knob: str
) -> None:
    clone, base, head = partial_clone(make_repo, tmp_path)
    marker = tmp_path / "ran-credential"
    with https_asking_for_a_password(tmp_path) as url:
        key = knob.replace(".url.", f".{url}.")
        program = touch(marker) if knob == "core.askPass" else "!" + touch(marker)
        configure(clone, {"remote.origin.url": url, "http.sslVerify": "false", key: program})
        load_quietly(clone, base, head)
    assert not marker.exists()


def test_commit_messages_are_read_without_a_lazy_fetch(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """The title and description of a local review (GitPython read them, with none of the
    overrides)."""
    clone, base, head = partial_clone(make_repo, tmp_path, missing="commit")
    marker = tmp_path / "ran-uploadpack"
    configure(clone, {"remote.origin.uploadpack": touch(marker, "git-upload-pack")})
    with contextlib.suppress(ReviewerError):
        _change_info(clone, base, head, Redactor())
    assert not marker.exists()


def test_eval_of_a_local_dataset_naming_a_hostile_partial_clone(
    env: dict[str, str],  # noqa: F811 (the fixture)
    make_repo: MakeRepo,
    tmp_path: Path,
) -> None:
    clone, base, head = partial_clone(make_repo, tmp_path)
    marker = tmp_path / "ran-uploadpack"
    configure(clone, {"remote.origin.uploadpack": touch(marker, "git-upload-pack")})
    dataset = tmp_path / "dataset.json"
    case = {"id": "c1", "repo": "clone", "base": base, "head": head, "expected": []}
    dataset.write_text(json.dumps({"format": "reviewer-eval", "name": "d", "cases": [case]}))
    with Models({}, []):
        run_eval(tmp_path, str(dataset), "--judge", "location")
    assert not marker.exists()


# --- drivers named by attributes ----------------------------------------------------------


def driven(repo: GitRepo, attribute: str, settings: dict[str, str]) -> None:
    """`repo` with its .txt files given `attribute` and the driver's hostile `settings`."""
    repo.write(".gitattributes", f"*.txt {attribute}\n")
    two_commits(repo)
    configure(repo.root, settings)


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_blame_runs_no_textconv(repo: GitRepo, tmp_path: Path, mode: str) -> None:
    marker = tmp_path / "ran-textconv"
    driven(repo, "diff=evil", {"diff.evil.textconv": touch(marker, "cat")})
    run_tool("get_git_blame", {"path": "a.txt"}, workspace_for(repo, mode))
    assert not marker.exists()


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_blame_runs_no_filter(repo: GitRepo, tmp_path: Path, mode: str) -> None:
    marker = tmp_path / "ran-filter"
    command = touch(marker, "cat")
    driven(repo, "filter=evil", {"filter.evil.clean": command, "filter.evil.smudge": command})
    repo.write("a.txt", "one\ntwo\n")  # stat-dirty: git must look at the content again
    run_tool("get_git_blame", {"path": "a.txt"}, workspace_for(repo, mode))
    assert not marker.exists()


def test_blame_runs_no_filter_process(repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran-process"
    driven(repo, "filter=evil", {"filter.evil.process": touch(marker)})
    repo.write("a.txt", "one\ntwo\n")
    run_tool("get_git_blame", {"path": "a.txt"}, repo.worktree())
    assert not marker.exists()


def test_an_included_file_cannot_name_a_filter(repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran-included"
    included = tmp_path / "hostile.cfg"
    included.write_text(f"[filter \"evil\"]\n\tclean = {touch(marker, 'cat')}\n")
    driven(repo, "filter=evil", {"include.path": str(included)})
    repo.write("a.txt", "one\ntwo\n")
    run_tool("get_git_blame", {"path": "a.txt"}, repo.worktree())
    assert not marker.exists()


def test_search_compares_with_the_checkout_without_a_clean_filter(
    repo: GitRepo, tmp_path: Path
) -> None:
    marker = tmp_path / "ran-clean"
    driven(repo, "filter=evil", {"filter.evil.clean": touch(marker, "cat")})
    repo.write("a.txt", "one\ntwo\nthree\n")  # a local change: git hashes the file on disk
    run_tool("search_text", {"pattern": "two"}, repo.revision())
    assert not marker.exists()


def test_diff_of_the_working_tree_runs_no_clean_filter(repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran-clean"
    driven(repo, "filter=evil", {"filter.evil.clean": touch(marker, "cat")})
    repo.write("a.txt", "one\ntwo\nthree\n")
    load_change(repo.root, "HEAD~1", None)
    assert not marker.exists()


def test_from_history_reads_fixes_without_textconv(repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran-textconv"
    repo.write(".gitattributes", "*.txt diff=evil\n")
    repo.write("a.txt", "one\n")
    repo.commit("base")
    repo.write("a.txt", "one\ntwo\n")
    repo.commit("Fix the count")
    configure(repo.root, {"diff.evil.textconv": touch(marker, "cat")})
    history_dataset(
        repo.root, since="2000-01-01", pattern="Fix", cache_dir=tmp_path / "cache"
    )
    assert not marker.exists()


# --- knobs pinned before issue 23 (regression guards) ---------------------------------------


@pytest.mark.parametrize("mode", WORKSPACE_MODES)
def test_search_runs_no_fsmonitor(repo: GitRepo, tmp_path: Path, mode: str) -> None:
    marker = tmp_path / "ran-fsmonitor"
    two_commits(repo)
    configure(repo.root, {"core.fsmonitor": touch(marker)})
    repo.write("a.txt", "changed\n")
    run_tool("search_text", {"pattern": "one"}, workspace_for(repo, mode))
    load_quietly(repo.root, "HEAD~1", None)
    assert not marker.exists()


def test_the_diff_loader_runs_no_external_diff(repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran-external"
    driven(repo, "diff=evil", {"diff.external": touch(marker), "diff.evil.command": touch(marker)})
    load_change(repo.root, "HEAD~1", "HEAD")
    assert not marker.exists()
