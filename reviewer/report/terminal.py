"""The terminal report: what `reviewer review` prints, readable with or without colour.

The verdict comes first (an incomplete review is said loudly), then the findings grouped by
file, most severe file first, then the model's summary, the files not reviewed and the cost.
Colour is an option and only adds ANSI codes around text that reads the same without them;
the model's text is cleaned of escape sequences either way (common.clean_text).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import replace

from reviewer.findings import Finding, ReviewResult, Severity
from reviewer.report.common import (
    clean_text,
    counts_text,
    discarded_text,
    files_text,
    group_by_file,
    line_range,
    location,
    noise_line,
    one_line,
    partly_reviewed,
    rule_files_lines,
    short_rev,
    skipped_by_reason,
    suppressed_total,
    unverified_text,
    usage_text,
    verification_words,
    where_inline,
)
from reviewer.safety.sinks import inert_lines, printable, shown_name
from reviewer.wording import plural

DEFAULT_WIDTH = 100
MIN_WIDTH = 40
INDENT = "  "

_RESET = "\x1b[0m"
_SEVERITY_STYLE = {
    Severity.CRITICAL: "\x1b[1;97;41m",
    Severity.HIGH: "\x1b[1;31m",
    Severity.MEDIUM: "\x1b[1;33m",
    Severity.LOW: "\x1b[36m",
    Severity.INFO: "\x1b[2m",
}
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_ALERT = "\x1b[1;31m"
_GREEN = "\x1b[32m"

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.color and text else text

    def severity(self, severity: Severity) -> str:
        return self(f" {severity.value.upper()} ", _SEVERITY_STYLE[severity])


def render_terminal(
    result: ReviewResult, *, color: bool = False, width: int = DEFAULT_WIDTH, path_prefix: str = ""
) -> str:
    """The review as plain text for a terminal `width` columns wide; ANSI only if `color`.
    `path_prefix` (the repository seen from the current folder) goes before every path, so
    a terminal can open `path:line` from where the command ran."""
    if path_prefix:
        result = _prefixed(result, path_prefix)
    result = printable(result, shown_name)
    width = max(MIN_WIDTH, width)
    style = _Style(color)
    out: list[str] = []
    out += _header(result, style, width)
    out += _findings(result, style, width)
    out += _section("Summary", style, width)
    summary = markdown_to_text(result.summary, width - len(INDENT), INDENT)
    out += summary or [INDENT + "(the model gave no summary)"]
    skipped = skipped_by_reason(result)
    if skipped:
        count = sum(len(paths) for _reason, paths in skipped)
        out += _section(f"Not reviewed ({count})", style, width)
        for reason, paths in skipped:
            if len(paths) == 1:
                out += _wrap(f"{one_line(paths[0])}: {one_line(reason)}", width, INDENT, INDENT * 3)
                continue
            out += _wrap(
                f"{one_line(reason)} ({plural(len(paths), 'file')}):", width, INDENT, INDENT * 3
            )
            out += [INDENT * 2 + one_line(path) for path in paths]  # whole, to be copied
    partly = partly_reviewed(result)
    if partly:
        out += _section(f"Partly reviewed ({len(partly)})", style, width)
        for path, what in partly:
            out += _wrap(f"{one_line(path)}: {what}", width, INDENT, INDENT * 3)
    if result.rule_files:
        out += _section(f"Rule files used ({len(result.rule_files)})", style, width)
        for line in rule_files_lines(result):
            out += _wrap(one_line(line), width, INDENT, INDENT * 3)
    out += [""] + [style(line, _DIM) for line in _wrap(usage_text(result), width, "", "")]
    # The model's words can start a line: under a CI runner no line may read as a command.
    return inert_lines("\n".join(out)) + "\n"


def _prefixed(result: ReviewResult, prefix: str) -> ReviewResult:
    def moved(path: str) -> str:
        return posixpath.normpath(posixpath.join(prefix, path))

    return replace(
        result,
        findings=tuple(replace(f, path=moved(f.path)) for f in result.findings),
        suppressed=tuple(replace(f, path=moved(f.path)) for f in result.suppressed),
        files=tuple(replace(f, path=moved(f.path)) for f in result.files),
        rule_files=tuple(
            replace(r, path=moved(r.path), applied_to=tuple(map(moved, r.applied_to)))
            for r in result.rule_files
        ),
    )


def _header(result: ReviewResult, style: _Style, width: int) -> list[str]:
    rule = "=" * width
    model = one_line(result.model) or "unknown model"
    change = f"{short_rev(one_line(result.base))}..{short_rev(one_line(result.head))}"
    lines = [
        style(line, _BOLD) for line in _wrap(f"reviewer: {change} with {model}", width, "", "")
    ]
    lines.append(rule)
    if result.complete:
        lines.append("Status:   " + style("complete", _GREEN))
    else:
        reason = one_line(result.incomplete_reason) or "no reason was recorded"
        banner = "!!! REVIEW INCOMPLETE !!!"
        lines.append("Status:   " + style(banner, _ALERT))
        lines += [style(line, _ALERT) for line in _wrap(reason, width, "!!! ", "!!! ")]
        lines += _wrap(
            "The findings below may be partial. Do not treat this as a clean review.",
            width, "!!! ", "!!! ",
        )  # fmt: skip
    total = len(result.findings)
    found = f"{total} ({counts_text(result)})" if total else "none"
    lines += _wrap(f"Findings: {found}", width, "", " " * 10)
    if suppressed_total(result):
        lines.append(
            f"          {suppressed_total(result):,} more below the reporting threshold, not shown"
        )
    noise = noise_line(result)
    if noise:
        lines += _wrap(f"Noise:    {noise}", width, "", " " * 10)
    if result.discarded:
        lines += _wrap(discarded_text(result), width, " " * 10, " " * 10)
    said, reason = unverified_text(result)
    if said:
        lines += _wrap(f"{said} ({one_line(reason)})", width, " " * 10, " " * 10)
    lines.append(f"Files:    {files_text(result)}")
    lines.append(rule)
    return lines


def _findings(result: ReviewResult, style: _Style, width: int) -> list[str]:
    if not result.findings:
        note = (
            "No findings."
            if result.complete
            else "No findings so far: the review did not finish, so this is not a clean result."
        )
        return ["", note]
    out: list[str] = []
    for path, findings in group_by_file(result.findings):
        title = f"── {one_line(path)} ({plural(len(findings), 'finding')}) "
        out += ["", style(title + "─" * max(0, width - _width(title)), _BOLD)]
        for finding in findings:
            out += ["", *_finding(finding, style, width)]
    return out


def _finding(finding: Finding, style: _Style, width: int) -> list[str]:
    label = style.severity(finding.severity)
    plain_label_width = len(finding.severity.value) + 2
    # `path:line: title`, the shape of compiler messages that editors can jump to.
    head = f"{one_line(location(finding))}: {one_line(finding.title)}"
    pad = " " * (plain_label_width + 1)
    wrapped = _wrap(head, width, pad, pad)
    out = [f"{label} {wrapped[0][len(pad) :]}", *wrapped[1:]]
    meta = [one_line(finding.category)] if finding.category else []
    if finding.side == "LEFT":
        meta.append("removed lines (base version)")
    if finding.merged_from > 1:
        meta.append(f"reported {finding.merged_from} times, merged")
    if finding.noise_note:
        meta.append(one_line(finding.noise_note))
    if finding.inline:
        meta.append(where_inline(finding))
    else:
        meta.append("summary only")
    if finding.placement_note:
        meta.append(one_line(finding.placement_note))
    checked, reason = verification_words(finding)
    if checked:
        meta.append(checked + (f": {one_line(reason)}" if reason else ""))
    out += [style(line, _DIM) for line in _wrap(" · ".join(meta), width, INDENT, INDENT)]
    if finding.code:
        out.append("")
        out += _numbered(finding, width)
    body = markdown_to_text(finding.body, width - len(INDENT), INDENT)
    if body:
        out += ["", *body]
    if finding.suggestion is not None:
        heading = style("Suggested replacement", _BOLD)
        out += ["", f"{INDENT}{heading} for line(s) {line_range(finding)}:"]
        if not finding.suggestion.strip():
            out.append(INDENT * 2 + "(delete these lines)")
        else:
            replacement = clean_text(finding.suggestion.rstrip("\n")).split("\n")
            out += [_cut(f"{INDENT * 2}+ {line.expandtabs(4)}", width) for line in replacement]
    if finding.suggestion_dropped:
        note = f"Suggested change left out: {one_line(finding.suggestion_dropped)}."
        out += ["", *_wrap(note, width, INDENT, INDENT)]
    return out


def _numbered(finding: Finding, width: int) -> list[str]:
    """The code with its line numbers, `  42 | text`; lines too long for the width are cut."""
    code = clean_text(finding.code).split("\n")
    digits = len(str(finding.line + len(code) - 1))
    return [
        _cut(f"{INDENT * 2}{finding.line + i:>{digits}} | {text.expandtabs(4)}", width)
        for i, text in enumerate(code)
    ]


def markdown_to_text(markdown: str, width: int, indent: str = "") -> list[str]:
    """Markdown as plain lines: paragraphs and list items wrapped, code blocks kept as they are.

    Emphasis markers go, links become `text (url)`, headings become plain lines; inline code
    keeps its backticks, which read well enough in a terminal.
    """
    width = max(20, width)
    out: list[str] = []
    paragraph: list[str] = []
    item: tuple[str, str] | None = None  # (marker, indent) of the list item being collected
    fence = ""

    def flush() -> None:
        nonlocal item
        if paragraph:
            text = _inline(" ".join(part.strip() for part in paragraph))
            if item:
                marker, lead = item
                first = f"{indent}{lead}{marker} "
                out.extend(_wrap(text, width + len(indent), first, " " * len(first)))
            else:
                out.extend(_wrap(text, width + len(indent), indent, indent))
        paragraph.clear()
        item = None

    for raw in clean_text(markdown.strip("\n")).split("\n"):
        line = raw.expandtabs(4)
        if fence:
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = ""
            else:
                out.append(_cut(indent + "    " + line, width + len(indent)))
            continue
        if match := _FENCE.match(line):
            flush()
            fence = match.group(1)
            continue
        if not line.strip():
            flush()
            if out and out[-1] != "":
                out.append("")
            continue
        if heading := _HEADING.match(line):
            flush()
            out.append(indent + _inline(heading.group(1)))
            continue
        if listed := _LIST_ITEM.match(line):
            flush()
            marker = listed.group(2) if listed.group(2)[0].isdigit() else "-"
            item = (marker, listed.group(1))
            paragraph.append(listed.group(3))
            continue
        paragraph.append(line)
    flush()
    while out and out[-1] == "":
        out.pop()
    return out


def _inline(text: str) -> str:
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(1) else m.group(2), text)
    return _EMPHASIS.sub(r"\2", text)


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    """Greedy word wrap by display width (a CJK character takes two columns).

    A word too long for a line is split, unless it holds a `/` (a URL or a path): a reader
    must be able to copy those whole, so they may stick out instead.
    """
    lines: list[str] = []
    line, used, empty = first, _width(first), True
    room = max(1, width - _width(rest))
    for word in text.split():
        for piece in _pieces(word, room):
            size = _width(piece)
            if not empty and used + 1 + size > width:
                lines.append(line)
                line, used, empty = rest + piece, _width(rest) + size, False
                continue
            line += piece if empty else " " + piece
            used += size if empty else size + 1
            empty = False
    lines.append(line.rstrip() if empty else line)
    return lines


def _pieces(word: str, room: int) -> list[str]:
    if _width(word) <= room or "/" in word:
        return [word]
    pieces, current, used = [], "", 0
    for char in word:
        size = _width(char)
        if current and used + size > room:
            pieces.append(current)
            current, used = "", 0
        current += char
        used += size
    return [*pieces, current]


def _width(text: str) -> int:
    """Columns a terminal gives `text`: wide East Asian characters 2, combining marks 0."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _cut(line: str, width: int) -> str:
    """One line of code cut to the width, with a marker; code is never re-wrapped."""
    if _width(line) <= width:
        return line
    kept, used = "", 0
    for char in line:
        used += _width(char)
        if used > width - 1:
            break
        kept += char
    return kept + "…"


def _section(title: str, style: _Style, width: int) -> list[str]:
    return ["", style(title, _BOLD), "-" * min(width, len(title))]


__all__ = ["DEFAULT_WIDTH", "markdown_to_text", "render_terminal"]
