"""`reviewer eval --shard K/N`: one machine's part of a benchmark that outgrows one.

Shard K of N takes every N-th case of the cases picked (datasets in the order given, each in
its own order; after --only and --limit): cases K-1, K-1+N, K-1+2N, ... counted from 0. The
shards of one N are disjoint and together hold every case, whatever N is; `--merge` joins
their results (merge.py) and checks exactly that from what each results.json records here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeVar

from reviewer.errors import ReviewerError

T = TypeVar("T")
_SHAPE = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True)
class Shard:
    index: int  # K, 1-based
    count: int  # N

    def take(self, cases: list[T]) -> list[T]:
        return cases[self.index - 1 :: self.count]

    def record(self, total: int) -> dict[str, Any]:
        """What results.json says of the shard: K, N, and how many cases all N share."""
        return {"index": self.index, "count": self.count, "cases": total}


def parse_shard(text: str) -> Shard:
    match = _SHAPE.fullmatch(text.strip())
    index, count = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if not match or count < 1 or not 1 <= index <= count:
        raise ReviewerError(
            f"--shard '{text}': give K/N with 1 <= K <= N (e.g. --shard 2/4 runs every 4th "
            "case from the 2nd)"
        )
    return Shard(index, count)


def positions(index: int, count: int, total: int) -> range:
    """The places (0-based, in the whole run's order) of shard `index`/`count`'s cases."""
    return range(index - 1, total, count)
