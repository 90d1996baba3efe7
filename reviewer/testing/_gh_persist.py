"""What the fake GitHub as a program keeps across restarts: its pull request's conversation.

`fake_github ... --state FILE` rewrites FILE after every write; the file's `_memory` key holds
the records behind it (reviews, comments, threads' resolution, reactions, people's roles, the
next ids, the head). Started again with the same FILE on the same pull request (base and head
branch), the fake takes them back, so stopping it between runs loses nothing (it wiped the
recorded conversation). A file of another pull request, or of another version, is not read:
the fake starts empty and says why.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from reviewer.testing._gh_reactions import Reaction
from reviewer.testing._gh_state import IssueComment, Review, ReviewComment
from reviewer.testing._gh_store import PullRequestStore
from reviewer.testing._gh_threads import ThreadState

MEMORY_KEY = "_memory"
VERSION = 1


def dump(store: PullRequestStore) -> dict[str, Any]:
    """The store's records as JSON values (under the store's lock)."""
    with store.lock:
        return {
            "version": VERSION,
            "pull": _identity(store),
            "head_sha": store.head_sha,
            "pr_commits": sorted(store.pr_commits),
            "reviews": [dataclasses.asdict(r) for r in store.reviews],
            "review_comments": [dataclasses.asdict(c) for c in store.review_comments],
            "issue_comments": [dataclasses.asdict(c) for c in store.issue_comments],
            "threads": {
                str(root): dataclasses.asdict(state)
                for root, state in store.threads.states.items()
            },
            "reactions": [
                {"kind": kind, "comment": comment, **dataclasses.asdict(reaction)}
                for (kind, comment), reactions in store.reactions.items.items()
                for reaction in reactions
            ],
            "collaborators": dict(store.access.collaborators),
            "next_ids": _next_ids(store),
        }


def restore(store: PullRequestStore, memory: object) -> str:
    """Take back what `dump` wrote for this pull request; what was restored, or why not."""
    if not isinstance(memory, dict) or memory.get("version") != VERSION:
        return "not restored: the state file is of another version of the fake"
    if memory.get("pull") != _identity(store):
        return "not restored: the state file is of another pull request (base or head branch)"
    with store.lock:
        store.reviews = [Review(**r) for r in memory["reviews"]]
        store.review_comments = [ReviewComment(**c) for c in memory["review_comments"]]
        store.issue_comments = [IssueComment(**c) for c in memory["issue_comments"]]
        store.threads.states = {
            int(root): ThreadState(**state) for root, state in memory["threads"].items()
        }
        store.reactions.items = {}
        for entry in memory["reactions"]:
            key = (entry.pop("kind"), entry.pop("comment"))
            store.reactions.items.setdefault(key, []).append(Reaction(**entry))
        store.access.collaborators.update(memory["collaborators"])
        store.pr_commits.update(memory["pr_commits"])
        ids = memory["next_ids"]
        store._review_ids = itertools.count(ids["review"])
        store._comment_ids = itertools.count(ids["comment"])
        store._issue_comment_ids = itertools.count(ids["issue_comment"])
        store.reactions._ids = itertools.count(ids["reaction"])
    if memory["head_sha"] != store.head_sha:
        store.set_head(memory["head_sha"])  # where the last push left it
    counts = (
        _count(len(store.reviews), "review"),
        _count(len(store.review_comments), "review comment"),
        _count(len(store.issue_comments), "comment"),
    )
    return f"restored {counts[0]}, {counts[1]} and {counts[2]}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _identity(store: PullRequestStore) -> dict[str, Any]:
    info = store.info
    return {"number": info.number, "base_ref": info.base_ref, "head_ref": info.head_ref}


def _next_ids(store: PullRequestStore) -> dict[str, int]:
    """The next id of each kind, one past the largest given (counters cannot be read)."""

    def after(ids: list[int], first: int) -> int:
        return max(ids, default=first - 1) + 1

    reactions = [r.id for group in store.reactions.items.values() for r in group]
    return {
        "review": after([r.id for r in store.reviews], 1_800_000_001),
        "comment": after([c.id for c in store.review_comments], 1_500_000_001),
        "issue_comment": after([c.id for c in store.issue_comments], 2_100_000_001),
        "reaction": after(reactions, 300_000_001),
    }
