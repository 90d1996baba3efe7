"""The code stays ruff-clean; running it here makes CI hold the line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs import doc_block

PROJECT = Path(__file__).resolve().parents[1]


def test_ruff_check_passes() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed; install the test extra: pip install '.[test]'")
    # CONTRIBUTING.md's command, as a contributor types it.
    command = doc_block("lint").split()
    assert command[:2] == [".venv/bin/ruff", "check"]
    proc = subprocess.run(
        [ruff, "check", "--quiet", *command[2:]],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# A number written before a plural noun in an f-string: `{len(lines)} lines`, `({n} files)`.
_COUNTED_NOUN = re.compile(
    r"\{(?P<expr>[^{}]+)\}\)? (?:more )?(?:files|lines|findings|entries|retries|comments|commits"
    r"|parts|requests|turns|tool calls|cases)\b"
)


def test_counts_are_worded_by_one_helper() -> None:
    """`1 files` is what a count next to a fixed plural prints: counts in messages and
    reports go through reviewer.wording.plural (constants such as MAX_ENTRIES are never 1)."""
    found = []
    for path in sorted((PROJECT / "reviewer").rglob("*.py")):
        if "testing" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in _COUNTED_NOUN.finditer(line):
                if not match["expr"].split(":")[0].isupper():
                    found.append(f"{path.relative_to(PROJECT)}:{number}: {line.strip()}")
    assert found == []
