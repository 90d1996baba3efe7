"""What the fake GitLab as a program keeps across restarts: its merge request's conversation.

`fake_gitlab --state FILE` rewrites FILE after every write; started again with the same FILE
on the same merge request (project, iid, branches), it takes back the versions, discussions,
notes, award emoji, people and roles, so stopping it between runs loses nothing. A file of
another merge request or of another version of the fake is not read: it starts empty and says
why.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from reviewer.testing._gl_store import (
    Award,
    Discussion,
    JsonObject,
    MergeRequestStore,
    Note,
    User,
    Version,
)

VERSION = 1


def dump(store: MergeRequestStore) -> JsonObject:
    with store.lock:
        return {
            "version": VERSION,
            "merge_request": _identity(store),
            "users": [dataclasses.asdict(u) for u in store.users.values()],
            "members": dict(store.members),
            "versions": [dataclasses.asdict(v) for v in store.versions],
            "discussions": [dataclasses.asdict(d) for d in store.discussions],
        }


def restore(store: MergeRequestStore, memory: Any) -> str:
    """Take back what `dump` wrote for this merge request; what was restored, or why not."""
    if not isinstance(memory, dict) or memory.get("version") != VERSION:
        return "not restored: the state file is of another version of the fake"
    if memory.get("merge_request") != _identity(store):
        return "not restored: the state file is of another merge request"
    with store.lock:
        store.users = {u["username"]: User(**u) for u in memory["users"]}
        store.members = dict(memory["members"])
        store.versions = [Version(**v) for v in memory["versions"]]
        store.discussions = []
        for entry in memory["discussions"]:
            notes = [
                Note(**{**n, "awards": [Award(**a) for a in n["awards"]]})
                for n in entry.pop("notes")
            ]
            store.discussions.append(Discussion(**entry, notes=notes))
        notes = [n for d in store.discussions for n in d.notes]
        awards = [a.id for n in notes for a in n.awards]
        store.note_ids = itertools.count(max((n.id for n in notes), default=3_000_000) + 1)
        store.award_ids = itertools.count(max(awards, default=5_000) + 1)
        store.discussion_serial = itertools.count(len(store.discussions) + 1)
        return (
            f"restored {len(store.discussions)} discussions, {len(notes)} notes and "
            f"{len(store.versions)} versions"
        )


def _identity(store: MergeRequestStore) -> JsonObject:
    info = store.info
    return {
        "project": info.path_with_namespace,
        "iid": info.iid,
        "source_branch": info.source_branch,
        "target_branch": info.target_branch,
    }
