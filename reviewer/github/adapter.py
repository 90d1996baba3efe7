"""The pull request a run works on: the client that reads and posts, its commits in the
checkout, and the revisions every trigger needs (base, head, merge base)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewerError
from reviewer.gitcmd import run_git
from reviewer.github.actions import ActionsContext, log
from reviewer.github.client import ACTIONS_BOT, GitHubClient, PullInfo
from reviewer.github.fetch import ensure_commits
from reviewer.github.scope import changed_paths
from reviewer.forge.signing import Signer
from reviewer.workspace import repository_root


@dataclass(frozen=True)
class OpenPull:
    client: GitHubClient
    pull: Any
    info: PullInfo
    base_sha: str
    head_sha: str
    merge_base: str
    root: Path

    def changed_paths(self) -> set[str]:
        return changed_paths(self.root, self.merge_base, self.head_sha)


def open_pull(context: ActionsContext, env: Mapping[str, str]) -> OpenPull:
    """The event's pull request, read through the API, its commits fetched where missing.
    The memory is signed with a key bound to this repository and number (signing.py)."""
    if not context.token:
        raise ReviewerError(
            "GITHUB_TOKEN is not set: pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the "
            "action (or set GITHUB_TOKEN for the step)"
        )
    secret = env.get("REVIEWER_STATE_KEY") or env.get("OPENAI_API_KEY") or ""
    pull_id = f"{context.repository.lower()}#{context.pull_request.number}"
    client = GitHubClient(
        context.api_url,
        context.token,
        context.repository,
        log=log,
        bot_login=env.get("REVIEWER_BOT_LOGIN") or ACTIONS_BOT,
        signer=Signer.from_secret(secret, pull_id),
    )
    pull = client.pull(context.pull_request.number)
    info = client.pull_info(pull)
    base_sha = context.pull_request.base_sha or info.base_sha
    head_sha = context.pull_request.head_sha or info.head_sha
    root = repository_root(context.workspace)
    ensure_commits(root, base_sha, head_sha, info.number, log)
    merge_base = run_git(root, ["merge-base", base_sha, head_sha]).stdout.decode().strip()
    return OpenPull(client, pull, info, base_sha, head_sha, merge_base, root)
