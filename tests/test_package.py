"""The built wheel holds everything the program reads at run time."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from reviewer.workspace.search import ripgrep_binary

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(PROJECT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("reviewer-*.whl")
    return zipfile.ZipFile(built)


def test_wheel_contains_every_module_and_prompt(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for source in (PROJECT / "reviewer").rglob("*"):
        if source.is_file() and "__pycache__" not in source.parts:
            # Modules, and what they read at run time: report templates, the JSON schema.
            assert source.relative_to(PROJECT).as_posix() in names
    prompts = [p.name for p in (PROJECT / "prompts").iterdir() if p.is_file()]
    assert prompts
    for prompt in prompts:
        assert f"reviewer/prompts/{prompt}" in names


def test_wheel_declares_the_console_script(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    assert "reviewer = reviewer.cli.program:main" in wheel.read(entry_points).decode()


def test_ripgrep_is_installed_with_the_package() -> None:
    binary = ripgrep_binary()
    assert binary is not None
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("ripgrep ")


def test_the_fakes_extra_is_named_when_graphql_core_is_missing(tmp_path: Path) -> None:
    """graphql-core is an extra only the fake GitHub needs: without it the review and the
    fake model still import, and the fake GitHub says which extra to install."""
    import subprocess
    import sys

    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['graphql'] = None  # as if not installed\n")
    program = (
        "import reviewer.review.pipeline, reviewer.github.run\n"
        "from reviewer.testing import FakeLLM, FakeGitHub\n"
        "try:\n"
        "    FakeGitHub('.')\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        "the fake GitHub answers GraphQL with graphql-core, which is not installed: "
        "pip install 'reviewer[fakes]'"
    )
