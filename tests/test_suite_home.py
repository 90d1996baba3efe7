"""The suite never reads or writes the user's home (tests/conftest.py, `_temporary_home`): a
process it starts, as every `reviewer` the tests run, finds its home, its caches and git's
global configuration in the session's temporary folder, wherever pytest was started from
and whatever HOME the shell had."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

# Read-only, so that it writes nothing to a real home even where the fixture were missing:
# git names its global configuration file (listing it, or failing to read it).
PROBE = """
import json, os, re, subprocess
from pathlib import Path
from reviewer.eval.command import default_cache

listed = subprocess.run(
    ["git", "config", "--global", "--list", "--show-origin"], capture_output=True, text=True
)
named = re.search(r"file:(\\S+)\\t", listed.stdout) or re.search(r"'([^']+)'", listed.stderr)
every = subprocess.run(["git", "config", "--list", "--show-origin"], capture_output=True, text=True)
print(json.dumps({
    "home": str(Path.home()),
    "tilde": os.path.expanduser("~"),
    "eval cache": str(default_cache()),
    "config": os.environ.get("XDG_CONFIG_HOME", ""),
    "data": os.environ.get("XDG_DATA_HOME", ""),
    "state": os.environ.get("XDG_STATE_HOME", ""),
    "git global": named.group(1) if named else listed.stderr,
    "git reads": sorted({line.split("\\t")[0] for line in every.stdout.splitlines()}),
}))
"""


def test_a_process_the_suite_starts_has_a_temporary_home(tmp_path: Path) -> None:
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(proc.stdout)
    read = seen.pop("git reads")
    home = Path(seen["home"]).resolve()
    assert home != real_home and real_home not in home.parents, seen
    for what, path in seen.items():
        resolved = Path(path).resolve()
        assert resolved == home or home in resolved.parents, (what, path)
        assert real_home not in resolved.parents, (what, path)
    assert seen["eval cache"] == str(home / ".cache" / "reviewer" / "eval")
    assert seen["git global"] == str(home / ".gitconfig")
    # Nor the machine's git configuration (GIT_CONFIG_NOSYSTEM): git reads no file at all.
    assert read == []
