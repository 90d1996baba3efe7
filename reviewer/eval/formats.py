"""The table of dataset formats: each row says how to recognise a dataset and how to load it.
The next format is one more row.

A reader is `load(path, *, cache_dir, token, log) -> Dataset`: `cache_dir` is where it may
keep what it fetches or builds (clones, repositories made from a case's commits), `token` a
GitHub token for what it fetches (None: anonymous), `log` a one-line progress callback.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from reviewer.errors import ReviewerError
from reviewer.eval.cases import Dataset

Log = Callable[[str], None]


class Loader(Protocol):
    def __call__(self, path: Path, *, cache_dir: Path, token: str | None, log: Log) -> Dataset: ...


@dataclass(frozen=True)
class DatasetFormat:
    name: str
    detect: Callable[[Path], bool]
    load: Loader
    # One line for --help and errors: what a path of this format is.
    what: str = ""
    # Other names --dataset-format takes for it (the tag a file of it carries).
    aliases: tuple[str, ...] = ()


def _local_format() -> DatasetFormat:
    from reviewer.eval import local

    return DatasetFormat(
        "local", local.detect_local, local.load_local, local.WHAT, aliases=(local.FORMAT_TAG,)
    )


def _optional(name: str, module: str, what: str) -> DatasetFormat | None:
    """A reader another module provides, when it is there."""
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None
        raise
    return DatasetFormat(
        name,
        getattr(loaded, f"detect_{name}"),
        getattr(loaded, f"load_{name}"),
        getattr(loaded, "WHAT", what),
    )


def _formats() -> dict[str, DatasetFormat]:
    rows = [
        _local_format(),
        _optional("martian", "reviewer.eval.martian", "Martian's offline golden_comments"),
        _optional("aacr", "reviewer.eval.aacr", "AACR-Bench"),
    ]
    return {row.name: row for row in rows if row is not None}


FORMATS: dict[str, DatasetFormat] = _formats()


def detect_format(path: Path, wanted: str | None = None) -> DatasetFormat:
    """The format of the dataset at `path` (`wanted` names it; else the first row that
    recognises it)."""
    if not path.exists():
        raise ReviewerError(f"dataset '{path}' does not exist; give a dataset file or folder")
    if wanted:
        for row in FORMATS.values():
            if wanted in (row.name, *row.aliases):
                return row
        raise ReviewerError(
            f"unknown dataset format '{wanted}'; choose from {', '.join(FORMATS)}"
        )
    for row in FORMATS.values():
        if row.detect(path):
            return row
    not_json = _json_error(path)
    if not_json:
        raise ReviewerError(f"'{path}' is not valid JSON ({not_json}); fix the file")
    known = "; ".join(f"{row.name}: {row.what}" for row in FORMATS.values())
    raise ReviewerError(
        f"'{path}' is not a dataset of a known format ({known}); pass --dataset-format NAME"
    )


def _json_error(path: Path) -> str | None:
    """Why a file that should be JSON (every dataset file is) cannot be read as JSON."""
    if not path.is_file() or path.suffix.lower() != ".json":
        return None
    try:
        json.loads(path.read_bytes())
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    except RecursionError:
        return "nested too deeply to read"
    except ValueError as exc:
        return str(exc)[:120]
    return None


def load_dataset(
    path: Path, *, cache_dir: Path, token: str | None, log: Log, wanted: str | None = None
) -> Dataset:
    row = detect_format(path, wanted)
    return row.load(path, cache_dir=cache_dir, token=token, log=log)
