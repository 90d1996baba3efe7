"""Benchmark of finding the tickets a change names (`reviewer.context.tickets.detect`) in
crafted texts of growing size. Not a test; prints a Markdown table measured in one run
(about half a minute with the defaults, most of it the previous patterns on the largest text).

    .venv/bin/python bench/bench_tickets.py [--sizes 10000,20000,40000] [--runs 3]

Each text is built to make a pattern read the same characters again for each place a match
could start: many `http://` in one word (an issue URL's lazy path), many `https://x/browse`
(a Jira link's root), a GitLab path before `#`, and thousands of `#1` (each match once
rebuilt the whole text). Three ways are timed on each: `find_tickets` as a review calls it
(each text cut to MAX_SCANNED_CHARS, so its time stops growing), today's patterns on the
whole text (no bound: their time grows with the text, no faster), and the patterns before
(copied below, swapped in). Each ratio is the time on a text over the time on the smallest
one of the same kind, measured in this run; a linear way's ratio follows the size's.
"""

from __future__ import annotations

import argparse
import platform
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest import mock

from bench_grounding import best  # the best of a few runs, as every benchmark here times

from reviewer.context.tickets import detect
from reviewer.context.tickets.model import ForgeSite, TicketRef

SITE = ForgeSite("gitlab", "https://gitlab.example.com", "group/project", lambda r, n: None)  # type: ignore[arg-type, return-value]
JIRA = "https://jira.example.com"

# The patterns and the blanking before the bound (detect.py before it changed).
PREVIOUS_PATTERNS = {
    "_ANY_ISSUE_URL": re.compile(
        r"https?://[^\s/?#<>()\[\]]+/[^\s?#<>()\[\]]*?/(?:-/)?issues/\d{1,9}(?![\w/])"
    ),
    "_JIRA_LINK": re.compile(
        r"(?P<root>https?://[^\s?#<>()\[\]]+?)/browse/(?P<key>[A-Za-z][A-Za-z0-9_]{0,49}-\d{1,9})"
        r"(?![A-Za-z0-9])"
    ),
}
PREVIOUS_GITLAB_REF = re.compile(
    r"(?<![\w./:-])(?P<repo>[\w.][\w.-]*(?:/[\w.][\w.-]*)+)#(?P<n>\d{1,9})(?!\w)"
)


def previous_take(
    text: str, pattern: re.Pattern[str], make: Callable[[re.Match[str]], TicketRef | None]
) -> tuple[str, list[tuple[int, TicketRef]]]:
    found: list[tuple[int, TicketRef]] = []
    spans: list[tuple[int, int]] = []
    for match in pattern.finditer(text):
        ref = make(match)
        if ref is not None:
            found.append((match.start(), ref))
            spans.append(match.span())
    for start, end in reversed(spans):
        text = text[:start] + " " * (end - start) + text[end:]
    return text, found


@contextmanager
def previous() -> Iterator[None]:
    refs = {**detect._REPO_REF, "gitlab": PREVIOUS_GITLAB_REF}
    with (
        mock.patch.multiple(detect, **PREVIOUS_PATTERNS, _take=previous_take),
        mock.patch.object(detect, "_REPO_REF", refs),
        mock.patch.object(detect, "_gitlab_path", lambda path: True),
    ):
        yield


def texts(size: int) -> dict[str, str]:
    def repeat(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    return {
        "many http:// in a word": repeat("http://a/"),
        "many Jira roots": repeat("https://x/browse"),
        "a long path before #": "x " + repeat("a/")[: size - 4] + "#2",
        "many #1": repeat("#1 "),
    }


def bounded(text: str) -> object:
    return detect.find_tickets([text], sites=[SITE], jira_url=JIRA, jira_projects=("PAY",))


def whole(text: str) -> object:
    return detect._in_text(text, [SITE], JIRA, ("PAY",))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="10000,20000,40000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"machine: {platform.python_version()}, bound {detect.MAX_SCANNED_CHARS:,} characters")
    print()
    print("| text | characters | size ratio | find_tickets s | ratio | patterns, whole text s "
          "| ratio | previous s | ratio |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    first: dict[str, tuple[float, float, float]] = {}
    for size in sizes:
        for name, text in texts(size).items():
            now = best(args.runs, lambda t=text: bounded(t))  # type: ignore[misc]
            unbounded = best(args.runs, lambda t=text: whole(t))  # type: ignore[misc]
            with previous():
                before = best(1, lambda t=text: whole(t))  # type: ignore[misc]
            base = first.setdefault(name, (now, unbounded, before))
            print(
                f"| {name} | {size:,} | {size / sizes[0]:.0f} | {now:.4f} | {now / base[0]:.1f} "
                f"| {unbounded:.4f} | {unbounded / base[1]:.1f} | {before:.3f} "
                f"| {before / base[2]:.1f} |"
            )


if __name__ == "__main__":
    main()
