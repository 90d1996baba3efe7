"""The release procedure (docs/RELEASING.md) as a maintainer follows it: its command block
runs in a clone of this repository, tags the version `reviewer/__init__.py` holds, prints the
commit to pin and pushes the tag to the clone's origin (a local bare copy)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import reviewer
from tests.docs import doc_block

PROJECT = Path(__file__).resolve().parents[1]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_the_changelog_has_a_section_for_the_version() -> None:
    text = (PROJECT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(reviewer.__version__)}\] - \d{{4}}-\d\d-\d\d$", text, re.M)
    assert text.index("## [Unreleased]") < text.index(f"## [{reviewer.__version__}]")


def test_the_release_block_tags_the_version_and_prints_the_commit_to_pin(tmp_path: Path) -> None:
    blocks = [doc_block("release")]
    origin, clone = tmp_path / "origin.git", tmp_path / "clone"
    git("init", "-q", "--bare", str(origin), cwd=tmp_path)
    git("init", "-q", str(clone), cwd=tmp_path)
    for name in ("reviewer/__init__.py", "CHANGELOG.md"):
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_bytes((PROJECT / name).read_bytes())
    git("add", "-A", cwd=clone)
    git("-c", "user.name=m", "-c", "user.email=m@example.com", "commit", "-qm", "r", cwd=clone)
    git("remote", "add", "origin", str(origin), cwd=clone)
    env = {**os.environ, "GIT_COMMITTER_NAME": "m", "GIT_COMMITTER_EMAIL": "m@example.com"}
    proc = subprocess.run(
        ["sh", "-e", "-c", blocks[0]], cwd=clone, capture_output=True, text=True, timeout=60,
        env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    head = git("rev-parse", "HEAD", cwd=clone).strip()
    assert proc.stdout.strip() == head  # the SHA to pin, and nothing else
    tag = f"v{reviewer.__version__}"
    assert git("rev-parse", f"{tag}^{{commit}}", cwd=origin).strip() == head
