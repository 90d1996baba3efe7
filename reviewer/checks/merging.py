"""One finding once: the same problem reported twice (by two parts of a review, or twice by
one loop) is merged into one finding that counts both.

Two findings are the same problem when they are on the same file and side, their line
ranges overlap, their categories do not differ (equal, or one has none), and their titles
are alike: the words they share are at least half of all the words of both (lower-cased,
words of one or two letters and common filler left out). The most severe is kept (then
the inline one, then the one with a suggestion, then the first); `merged_from` counts them
all.
"""

from __future__ import annotations

import re
from dataclasses import replace

from reviewer.findings import Finding, sort_findings

# Words that say nothing about which problem a title names.
_FILLER = frozenset(
    {
        "the", "and", "for", "with", "this", "that", "may", "can", "could", "might", "not",
        "are", "was", "were", "when", "from", "into", "its", "has", "have", "will", "should",
        "would",
    }
)  # fmt: skip
_WORD = re.compile(r"[a-z0-9_]+")
# Share of both titles' words that both must hold.
SIMILAR_TITLES = 0.5


def title_words(title: str) -> frozenset[str]:
    return frozenset(
        w for w in _WORD.findall(title.lower()) if len(w) > 2 and w not in _FILLER
    )


def same_problem(a: Finding, b: Finding) -> bool:
    if (a.path, a.side) != (b.path, b.side):
        return False
    if a.line > b.last_line or b.line > a.last_line:
        return False
    if a.category and b.category and a.category != b.category:
        return False
    words_a, words_b = title_words(a.title), title_words(b.title)
    if not words_a or not words_b:
        return a.title.strip().lower() == b.title.strip().lower()
    return len(words_a & words_b) >= SIMILAR_TITLES * len(words_a | words_b)


def _preference(finding: Finding) -> tuple[int, bool, bool]:
    return (finding.severity.rank, finding.inline, finding.suggestion is not None)


def merge_overlapping(findings: list[Finding]) -> list[Finding]:
    """The findings with each problem once; a merged finding's `merged_from` counts the
    findings it stands for. Order-independent for the kept finding's choice: candidates are
    compared in report order."""
    kept: list[Finding] = []
    for finding in sort_findings(findings):
        match = next((i for i, k in enumerate(kept) if same_problem(k, finding)), None)
        if match is None:
            kept.append(finding)
            continue
        current = kept[match]
        total = current.merged_from + finding.merged_from
        winner = finding if _preference(finding) > _preference(current) else current
        kept[match] = replace(winner, merged_from=total)
    return sort_findings(kept)
