"""What the model is told: which files are reviewed, the line-numbered diff, the instructions,
rendered through the Jinja templates in `prompts/` (a repository may override them). The
diff's text and the cutting of a file into pieces is `reviewer.change.diff_text`.

Every changed file ends up either reviewed or skipped with a reason; nothing is dropped
silently. Nothing from the process environment is passed to a template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jinja2 import Template

from reviewer.change import Change, FileChange
from reviewer.change.batching import Batch, Piece, plan_batches
from reviewer.change.diff_text import render_piece, rendered_size, shown_lines
from reviewer.change.selection import select_files
from reviewer.checks.noise import prompt_rows
from reviewer.context.tickets.model import Ticket
from reviewer.context.tickets.read import ticket_values
from reviewer.findings import FileCoverage, RuleFileUse
from reviewer.loop.tokens import CHARS_PER_TOKEN
from reviewer.safety.sinks import map_strings
from reviewer.settings.config import Settings
from reviewer.settings.learning_prompts import LEARNINGS_SHARE, LearningUsage, learnings_for_part
from reviewer.settings.learnings import NO_LEARNINGS, Learnings
from reviewer.settings.prompts import fence_for, prompt_environment
from reviewer.settings.rule_files import (
    RuleUsage,
    load_rule_files,
    naming_allowance,
    rules_for_part,
    total_limit,
)
from reviewer.workspace.globs import basename_or_path_matcher
from reviewer.workspace.paths import quote_path

# Share of the context window the first message (diff included) may take; the rest is for
# the investigation and the reply.
TASK_SHARE = 0.45


@dataclass(frozen=True)
class ChangeInfo:
    """The change as a person describes it: untrusted text, shown to the model as data."""

    title: str
    description: str
    repository: str


@dataclass(frozen=True)
class BatchContext:
    """The two messages of one agent loop, and what it covers. The task (the diff) is
    rendered on demand: a large change's batches are not all held in memory at once."""

    system: str
    render_task: Callable[[], str]
    label: str
    paths: tuple[str, ...]

    @property
    def task(self) -> str:
        return self.render_task()


@dataclass(frozen=True)
class ReviewPlan:
    batches: tuple[BatchContext, ...]
    coverage: tuple[FileCoverage, ...]
    rule_files: tuple[RuleFileUse, ...] = ()
    # The team's learnings read for the review, and the files each reached (learning id ->
    # the changed files of the parts that were shown it), and what was left out for room.
    learnings: Learnings = NO_LEARNINGS
    learnings_applied: dict[str, tuple[str, ...]] = field(default_factory=dict)
    learnings_cuts: tuple[str, ...] = ()


# What each batch is told of the change's files: its own files in full (a file a line); the
# files of the other parts as directories with counts, at most MAX_OTHER_DIRS lines; the
# files not reviewed (lock files, vendored code, ...) with their reason, at most
# MAX_SKIPPED_LISTED. The tools answer the rest. Bounded, so a batch's room goes to its diff.
MAX_LISTED_FILES = 1000
MAX_OTHER_DIRS = 30
MAX_SKIPPED_LISTED = 50

# A diff budget never goes below this, whatever the rest of the message takes.
_MIN_DIFF_CHARS = 4000


