"""The evaluation's memory: finished reviews and judgements, one JSON file per key.

A key is a hash of everything that decides the value (for a review: the case, its commits,
the model, the settings and the prompts; for a judgement: the judge, its prompt, the issue
and the finding), so a changed input is a new key and never a stale answer. Files are
written to a temporary name and renamed: an interrupted run leaves whole entries or none,
and the next run resumes from them. Failures are not stored; they are tried again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def key_of(*parts: Any) -> str:
    """A stable hash of JSON-able parts."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Cache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(kind, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent, or not a whole entry: computed again
        return data if isinstance(data, dict) else None

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        path = self._path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(value, out, ensure_ascii=False)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
