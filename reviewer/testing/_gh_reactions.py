"""Reactions the fake GitHub remembers on review comments and issue comments.

`content` is one of +1, -1, laugh, confused, heart, hooray, rocket, eyes (REST names; GraphQL
calls them THUMBS_UP, THUMBS_DOWN, ...). A user has at most one reaction of each content on a
comment: reacting again finds the existing one (the REST POST then answers 200, not 201).
The endpoints are in `_gh_conversation_api`, GraphQL's `reactionGroups` in `_gh_graphql_types`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from reviewer.testing._gh_objects import (
    JsonObject,
    Site,
    invalid_request,
    node_id,
    ruby_repr,
    timestamp,
)

# REST content -> GraphQL ReactionContent, in the order GitHub lists reactionGroups.
CONTENTS = {
    "+1": "THUMBS_UP",
    "-1": "THUMBS_DOWN",
    "laugh": "LAUGH",
    "hooray": "HOORAY",
    "confused": "CONFUSED",
    "heart": "HEART",
    "rocket": "ROCKET",
    "eyes": "EYES",
}
REVIEW_COMMENT = "review_comment"
ISSUE_COMMENT = "issue_comment"


@dataclass(frozen=True)
class Reaction:
    id: int
    user: str
    content: str  # REST form, e.g. "+1"
    created_at: str


@dataclass
class ReactionBook:
    """Reactions by subject: (REVIEW_COMMENT or ISSUE_COMMENT, comment id)."""

    items: dict[tuple[str, int], list[Reaction]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(300_000_001))

    def on(self, kind: str, comment_id: int) -> list[Reaction]:
        return list(self.items.get((kind, comment_id), ()))

    def add(self, kind: str, comment_id: int, user: str, content: str) -> tuple[Reaction, bool]:
        """The reaction, and whether it is new (GitHub keeps one per user and content)."""
        existing = self.items.setdefault((kind, comment_id), [])
        for reaction in existing:
            if reaction.user == user and reaction.content == content:
                return reaction, False
        reaction = Reaction(next(self._ids), user, content, timestamp())
        existing.append(reaction)
        return reaction, True


def render_reaction(site: Site, reaction: Reaction) -> JsonObject:
    return {
        "id": reaction.id,
        "node_id": node_id("Reaction", reaction.id),
        "user": site.user(reaction.user),
        "content": reaction.content,
        "created_at": reaction.created_at,
    }


def check_content(payload: object, doc: str) -> str:
    if not isinstance(payload, dict) or "content" not in payload:
        raise invalid_request('"content" wasn\'t supplied.', doc)
    content = payload["content"]
    if content not in CONTENTS:
        options = ", ".join(f'"{c}"' for c in CONTENTS)
        detail = f"For 'properties/content', {ruby_repr(content)} is not one of [{options}]."
        raise invalid_request(detail, doc)
    return str(content)
