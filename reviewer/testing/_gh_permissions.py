"""Who may do what in the fake GitHub: people's roles on the repository, and the token's
permissions.

Roles (docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user):
`admin`, `maintain`, `write`, `triage`, `read`; the endpoint's `permission` gives the legacy
base role (maintain folds to write, triage to read) and `role_name` the role itself. The fake's
repository is public, so someone who is not a collaborator reads it: `read`
(aws-ia/cloudformation-github-resource-providers#14 met exactly that). A test may still say
`none`, as for a private repository.

The token: a GitHub App installation token (GITHUB_TOKEN) has permissions such as `contents`
and `pull_requests`, each `read` or `write`. `resolveReviewThread` needs `contents: write`;
`pull_requests: write` alone answers FORBIDDEN "Resource not accessible by integration"
(github/gh-aw#35726, letta-ai/letta-code#2201; /work/shared/research/conversation-and-formats.md
"GitHub review threads (GraphQL)").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from reviewer.testing._gh_objects import JsonObject, Site

ROLES = ("admin", "maintain", "write", "triage", "read", "none")
BASE_ROLE = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
WRITERS = ("admin", "maintain", "write")
# A workflow's default GITHUB_TOKEN with the permissive setting: write on what the bot uses.
DEFAULT_TOKEN = {"contents": "write", "pull_requests": "write", "issues": "write"}
LEVELS = ("none", "read", "write")


def token_permissions(given: Mapping[str, str] | None) -> dict[str, str]:
    """`{"contents": "read", "pull-requests": "write"}` as a workflow's `permissions:` says it
    (hyphens or underscores); scopes not given are `none`, as in a workflow."""
    if given is None:
        return dict(DEFAULT_TOKEN)
    permissions: dict[str, str] = {}
    for scope, level in given.items():
        if level not in LEVELS:
            raise ValueError(f"token permission {scope}: {level!r} is not one of {LEVELS}")
        permissions[scope.replace("-", "_")] = level
    return permissions


@dataclass
class Access:
    collaborators: dict[str, str] = field(default_factory=dict)  # login -> role
    token: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_TOKEN))

    def set_role(self, login: str, role: str) -> None:
        if role not in ROLES:
            raise ValueError(f"role of {login}: {role!r} is not one of {ROLES}")
        self.collaborators[login] = role

    def role(self, login: str) -> str:
        return self.collaborators.get(login, "read")  # a public repository

    def may_write(self, login: str) -> bool:
        return self.role(login) in WRITERS

    def token_may(self, scope: str, level: str = "write") -> bool:
        return LEVELS.index(self.token.get(scope, "none")) >= LEVELS.index(level)

    def permission_json(self, site: Site, login: str) -> JsonObject:
        role = self.role(login)
        order = ["pull", "triage", "push", "maintain", "admin"]
        rank = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
        user = site.user(login)
        user["permissions"] = {name: rank > i for i, name in enumerate(order)}
        user["role_name"] = role
        return {"permission": BASE_ROLE[role], "role_name": role, "user": user}