def build_plan(
    *,
    change: Change,
    info: ChangeInfo,
    settings: Settings,
    revision_label: str,
    root: Path,
    config_revision: str | None,
    redact: Callable[[str], str] = str,
    tickets: Sequence[Ticket] = (),
    tickets_not_read: int = 0,
    learnings: Learnings = NO_LEARNINGS,
) -> ReviewPlan:
    """The messages for one agent loop per batch. One batch when the diff fits the window.

    A batch's task is redacted value by value (`redact` on every string that goes into the
    template, and on each file's diff on its own), never as one text: a secret format that
    runs to the end of its text (a private key's header without its END line) would then
    hide everything after it. A test file holding such a header, or a file *named* like
    one, hides at most its own diff or its own name, never the rest of the batch."""
    coverage = select_files(change, settings)
    files = {f.path: f for f in change.files}
    reviewed = [files[c.path] for c in coverage if c.reviewed]
    skipped = [c for c in coverage if not c.reviewed]
    environment = prompt_environment(root, config_revision)
    # The team's rule files, at the base like the settings; each part gets those for its files.
    rules = load_rule_files(root, config_revision, settings.rule_files, [f.path for f in reviewed])
    rules_limit = total_limit(settings.context_window, CHARS_PER_TOKEN, TASK_SHARE)
    usage = RuleUsage()
    # The team's learnings (read at the base by the caller): each part those for its files.
    learnings_limit = max(
        1_000, int(settings.context_window * TASK_SHARE * CHARS_PER_TOKEN * LEARNINGS_SHARE)
    )
    learned = LearningUsage()
    values = {
        "repository": info.repository,
        "revision": revision_label,
        "language": settings.language,
        "title": info.title,
        "description": info.description,
        "instructions": settings.instructions.strip(),
        "rule_files": [],
        "learnings": {},
        "files": [],
        "other_files": [],
        "more_files": 0,
        "fence": fence_for(info.description + info.title),
        # What the change is for: the tickets it names, read (prompts/_tickets.md.j2).
        "tickets": ticket_values(tickets),
        # How many tickets the change named that the model is not shown (counts survive cuts).
        "tickets_not_read": tickets_not_read,
        "verifying": False,
        "batch": "",
        # The noise table (data/noise.toml), the one source of what the model is told.
        "noise_classes": prompt_rows(),
    }
    system = environment.get_template("system.md.j2").render(values)
    task = environment.get_template("task.md.j2")
    fixed = len(
        task.render(
            {
                **values,
                "diff": "",
                "path_instructions": _path_instructions(settings, [f.path for f in reviewed]),
                "rule_files": rules_for_part(rules, [f.path for f in reviewed], rules_limit),
                "learnings": learnings_for_part(
                    learnings, [f.path for f in reviewed], learnings_limit
                ),
            }
        )
    ) + len(system)
    budget = max(
        _MIN_DIFF_CHARS,
        int(settings.context_window * TASK_SHARE * CHARS_PER_TOKEN)
        - fixed
        - _listing_allowance(reviewed, skipped)
        - naming_allowance(rules, [f.path for f in reviewed]),
    )
    batches = plan_batches(
        reviewed, budget, lambda piece: min(rendered_size(piece), budget) + _listed_size(piece)
    )
    coverage = _mark_cut(coverage, batches, budget)
    by_path = {c.path: c for c in coverage}
    directories = _Directories(reviewed)
    contexts = []
    for number, batch in enumerate(batches, 1):
        note = ""
        if len(batches) > 1:
            note = (
                f"This change is too large for one request: it is reviewed in {len(batches)} "
                f"parts. This is part {number}, with: {batch.label}. Review the files of this "
                "part; the others are reviewed separately (you can still read any file)."
            )
        own = [by_path[path] for path in batch.paths]
        part = f"part {number} of {len(batches)}" if len(batches) > 1 else ""
        listed, more = _bounded(own, skipped, single=len(batches) == 1)
        batch_values: dict[str, Any] = {
            **values,
            "batch": note,
            # Names as the tools print them (quote_path): the model meets one spelling of a
            # name everywhere, and a name that is not UTF-8 can be sent at all.
            "files": [replace(c, path=quote_path(c.path)) for c in listed],
            "other_files": directories.others(set(batch.paths)),
            "more_files": more,
            "path_instructions": _path_instructions(settings, batch.paths),
            "rule_files": rules_for_part(rules, batch.paths, rules_limit, part=part, usage=usage),
            "learnings": learnings_for_part(
                learnings, batch.paths, learnings_limit, part=part, usage=learned
            ),
        }
        contexts.append(
            BatchContext(
                system=system,
                render_task=_task_renderer(
                    task, map_strings(batch_values, redact), batch.pieces, budget, redact
                ),
                label=batch.label,
                paths=tuple(batch.paths),
            )
        )
    return ReviewPlan(
        tuple(contexts),
        tuple(coverage),
        usage.result(rules),
        learnings,
        {key: tuple(sorted(files)) for key, files in learned.applied.items()},
        tuple(learned.cuts),
    )


def _mark_cut(
    coverage: list[FileCoverage], batches: list[Batch], budget: int
) -> list[FileCoverage]:
    """A file whose diff render_piece cuts is partly reviewed, with the lines it shows: the
    model may read the rest with the tools, but nothing says it did."""
    shown: dict[str, list[tuple[int, int]]] = {}
    cut: set[str] = set()
    for batch in batches:
        for piece in batch.pieces:
            spans = shown_lines(piece, budget)
            if spans is None:
                hunks = piece.file.hunks if piece.hunks is None else piece.hunks
                spans = tuple((h.new_start, h.new_start + h.new_count - 1)
                              for h in hunks if h.new_count)  # fmt: skip
            else:
                cut.add(piece.path)
            shown.setdefault(piece.path, []).extend(spans)
    return [
        replace(c, partly_reviewed=True, shown_lines=tuple(sorted(shown[c.path])))
        if c.path in cut
        else c
        for c in coverage
    ]


