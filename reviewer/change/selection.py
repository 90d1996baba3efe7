"""Which changed files the model is shown, and why each other one is not: the settings'
include and exclude, binaries, lock files, vendored code, generated files, diffs over
GitHub's per-file limit. The kinds are data tables; every file not reviewed keeps its reason
for every report.
"""

from __future__ import annotations

import re

from reviewer.change import Change, FileChange
from reviewer.findings import FileCoverage
from reviewer.settings.config import Settings
from reviewer.workspace.globs import basename_or_path_matcher


def select_files(change: Change, settings: Settings) -> list[FileCoverage]:
    """Decide, for every changed file, whether it is reviewed, and why not."""
    include = [basename_or_path_matcher(g) for g in settings.include]
    exclude = [basename_or_path_matcher(g) for g in settings.exclude]
    coverage = []
    for file in change.files:
        reason = ""
        if include and not any(m.fullmatch(file.path) for m in include):
            reason = "not matched by include"
        elif any(m.fullmatch(file.path) for m in exclude):
            reason = "excluded by config"
        elif file.binary:
            reason = "binary file"
        elif file.status == "deleted":
            reason = ""
        elif (kind := _not_source(file)) is not None:
            reason = kind
        elif file.oversized:
            reason = "diff over GitHub's per-file limit (500 KB / 20,000 lines)"
        coverage.append(FileCoverage(file.path, file.status, not reason, reason))
    return coverage


_LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "Cargo.lock",
        "go.sum",
        "Gemfile.lock",
        "composer.lock",
        "mix.lock",
        "pubspec.lock",
        "Podfile.lock",
        "packages.lock.json",
        "flake.lock",
        "gradle.lockfile",
    }
)
_VENDOR_DIRS = frozenset(
    {"vendor", "third_party", "third-party", "node_modules", "bower_components", "external"}
)
_GENERATED_NAME = re.compile(
    r"(\.min\.(js|css)|\.pb\.go|_pb2(_grpc)?\.pyi?|\.pb\.(cc|h)|\.generated\.\w+|\.g\.dart"
    r"|\.designer\.cs|_generated\.\w+|\.snap|\.map)$"
)
_GENERATED_MARK = re.compile(
    r"@generated|DO NOT EDIT|Code generated .* DO NOT EDIT|auto-?generated", re.I
)


def _not_source(file: FileChange) -> str | None:
    """Why a changed file is not worth the model's time: lock file, vendored, generated."""
    parts = file.path.split("/")
    if parts[-1] in _LOCK_FILES:
        return "lock file"
    if any(part in _VENDOR_DIRS for part in parts[:-1]):
        return "vendored code"
    if _GENERATED_NAME.search(parts[-1]):
        return "generated file"
    if _marked_generated_on_both_sides(file):
        return "generated file"
    return None


def _marked_generated_on_both_sides(file: FileChange) -> bool:
    """A generated mark in the first five lines of the base AND of the change. The change's
    own lines are its author's words: a hand-written file whose change adds "DO NOT EDIT" at
    its top must not be skipped for it (an added file has no base, so it is reviewed); a
    file the base already marks, regenerated, is skipped (docs/security.md, Text that decides)."""
    head = file.hunks[0] if file.hunks else None
    if head is None or head.new_start > 1 or head.old_start > 1:
        return False
    rows = head.body.split("\n")
    base = [row[1:] for row in rows if row[:1] in (" ", "-", "")][:5]
    new = [row[1:] for row in rows if row[:1] in (" ", "+", "")][:5]
    return bool(_GENERATED_MARK.search(" ".join(base)) and _GENERATED_MARK.search(" ".join(new)))
