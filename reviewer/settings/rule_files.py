"""The team's own rule files (AGENTS.md, CLAUDE.md, Cursor, Bugbot, Copilot and Gemini rules),
read at the base revision like the settings, and the part of them each part of a review is
shown.

Which files count, how far each applies and which of its text is taken is the table
`KINDS`: one row per kind of file. A rule file the change adds is not used, and one it edits
is used as the base has it: the change cannot rewrite the rules it is judged by. Rule text is
repository text: it reaches the prompt quoted and labelled with its file, redacted like the
diff (context.build_plan), and bounded (per file and per part, each cut said).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reviewer.errors import ReviewerError, ToolError
from reviewer.findings import RuleFileUse
from reviewer.settings.rule_text import FrontMatter, review_section, split_front_matter, whole
from reviewer.workspace import RevisionWorkspace, Workspace, WorktreeWorkspace
from reviewer.workspace.globs import basename_or_path_matcher, glob_matcher
from reviewer.workspace.paths import quote_path

# Rules may take this share of a part's first message (the rest is the diff and the task);
# no one file more than MAX_FILE_CHARS of it, and a file is read up to MAX_READ_BYTES.
RULES_SHARE = 0.15
MAX_FILE_CHARS = 12_000
MIN_TOTAL_CHARS = 1_000
MAX_READ_BYTES = 1_000_000
# A rule cut to less than this for lack of room is left out instead: a stub misleads.
_MIN_PIECE = 300
# Files a rule applies to, named in the prompt before "and N more".
_MAX_NAMED = 8


@dataclass(frozen=True)
class Applies:
    """The changed files a rule file applies to: those below `folder` ('' is every file),
    or those matching one of `globs`."""

    folder: str | None = None
    globs: tuple[str, ...] = ()

    def matches(self, path: str) -> bool:
        if self.folder is not None:
            return not self.folder or path.startswith(self.folder + "/")
        return any(m.fullmatch(path) for m in map(_glob, self.globs) if m is not None)

    @property
    def depth(self) -> int:
        return self.folder.count("/") + 1 if self.folder else 0


EVERY_FILE = Applies(folder="")


def _glob(pattern: str) -> re.Pattern[str] | None:
    try:
        return basename_or_path_matcher(pattern)
    except ToolError:  # a pattern the matcher refuses (too many alternatives) matches nothing
        return None


def _folder(path: str, meta: FrontMatter) -> Applies | None:
    return Applies(folder=posixpath.dirname(path))


def _folder_above_dot_folder(path: str, meta: FrontMatter) -> Applies | None:
    """Bugbot: `backend/.cursor/BUGBOT.md` is for the files below `backend/`."""
    return Applies(folder=posixpath.dirname(posixpath.dirname(path)))


def _every_file(path: str, meta: FrontMatter) -> Applies | None:
    return EVERY_FILE


def _cursor(path: str, meta: FrontMatter) -> Applies | None:
    """Cursor: `alwaysApply: true` is every file, else `globs`; a rule with neither is one
    Cursor applies only on request, so not here."""
    if meta.always_apply:
        return EVERY_FILE
    return Applies(globs=meta.globs) if meta.globs else None


def _apply_to(path: str, meta: FrontMatter) -> Applies | None:
    """Copilot: `applyTo` globs (`**` for every file); without it the file is not automatic."""
    return Applies(globs=meta.apply_to) if meta.apply_to else None


def _declared(path: str, meta: FrontMatter) -> Applies | None:
    """A file named in `rule_files` that is of no known kind: its front matter's globs or
    applyTo when it has them, else every file."""
    return _cursor(path, meta) or _apply_to(path, meta) or EVERY_FILE


@dataclass(frozen=True)
class RuleKind:
    """Where a kind of rule file is found (`where`: a glob from the root; with `nested`, the
    file's path below the root and below every folder that holds a changed file or is above
    one), how its scope is read, and which of its text is taken (front matter removed)."""

    where: str
    nested: bool
    scope: Callable[[str, FrontMatter], Applies | None]
    select: Callable[[str], str]

    def holds(self, path: str) -> bool:
        if self.nested:  # `where` is the file's path below the folder it is for
            return path == self.where or path.endswith("/" + self.where)
        return glob_matcher(self.where).fullmatch(path) is not None


KINDS: tuple[RuleKind, ...] = (
    RuleKind("AGENTS.md", True, _folder, review_section),
    RuleKind("CLAUDE.md", True, _folder, whole),
    RuleKind("REVIEW.md", True, _folder, whole),
    # Cursor Bugbot: the root `.cursor/BUGBOT.md` always, then, for each changed file, every
    # `.cursor/BUGBOT.md` of the folders above it; the file is plain Markdown, no front
    # matter, no includes (cursor.com/docs/bugbot, "Rules"; Cursor's staff on
    # forum.cursor.com/t/152461: "It always loads the root-level file first, then for each
    # changed file it walks up the directory tree and collects any nested BUGBOT.md files").
    RuleKind(".cursor/BUGBOT.md", True, _folder_above_dot_folder, whole),
    RuleKind(".cursorrules", False, _every_file, whole),
    RuleKind(".cursor/rules/**/*.mdc", False, _cursor, whole),
    RuleKind(".github/copilot-instructions.md", False, _every_file, whole),
    RuleKind(".github/instructions/**/*.instructions.md", False, _apply_to, whole),
    # Gemini Code Assist: `.gemini/styleguide.md` in the repository's root `.gemini/` folder,
    # "treated as a regular Markdown file" that extends its review prompt, for every file
    # (developers.google.com/gemini-code-assist/docs/customize-gemini-behavior-github).
    RuleKind(".gemini/styleguide.md", False, _every_file, whole),
)
NAMED = RuleKind("", False, _declared, whole)


@dataclass(frozen=True)
class RuleFile:
    """One rule file at the base: the text taken from it (already within MAX_FILE_CHARS)."""

    path: str
    applies: Applies
    text: str
    cut: str = ""
    order: tuple[int, int, str] = (0, 0, "")


def load_rule_files(
    root: Path, revision: str | None, setting: str | tuple[str, ...], changed: Iterable[str]
) -> list[RuleFile]:
    """The rule files for a change to `changed` (paths), read at `revision` (None: the files
    on disk), in the order the prompt shows them: general before specific."""
    if setting == ():
        return []
    base: Workspace = RevisionWorkspace(root, revision) if revision else WorktreeWorkspace(root)
    where = f"the base revision {revision[:12]}" if revision else "the working tree"
    found: list[tuple[str, RuleKind, bool]] = []
    if setting == "auto":
        found = [(path, kind, False) for path, kind in _discover(base, list(changed))]
    else:
        for path in setting:
            kind = next((k for k in KINDS if k.holds(path)), NAMED)
            found.append((path, kind, True))
    rules: list[RuleFile] = []
    seen: set[str] = set()
    for path, kind, named in found:
        try:
            resolved = base.resolve_file(path)
        except ToolError as exc:
            if not named:
                continue
            raise ReviewerError(
                f"rule_files: '{quote_path(path)}' cannot be read at {where} ({exc}); fix the "
                "path in the setting or remove it"
            ) from exc
        if resolved in seen:  # CLAUDE.md as a link to AGENTS.md: one file, used once
            continue
        seen.add(resolved)
        raw = base.read_bytes(resolved, MAX_READ_BYTES).decode("utf-8", "replace")
        meta, body = split_front_matter(raw)
        applies = kind.scope(path, meta) or (EVERY_FILE if named else None)
        text = kind.select(body).strip()
        if applies is None or not text:
            continue
        text, cut = cut_text(text, MAX_FILE_CHARS, f"at most {MAX_FILE_CHARS:,} per rule file")
        order = (applies.depth if kind.nested else 0, KINDS.index(kind) if kind in KINDS else 99)
        rules.append(RuleFile(path, applies, text, cut, (*order, path)))
    return sorted(rules, key=lambda rule: rule.order)


def _discover(base: Workspace, changed: list[str]) -> list[tuple[str, RuleKind]]:
    """The rule files of the table that exist at the base: nested kinds in the folders of
    the changed files (and above), the others where the table says."""
    folders = {""}
    for path in changed:
        parent = posixpath.dirname(path)
        while parent and parent not in folders:
            folders.add(parent)
            parent = posixpath.dirname(parent)
    kinds = base.listing.kinds
    found = []
    for kind in KINDS:
        if kind.nested:
            candidates = sorted(posixpath.join(f, kind.where) for f in folders)
        else:
            fixed = kind.where.split("*", 1)[0].rsplit("/", 1)[0] if "*" in kind.where else ""
            candidates = base.listing.under(fixed) if "*" in kind.where else [kind.where]
        found += [(path, kind) for path in candidates if path in kinds and kind.holds(path)]
    return found


def cut_text(text: str, limit: int, why: str) -> tuple[str, str]:
    """`text` within `limit` characters (at a line end when one is near), and what was cut
    and `why`."""
    if len(text) <= limit:
        return text, ""
    end = text.rfind("\n", 0, limit)
    kept = text[: end if end > limit // 2 else limit].rstrip()
    return kept, f"cut to {len(kept):,} of {len(text):,} characters ({why})"


def total_limit(context_window: int, chars_per_token: float, task_share: float) -> int:
    """Characters the rules of one part may take: a share of its first message."""
    return max(MIN_TOTAL_CHARS, int(context_window * task_share * chars_per_token * RULES_SHARE))


@dataclass
class RuleUsage:
    """Which changed files each rule file reached, and what of it was cut, over all parts."""

    applied: dict[str, set[str]] = field(default_factory=dict)
    cuts: dict[str, list[str]] = field(default_factory=dict)

    def note(self, path: str, files: Iterable[str], cut: str) -> None:
        self.applied.setdefault(path, set()).update(files)
        cuts = self.cuts.setdefault(path, [])
        if cut and cut not in cuts:
            cuts.append(cut)

    def result(self, rules: list[RuleFile]) -> tuple[RuleFileUse, ...]:
        """The rule files used, in the order of `rules` (general before specific)."""
        return tuple(
            RuleFileUse(
                rule.path, tuple(sorted(self.applied[rule.path])), "; ".join(self.cuts[rule.path])
            )
            for rule in rules
            if rule.path in self.applied
        )


def rules_for_part(
    rules: list[RuleFile],
    paths: list[str],
    limit: int,
    *,
    part: str = "",
    usage: RuleUsage | None = None,
) -> list[dict[str, str]]:
    """The template values of the rules that apply to a part's files (`paths`), within
    `limit` characters together; the rules that do not fit are cut or left out, and said."""
    shown: list[dict[str, str]] = []
    room = limit
    for rule in rules:
        files = [p for p in paths if rule.applies.matches(p)]
        if not files:
            continue
        text, cut = rule.text, rule.cut
        where = f" in {part}" if part else ""
        why = f"the rule files of one part may take {limit:,} characters"
        if len(text) > room:
            if room < _MIN_PIECE:
                if usage is not None:
                    usage.note(rule.path, (), f"left out{where} ({why})")
                continue
            text, more = cut_text(text, room, why)
            cut = "; ".join(filter(None, [cut, f"{more}{where}"]))
        room -= len(text)
        if usage is not None:
            usage.note(rule.path, files, cut)
        shown.append(
            {
                "path": quote_path(rule.path),
                "applies": _applies_text(files, paths),
                "text": text,
                "fence": _fence_for(text),
                "cut": cut,
            }
        )
    return shown


def naming_allowance(rules: list[RuleFile], paths: list[str]) -> int:
    """Room to hold back, beside the rules measured for the whole change, for the files a
    part's rules name (a part may list up to _MAX_NAMED files where the whole says "every")."""
    widest = max((len(quote_path(p)) for p in paths), default=0)
    return min(len(rules), 20) * (_MAX_NAMED * (widest + 4) + 20)


def _applies_text(files: list[str], paths: list[str]) -> str:
    if len(files) == len(paths):
        return "every file of this part" if len(paths) > 1 else f"`{quote_path(files[0])}`"
    named = ", ".join(f"`{quote_path(p)}`" for p in files[:_MAX_NAMED])
    more = len(files) - _MAX_NAMED
    return named + (f" and {more} more" if more > 0 else "")


def _fence_for(text: str) -> str:
    """A fence longer than any run of backticks in the text, so the text cannot close it."""
    runs = re.findall(r"`+", text)
    return "`" * max(3, max((len(run) for run in runs), default=0) + 1)
