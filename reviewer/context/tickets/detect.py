"""Finding the tickets a change names, in its title, description, head branch and commit
messages, and in what is named by hand (--ticket).

What counts (the forge's kinds are rows of `_ISSUE_PATHS` and `_REPO_REF`):
- the forge's issues: `#12` (the change's own repository), `owner/repo#12` (GitHub),
  `group/sub/project#12` (GitLab), and issue URLs of the forge's own host
  (`https://github.com/o/r/issues/12`, `https://gitlab.example.com/g/p/-/issues/12`);
- Jira keys whose project is listed in `jira_projects` (`PAY-42`, `pay-42` in a branch name),
  and `{jira_url}/browse/KEY` links. Without the list no key-shaped word counts: `UTF-8` and
  `SHA-256` are never tickets.

An issue URL or a Jira link on another host is named, never read: the run's tokens go to
their own host only (`TicketRef.refused`). A change's text is written by its author, so this
decides only what is *asked*; what is read is the trackers' own answer.

Bounded: each text is looked at up to MAX_SCANNED_CHARS (cut at a space, so no reference is
read half), and every pattern takes time in proportion to the text. No repeat is nested in
another or holds an alternation, and every unbounded run stops at a mark that starts the
next match (a URL's path and host never hold `:`, a path before `#12` is only read from the
start of its word), so no part of a text is read again for each place a match could start.
A GitLab path's segments are checked after the match (`_gitlab_path`), not by a nested
repeat. bench/bench_tickets.py measures it against the patterns before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from reviewer.context.tickets.model import ForgeKind, ForgeSite, TicketRef
from reviewer.errors import ReviewerError

# How much of each text (title, branch, description, one commit message) is looked at for
# references. GitHub keeps a pull request's description to 65,536 characters; the tickets
# a change is for are named near its start.
MAX_SCANNED_CHARS = 20_000
_SPACE = re.compile(r"\s")

# The path of an issue below a forge's web root, per forge kind: the repository, then the
# issue's number. GitHub: github.com/OWNER/NAME/issues/N; GitLab: HOST/GROUP/.../PROJECT/-/
# issues/N (the `web_url` of "Get a single project issue", docs.gitlab.com/api/issues/).
_ISSUE_PATHS: dict[ForgeKind, str] = {
    "github": r"/(?P<repo>[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100})"
    r"/issues/(?P<n>\d{1,9})",
    # The path's segments are checked by _gitlab_path: the shortest path before `/-/issues/`.
    "gitlab": r"/(?P<repo>[\w.][\w./-]*?)/-/issues/(?P<n>\d{1,9})",
}
# `owner/repo#12` (GitHub's cross-repository reference) and `group/sub/project#12` (GitLab's):
# a path before the `#`, not inside a URL or a longer path.
_REPO_REF: dict[ForgeKind, re.Pattern[str]] = {
    "github": re.compile(
        r"(?<![\w./:-])(?P<repo>[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100})"
        r"#(?P<n>\d{1,9})(?!\w)"
    ),
    # Only from the start of a word (the look-behind holds every character of the path);
    # its segments are checked by _gitlab_path.
    "gitlab": re.compile(r"(?<![\w./:-])(?P<repo>[\w.][\w./-]*)#(?P<n>\d{1,9})(?!\w)"),
}
# `#12`: not after a word, a path or an HTML character reference (`&#12;`).
_OWN_REF = re.compile(r"(?<![\w/&#])#(?P<n>\d{1,9})(?!\w)")
# Any issue URL of either shape, on any host: named, and refused when the host is not ours.
# Host and path hold no `:`, so a text of many `http://` reads each part once.
_HOST = r"https?://[\w.-]+(?::\d{1,5})?"
_PATH_CHAR = r"[^\s?#<>()\[\]:]"
_ANY_ISSUE_URL = re.compile(rf"{_HOST}/{_PATH_CHAR}*?/(?:-/)?issues/\d{{1,9}}(?![\w/])")
# A Jira key (a project key, a hyphen, a number), not inside a longer word.
_JIRA_KEY = re.compile(r"(?<![A-Za-z0-9_-])(?P<project>[A-Za-z][A-Za-z0-9_]{0,49})-(?P<n>\d{1,9})"
                       r"(?![A-Za-z0-9])")  # fmt: skip
# Jira may live under a path of its host (a Data Center context path): `(?:/...)?` keeps the
# host's run and the path's apart.
_JIRA_LINK = re.compile(
    rf"(?P<root>{_HOST}(?:/{_PATH_CHAR}*?)?)/browse/(?P<key>[A-Za-z][A-Za-z0-9_]{{0,49}}-\d{{1,9}})"
    r"(?![A-Za-z0-9])"
)
_GITLAB_SEGMENT = re.compile(r"[\w.][\w.-]*")


def host_of(url: str) -> str:
    """scheme://host[:port], lower-case: what "the same host" compares."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def forge_web(change_url: str, repository: str) -> str:
    """The forge's web root (scheme://host[:port][/prefix]) from a change request's URL and
    its repository's path: a self-managed GitLab may live under a path of its host."""
    at = change_url.lower().find("/" + repository.lower() + "/")
    return change_url[:at] if at > 0 else host_of(change_url)


