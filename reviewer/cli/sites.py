"""The forges a local `reviewer review` may read issues from: only those named with --ticket
(`https://github.com/o/r/issues/12`), each with the user's own token for that forge, sent to
that forge's host only. Issue URLs in the commits' messages are named in the reports but not
read: a branch under review may be someone else's, and its messages must not choose what the
user's token reads.
"""

from __future__ import annotations

from collections.abc import Mapping

from reviewer.context.tickets.model import ForgeSite

GITHUB_API = "https://api.github.com"
GITLAB_TOKENS = ("REVIEWER_GITLAB_TOKEN", "GITLAB_TOKEN")


def local_sites(env: Mapping[str, str]) -> tuple[ForgeSite, ...]:
    """GitHub with GITHUB_TOKEN (GITHUB_API_URL, GITHUB_SERVER_URL for GitHub Enterprise
    Server), GitLab with REVIEWER_GITLAB_TOKEN or GITLAB_TOKEN and CI_SERVER_URL."""
    sites = []
    token = env.get("GITHUB_TOKEN")
    if token:
        from reviewer.github.adapter import issue_reader

        api = (env.get("GITHUB_API_URL") or GITHUB_API).rstrip("/")
        web = env.get("GITHUB_SERVER_URL") or (
            "https://github.com" if api == GITHUB_API else api.removesuffix("/api/v3")
        )
        sites.append(ForgeSite("github", web.rstrip("/"), "", issue_reader(api, token)))
    token = next((env[name] for name in GITLAB_TOKENS if env.get(name)), None)
    server = env.get("CI_SERVER_URL")
    if token and server:
        from reviewer.gitlab.adapter import issue_reader as gitlab_reader

        sites.append(ForgeSite("gitlab", server.rstrip("/"), "", gitlab_reader(server, token)))
    return tuple(sites)
