"""Review threads of the fake GitHub: a review comment that answers none is a thread's root, and
every reply joins its root's thread (`in_reply_to_id` is always the root, as on GitHub).

Threads have what GitHub keeps about them beyond their comments: whether they are resolved and
by whom. Whether a thread is outdated follows its root comment (its line changed or left the
diff at the head), unless a test says otherwise with `outdated`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from reviewer.testing._gh_objects import node_id
from reviewer.testing._gh_state import ReviewComment

THREAD_TYPE = "PullRequestReviewThread"


@dataclass
class ThreadState:
    is_resolved: bool = False
    resolved_by: str | None = None  # a login; None when unresolved or resolved by an app
    outdated: bool | None = None  # set by a test; None: computed from the head


@dataclass(frozen=True)
class Thread:
    root: ReviewComment
    comments: tuple[ReviewComment, ...]  # the root first, then its replies in order
    state: ThreadState

    @property
    def node_id(self) -> str:
        return thread_node_id(self.root.id)


def thread_node_id(root_id: int) -> str:
    return node_id(THREAD_TYPE, root_id)


@dataclass
class ThreadBook:
    """What GitHub remembers about threads, by the database id of their root comment."""

    states: dict[int, ThreadState] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def state(self, root_id: int) -> ThreadState:
        with self.lock:
            return self.states.setdefault(root_id, ThreadState())

    def threads(self, comments: list[ReviewComment]) -> list[Thread]:
        """The threads of `comments` (the visible review comments), oldest first."""
        replies: dict[int, list[ReviewComment]] = {}
        roots: list[ReviewComment] = []
        for comment in comments:
            if comment.in_reply_to_id is None:
                roots.append(comment)
            else:
                replies.setdefault(comment.in_reply_to_id, []).append(comment)
        return [
            Thread(root, (root, *replies.get(root.id, ())), self.state(root.id)) for root in roots
        ]

    def thread_of(self, comments: list[ReviewComment], comment_id: int) -> Thread | None:
        """The thread a comment belongs to (as root or reply)."""
        comment = next((c for c in comments if c.id == comment_id), None)
        if comment is None:
            return None
        root_id = comment.in_reply_to_id or comment.id
        return next((t for t in self.threads(comments) if t.root.id == root_id), None)

    def by_node_id(self, comments: list[ReviewComment], wanted: str) -> Thread | None:
        return next((t for t in self.threads(comments) if t.node_id == wanted), None)

    @staticmethod
    def resolve(thread: Thread, login: str | None) -> None:
        thread.state.is_resolved = True
        thread.state.resolved_by = login

    @staticmethod
    def unresolve(thread: Thread) -> None:
        thread.state.is_resolved = False
        thread.state.resolved_by = None