def find_tickets(
    texts: Sequence[str],
    *,
    sites: Sequence[ForgeSite],
    jira_url: str | None,
    jira_projects: Sequence[str],
) -> list[TicketRef]:
    """Every ticket the texts name, in order of the texts and of places in each, once each.
    Only the sites with a repository (the change's own forge) resolve `#12` and
    `owner/repo#12`; their issue URLs are found on their own host, others are refused."""
    own = [site for site in sites if site.repository]
    found: list[TicketRef] = []
    for text in texts:
        found += _in_text(scanned(text), own, jira_url, jira_projects)
    return unique(found)


def scanned(text: str) -> str:
    """The part of `text` looked at for references: MAX_SCANNED_CHARS, cut at a space."""
    return cut_at_space(text, MAX_SCANNED_CHARS)


def cut_at_space(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters after its last whitespace, so that a
    reference at the bound is not read half (`#123` as `#12`, `PAY-149` as `PAY-1`): every
    text cut before references are looked for in it is cut so."""
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    if _SPACE.fullmatch(head[-1]):
        return head[:-1]
    spaces = [m.start() for m in _SPACE.finditer(head)]
    return head[: spaces[-1]] if spaces else ""


def named_ticket(text: str, *, sites: Sequence[ForgeSite], jira_url: str | None) -> TicketRef:
    """A ticket named by hand (`--ticket KEY|URL`): a Jira key or link, a forge's issue (a
    URL, or `#12` / `owner/repo#12` when the run is on a forge). A ReviewerError when it is
    none of these (before anything is asked)."""
    value = text.strip()
    if _JIRA_KEY.fullmatch(value):
        key = value.upper()
        return TicketRef("jira", key, f"{jira_url}/browse/{key}" if jira_url else "")
    for site in sites:  # the issue URLs of a forge the run has a token for (local: any)
        for ref in _forge_urls(value, site):
            return ref
    for ref in _in_text(value, [s for s in sites if s.repository], jira_url, ()):
        return ref
    raise ReviewerError(
        f"--ticket: '{value[:80]}' is not a Jira key (PAY-42), a Jira /browse/ link or an "
        "issue URL of GitHub or GitLab"
    )


def unique(refs: Iterable[TicketRef]) -> list[TicketRef]:
    """The refs in order, each ticket once (`#12` and `acme/shop#12` of acme/shop are one)."""
    seen: set[tuple[str, ...]] = set()
    kept = []
    for ref in refs:
        key = (
            ("jira", ref.key.upper())
            if ref.kind == "jira"
            else ("forge", ref.url.lower() if ref.refused else ref.repository.lower(),
                  str(ref.number))
        )  # fmt: skip
        if key not in seen:
            seen.add(key)
            kept.append(ref)
    return kept


def _in_text(
    text: str, sites: Sequence[ForgeSite], jira_url: str | None, jira_projects: Sequence[str]
) -> list[TicketRef]:
    """The refs of one text, in the order they appear. URLs are taken first and blanked, so
    the `#12` of `acme/shop#12` or a number inside a URL is not taken again."""
    found: list[tuple[int, TicketRef]] = []
    text, taken = _take(text, _JIRA_LINK, lambda m: _jira_link(m, jira_url))
    found += taken
    for site in sites:
        text, taken = _take(text, _site_urls(site), lambda m, s=site: _forge_url(m, s))
        found += taken
    text, taken = _take(text, _ANY_ISSUE_URL, lambda m: _elsewhere(m.group(0), sites))
    found += taken
    for site in sites:
        text, taken = _take(text, _REPO_REF[site.kind], lambda m, s=site: _repo_ref(m, s))
        found += taken
    for site in sites[:1]:  # `#12` is the change's own repository's
        text, taken = _take(text, _OWN_REF, lambda m, s=site: _own_ref(m, s))
        found += taken
    listed = {project.upper() for project in jira_projects}
    if listed and jira_url is not None:
        text, taken = _take(text, _JIRA_KEY, lambda m: _jira_key(m, listed, jira_url))
        found += taken
    return [ref for _, ref in sorted(found, key=lambda item: item[0])]


def _take(
    text: str, pattern: re.Pattern[str], make: object
) -> tuple[str, list[tuple[int, TicketRef]]]:
    """The refs `make` builds from `pattern`'s matches (None: not one), and the text with
    each match blanked (same length: positions stay), rebuilt once."""
    assert callable(make)
    found: list[tuple[int, TicketRef]] = []
    pieces: list[str] = []
    kept = 0  # where the text not yet copied starts
    for match in pattern.finditer(text):
        ref = make(match)
        if ref is not None:
            start, end = match.span()
            found.append((start, ref))
            pieces += [text[kept:start], " " * (end - start)]
            kept = end
    return "".join([*pieces, text[kept:]]), found


def _site_urls(site: ForgeSite) -> re.Pattern[str]:
    """The issue URLs of `site`: its web root (host compared ignoring case), then the path."""
    return re.compile(f"(?i:{re.escape(site.web)}){_ISSUE_PATHS[site.kind]}(?![\\w/])")


def _forge_urls(text: str, site: ForgeSite) -> list[TicketRef]:
    return [ref for m in _site_urls(site).finditer(text) if (ref := _forge_url(m, site))]


def _forge_url(match: re.Match[str], site: ForgeSite) -> TicketRef | None:
    repository, number = match["repo"], int(match["n"])
    if site.kind == "gitlab" and not _gitlab_path(repository):
        return None
    return TicketRef("forge", _key(repository, number, site), match.group(0), repository, number)


def _repo_ref(match: re.Match[str], site: ForgeSite) -> TicketRef | None:
    repository, number = match["repo"], int(match["n"])
    if site.kind == "gitlab" and not _gitlab_path(repository):
        return None
    url = _issue_url(site, repository, number)
    return TicketRef("forge", _key(repository, number, site), url, repository, number)


def _gitlab_path(path: str) -> bool:
    """A project's full path: a group and the project at least, each segment a word
    character or a dot, then words, dots and hyphens (`group/sub/project`)."""
    segments = path.split("/")
    return len(segments) >= 2 and all(_GITLAB_SEGMENT.fullmatch(s) for s in segments)


def _own_ref(match: re.Match[str], site: ForgeSite) -> TicketRef:
    number = int(match["n"])
    url = _issue_url(site, site.repository, number)
    return TicketRef("forge", f"#{number}", url, site.repository, number)


def _key(repository: str, number: int, site: ForgeSite) -> str:
    own = site.repository and repository.lower() == site.repository.lower()
    return f"#{number}" if own else f"{repository}#{number}"


def _issue_url(site: ForgeSite, repository: str, number: int) -> str:
    middle = "/-/issues/" if site.kind == "gitlab" else "/issues/"
    return f"{site.web}/{repository}{middle}{number}"


def _elsewhere(url: str, sites: Sequence[ForgeSite]) -> TicketRef | None:
    """An issue URL no site of this run serves: named, never read with a token."""
    if any(_forge_urls(url, site) for site in sites):
        return None
    return _any_issue_url(url)


def _any_issue_url(value: str) -> TicketRef | None:
    match = _ANY_ISSUE_URL.fullmatch(value) or _ANY_ISSUE_URL.search(value)
    if match is None:
        return None
    url = match.group(0)
    return TicketRef(
        "forge",
        url,
        url,
        refused=f"an issue on {host_of(url)}, which is not a forge this run reads with its "
        "token (a token is only sent to its own host; a local run reads the issue URLs of "
        "--ticket with GITHUB_TOKEN or GITLAB_TOKEN)",
    )


def _jira_link(match: re.Match[str], jira_url: str | None) -> TicketRef:
    key = match["key"].upper()
    if jira_url is not None and match["root"].rstrip("/").lower() == jira_url.lower():
        return TicketRef("jira", key, f"{jira_url}/browse/{key}")
    return TicketRef(
        "jira",
        key,
        match.group(0),
        refused=f"a Jira link to {host_of(match.group(0))}, which is not jira_url "
        f"({jira_url or 'unset'}): the token is only sent to jira_url",
    )


def _jira_key(match: re.Match[str], listed: set[str], jira_url: str) -> TicketRef | None:
    project = match["project"].upper()
    if project not in listed:
        return None
    key = f"{project}-{int(match['n'])}"
    return TicketRef("jira", key, f"{jira_url}/browse/{key}")
