"""The fake GitHub's side of a review as a conversation, for tests: who may act, the token's
permissions, people acting between two runs (reply, resolve, react, edit, comment), threads to
assert on, and the comment events a run would receive.

`FakeGitHub` mixes this in; see `reviewer.testing.fake_github` for the whole picture.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reviewer.testing._gh_events import issue_comment_event, review_comment_event
from reviewer.testing._gh_objects import JsonObject, timestamp
from reviewer.testing._gh_permissions import token_permissions
from reviewer.testing._gh_reactions import CONTENTS, ISSUE_COMMENT, REVIEW_COMMENT
from reviewer.testing._gh_state import ReviewComment
from reviewer.testing._gh_store import PullRequestStore
from reviewer.testing._gh_threads import Thread, ThreadBook


@dataclass(frozen=True)
class Person:
    """Someone acting on the pull request between runs, as in GitHub's web page (no HTTP).

    Refusals are test-setup errors (ValueError), not GitHub answers: resolving needs write
    access or authorship of the pull request, as on GitHub."""

    store: PullRequestStore
    login: str

    def reply(self, comment_id: int, body: str) -> JsonObject:
        """A reply in the thread of review comment `comment_id` (root or reply)."""
        with self.store.lock:
            reply = self.store.add_reply(_review_comment(self.store, comment_id), body, self.login)
            return self.store.comment_json(reply)

    def resolve(self, comment_id: int) -> None:
        """Resolve the thread of review comment `comment_id`."""
        with self.store.lock:
            self._check_may_resolve()
            ThreadBook.resolve(_thread(self.store, comment_id), self.login)

    def unresolve(self, comment_id: int) -> None:
        with self.store.lock:
            self._check_may_resolve()
            ThreadBook.unresolve(_thread(self.store, comment_id))

    def react(self, comment_id: int, content: str) -> None:
        """A reaction (`+1`, `-1`, `laugh`, ...) on a review comment or an issue comment."""
        if content not in CONTENTS:
            raise ValueError(f"reaction {content!r} is not one of {tuple(CONTENTS)}")
        with self.store.lock:
            kind = _kind(self.store, comment_id)
            self.store.reactions.add(kind, comment_id, self.login, content)

    def edit(self, comment_id: int, body: str) -> JsonObject:
        """Edit one's own review comment or issue comment; the JSON after the edit."""
        with self.store.lock:
            kind = _kind(self.store, comment_id)
            items = (
                self.store.review_comments if kind == REVIEW_COMMENT else self.store.issue_comments
            )
            item = next(c for c in items if c.id == comment_id)
            if item.user != self.login:
                raise ValueError(f"{self.login} cannot edit a comment by {item.user}")
            item.body, item.updated_at = body, timestamp()
            if isinstance(item, ReviewComment):
                return self.store.comment_json(item)
            return self.store.issue_comment_json(item)

    def comment(self, body: str) -> JsonObject:
        """A comment on the pull request's conversation."""
        return self.store.issue_comment_json(self.store.add_issue_comment(body, user=self.login))

    def _check_may_resolve(self) -> None:
        if self.login != self.store.info.author and not self.store.access.may_write(self.login):
            role = self.store.access.role(self.login)
            raise ValueError(f"{self.login} ({role}) may not resolve threads on GitHub")


def _review_comment(store: PullRequestStore, comment_id: int) -> ReviewComment:
    found = next((c for c in store.review_comments if c.id == comment_id), None)
    if found is None:
        raise ValueError(f"no review comment {comment_id}")
    return found


def _thread(store: PullRequestStore, comment_id: int) -> Thread:
    found = store.threads.thread_of(store.visible_comments(), comment_id)
    if found is None:
        raise ValueError(f"no review thread with comment {comment_id}")
    return found


def _kind(store: PullRequestStore, comment_id: int) -> str:
    if any(c.id == comment_id for c in store.review_comments):
        return REVIEW_COMMENT
    if any(c.id == comment_id for c in store.issue_comments):
        return ISSUE_COMMENT
    raise ValueError(f"no comment {comment_id}")


class ConversationMixin:
    """Methods of `FakeGitHub` about the conversation (it provides `store` and `bot`)."""

    store: PullRequestStore
    bot: str

    def person(self, login: str, role: str | None = None) -> Person:
        """Someone who acts between runs; `role` (admin, maintain, write, triage, read, none)
        also makes them a collaborator with that role."""
        if role is not None:
            self.add_collaborator(login, role)
        return Person(self.store, login)

    def add_collaborator(self, login: str, role: str) -> None:
        """`login`'s role on the repository, as the permission endpoint reports it."""
        self.store.access.set_role(login, role)

    @property
    def token_permissions(self) -> dict[str, str]:
        """The token's permissions (`contents`, `pull_requests`, `issues`: read or write)."""
        return dict(self.store.access.token)

    @token_permissions.setter
    def token_permissions(self, value: Mapping[str, str] | None) -> None:
        self.store.access.token = token_permissions(value)

    def threads(self) -> list[JsonObject]:
        """Every visible review thread: `id` (node id), `comment_ids` (root first),
        `is_resolved`, `resolved_by` (REST login), `is_outdated`."""
        with self.store.lock:
            return [
                {
                    "id": t.node_id,
                    "comment_ids": [c.id for c in t.comments],
                    "is_resolved": t.state.is_resolved,
                    "resolved_by": t.state.resolved_by,
                    "is_outdated": self.store.thread_outdated(t),
                }
                for t in self.store.review_threads()
            ]

    def set_thread_outdated(self, comment_id: int, outdated: bool | None = True) -> None:
        """Force the `isOutdated` of a comment's thread (None: follow the head again)."""
        with self.store.lock:
            _thread(self.store, comment_id).state.outdated = outdated

    def reactions(self, comment_id: int) -> list[tuple[str, str]]:
        """(login, content) of each reaction on a review or issue comment."""
        with self.store.lock:
            kind = _kind(self.store, comment_id)
            return [(r.user, r.content) for r in self.store.reactions.on(kind, comment_id)]

    def review_comment_event(
        self,
        comment: JsonObject,
        action: str = "created",
        *,
        sender: str | None = None,
        old_body: str | None = None,
    ) -> JsonObject:
        """The `pull_request_review_comment` payload for `comment` (its JSON, e.g. as a helper
        returned it, or as kept from before a deletion)."""
        return review_comment_event(self.store, comment, action, sender, old_body)

    def issue_comment_event(
        self,
        comment: JsonObject,
        action: str = "created",
        *,
        sender: str | None = None,
        old_body: str | None = None,
    ) -> JsonObject:
        """The `issue_comment` payload for a comment on the pull request's conversation."""
        return issue_comment_event(self.store, comment, action, sender, old_body)
