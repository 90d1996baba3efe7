"""The code stays ruff-clean; running it here makes CI hold the line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]


def test_ruff_check_passes() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed; install the test extra: pip install '.[test]'")
    folders = [name for name in ("reviewer", "tests", "bench") if (PROJECT / name).is_dir()]
    proc = subprocess.run(
        [ruff, "check", "--quiet", *folders],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