def _task_renderer(
    task: Template,
    values: dict[str, Any],
    pieces: tuple[Piece, ...],
    budget: int,
    redact: Callable[[str], str],
) -> Callable[[], str]:
    """The batch's first message, rendered when its loop starts: the diffs of all batches
    are never held at once."""

    def render() -> str:
        diff = "\n\n".join(redact(render_piece(piece, budget)) for piece in pieces)
        return task.render({**values, "diff": diff})

    return render


def _listing_allowance(reviewed: list[FileChange], skipped: list[FileCoverage]) -> int:
    """Room every batch holds for its bounded lists: the files not reviewed, and the other
    parts' directories (a batch's own file lines are counted with its pieces)."""
    skipped_size = sum(len(quote_path(c.path)) + len(c.reason) + 40 for c in skipped)
    directories = {f.path.rsplit("/", 1)[0] if "/" in f.path else "" for f in reviewed}
    widest = max((len(quote_path(d)) for d in directories), default=0)
    return (
        min(skipped_size, MAX_SKIPPED_LISTED * 200)
        + min(len(directories), MAX_OTHER_DIRS) * (widest + 30)
        + 120
    )


def _listed_size(piece: Piece) -> int:
    """What a file's line in the batch's file list costs (counted once per piece)."""
    return len(quote_path(piece.file.path)) + 40


def _bounded(
    own: list[FileCoverage], skipped: list[FileCoverage], *, single: bool
) -> tuple[list[FileCoverage], int]:
    """The files a batch lists one a line, and how many more there are unlisted."""
    if single:
        shown = [*own, *skipped[:MAX_SKIPPED_LISTED]][:MAX_LISTED_FILES]
        return shown, len(own) + len(skipped) - len(shown)
    shown_skipped = skipped[:MAX_SKIPPED_LISTED]
    return [*own, *shown_skipped], len(skipped) - len(shown_skipped)


class _Directories:
    """How many reviewed files each directory holds, at every depth, counted once for the
    whole change; a batch's view of the other parts subtracts its own files (so a change of
    2,000 files in 200 parts is not counted 200 times over)."""

    def __init__(self, reviewed: list[FileChange]) -> None:
        self.parts = {f.path: f.path.split("/")[:-1] for f in reviewed}
        self.depth = max((len(p) for p in self.parts.values()), default=0)
        self.counts = [self._count(self.parts.values(), depth) for depth in range(self.depth + 1)]

    @staticmethod
    def _count(all_parts: Iterable[list[str]], depth: int) -> dict[str, int]:
        counts: dict[str, int] = {}
        for parts in all_parts:
            key = "/".join(parts[:depth]) + "/" if parts[:depth] else "./"
            counts[key] = counts.get(key, 0) + 1
        return counts

    def others(self, own: set[str]) -> list[tuple[str, int]]:
        """The reviewed files outside `own` as (directory, count), at most MAX_OTHER_DIRS:
        the deepest directories that fit, folded into their parents until they do."""
        mine = [self.parts[path] for path in own if path in self.parts]
        if len(mine) == len(self.parts):
            return []
        for depth in range(self.depth, -1, -1):
            counts = dict(self.counts[depth])
            for key, count in self._count(mine, depth).items():
                counts[key] -= count
            left = {key: count for key, count in counts.items() if count}
            if len(left) <= MAX_OTHER_DIRS or depth == 0:
                break
        ordered = sorted(left.items())
        if len(ordered) > MAX_OTHER_DIRS:  # even the top level is too wide: the biggest first
            ordered.sort(key=lambda item: -item[1])
            rest = sum(count for _, count in ordered[MAX_OTHER_DIRS - 1 :])
            ordered = [*sorted(ordered[: MAX_OTHER_DIRS - 1]), ("(elsewhere)", rest)]
        return [(d if d in ("./", "(elsewhere)") else quote_path(d), n) for d, n in ordered]


def _path_instructions(settings: Settings, paths: list[str]) -> list[tuple[str, str]]:
    chosen = []
    for glob, text in settings.path_instructions.items():
        matcher = basename_or_path_matcher(glob)
        if any(matcher.fullmatch(p) for p in paths):
            chosen.append((glob, text.strip()))
    return chosen
