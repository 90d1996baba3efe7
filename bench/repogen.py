"""Deterministic generated repositories for bench_tools.py (a helper module, not a test).

Two repositories:

* `make_large_repo`: a few thousand realistic-looking source files (Python, Go, TypeScript,
  Java, Markdown, JSON, minified JS, a few binary assets) totalling tens of MB of text, in two
  commits so that `HEAD~1` is a commit that is *not* checked out (the `git grep` engine path).
* `make_wide_tree`: a 100,000-file tree of small files, committed with `git fast-import`
  (one process, no per-file `git add`) and then checked out with `git read-tree -u` so the
  files exist on disk for the working-tree mode.

Both are fully determined by a seed: the same arguments give byte-identical files.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench Author",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench Author",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_AUTHOR_DATE": "2024-05-01T12:00:00Z",
    "GIT_COMMITTER_DATE": "2024-05-01T12:00:00Z",
}

# A literal planted in exactly RARE_FILES files of the large repository, nowhere else.
RARE_TOKEN = "ZEBRA_QUANTUM_7731"
RARE_FILES = 3


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


WORDS = _words(
    "account address agent alert archive audit batch billing buffer bundle cache channel "
    "checkout client cluster commit config connection context counter credential cursor "
    "customer dataset device digest document domain draft email endpoint entry event export "
    "feature feed field filter gateway graph group handler header history import index "
    "invoice item job key label layer ledger limit link listener loader lock log manager "
    "message metric model module monitor node notice order owner packet page parser payload "
    "payment permission pipeline plan policy pool portal price profile project provider "
    "proxy query queue quota record region registry release report request resource "
    "response result retry route rule runner sample schema scope secret segment sender "
    "server session shard signal snapshot source span status storage stream subscription "
    "summary task tenant thread ticket timeout token topic trace transaction upload user "
    "validator value vault version view volume webhook worker workspace"
)
VERBS = _words(
    "get set update load fetch build create delete parse render compute validate apply "
    "resolve handle process sync send read write merge check find list open close flush "
    "refresh register encode decode normalize collect emit"
)
SENTENCE = _words(
    "the a this that we it when if not only all any each every before after until while "
    "because so then also still retry fails returns value cache stale request upstream "
    "downstream connection timeout expired token invalid missing ignored later soon "
    "again here there should must may might can will would could"
)

PY_TEMPLATES = (
    "{i}{a} = {v}_{b}({c}, {d})",
    "{i}return {a}.{v}_{b}({c})",
    "{i}return {a}",
    "{i}if {a} is None:",
    "{i}if not {a}.{b}:",
    "{i}for {a} in {b}.{v}_{c}s():",
    "{i}self.{a} = {a}",
    "{i}self._{a}_{b} = {{}}",
    "{i}# {s}",
    "{i}# TODO({a}): {s}",
    '{i}raise {A}Error(f"{s} {{{a}!r}}")',
    '{i}logger.debug("{s} %s", {a})',
    "{i}{a}_{b} = {a}.get({c!r}, {n})",
    "{i}yield {a}, {b}",
    "{i}with self._{a}_lock:",
    "{i}try:",
    "{i}except {A}Error as exc:",
    "{i}    raise {A}{B}Error(str(exc)) from exc",
    '{i}assert {a} > {n}, "{s}"',
    "{i}{a} += {n}",
    "",
    "",
)
GO_TEMPLATES = (
    "{i}{a}, err := {x}.{V}{B}(ctx, {c})",
    "{i}if err != nil {{",
    '{i}\treturn nil, fmt.Errorf("{v} {b}: %w", err)',
    "{i}}}",
    "{i}return {a}, nil",
    "{i}for _, {a} := range {b}s {{",
    "{i}{a}.{B} = {c}",
    "{i}// {s}",
    '{i}log.Printf("{s} %v", {a})',
    "{i}{a} := make(map[string]{B}, {n})",
    "{i}defer {a}.Close()",
    "{i}if {a} == nil {{",
    "{i}select {{",
    "{i}case <-time.After({n} * time.Millisecond):",
    "",
)
TS_TEMPLATES = (
    "{i}const {a}{B} = await this.{v}{C}({d});",
    "{i}return {a};",
    "{i}if (!{a}) {{",
    "{i}}}",
    "{i}this.{a} = {b};",
    "{i}// {s}",
    "{i}export const {A}{B}: {C} = {{ {a}: {n}, {b}: '{s}' }};",
    "{i}for (const {a} of {b}s) {{",
    "{i}console.debug(`{s} ${{{a}}}`);",
    "{i}throw new {A}Error('{s}');",
    "{i}const {{ {a}, {b} }} = props;",
    "{i}{a}.{v}{B}({c}, {n});",
    "",
)
JAVA_TEMPLATES = (
    "{i}{A}{B} {a} = {x}.{v}{C}({d});",
    "{i}return {a};",
    "{i}if ({a} == null) {{",
    "{i}}}",
    "{i}this.{a} = {a};",
    "{i}// {s}",
    '{i}LOG.info("{s} {{}}", {a});',
    "{i}for ({A} {a} : {b}s) {{",
    '{i}throw new {A}Exception("{s}");',
    "{i}private final {A}{B} {a}{B};",
    "",
)
MD_TEMPLATES = (
    "{S}",
    "{S} {s}.",
    "- `{a}_{b}`: {s}.",
    "## {A} {b}",
    "    {a} = {v}_{b}({c})",
    "",
)


@dataclass(frozen=True)
class LargeSpec:
    seed: int
    files: int
    text_mb: float
    gc: bool


@dataclass(frozen=True)
class WideSpec:
    seed: int
    files: int


def git(root: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        input=input_bytes,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode()[:500]}")
    return proc.stdout


def _init(root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "core.autocrlf", "false")
    git(root, "config", "gc.auto", "0")


def _refresh_index(root: Path) -> None:
    """Wait out git's racy-timestamp window, then refresh the index's stat data.

    Files written in the same instant as the index are "racily clean" and a read-only
    `git diff-index` would treat them as changed; a checkout a user has had for a while
    does not look like that, so neither should the benchmark's.
    """
    time.sleep(1.1)
    git(root, "update-index", "-q", "--refresh")


def _spec_matches(marker: Path, spec: LargeSpec | WideSpec) -> bool:
    try:
        return bool(json.loads(marker.read_text()) == asdict(spec))
    except (OSError, ValueError):
        return False


# --- the large repository -----------------------------------------------------------------


class _Text:
    """Pools of generated lines per language; files are assembled from them."""

    POOL = 12_000

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pools = {
            "py": self._pool(PY_TEMPLATES, "    ", 3),
            "go": self._pool(GO_TEMPLATES, "\t", 3),
            "ts": self._pool(TS_TEMPLATES, "  ", 4),
            "java": self._pool(JAVA_TEMPLATES, "    ", 3),
            "md": self._pool(MD_TEMPLATES, "", 0),
        }

    def _fields(self) -> dict[str, object]:
        r = self.rng
        a, b, c, d = (r.choice(WORDS) for _ in range(4))
        return {
            "a": a,
            "b": b,
            "c": c,
            "d": d,
            "A": a.capitalize(),
            "B": b.capitalize(),
            "C": c.capitalize(),
            "v": r.choice(VERBS),
            "V": r.choice(VERBS).capitalize(),
            "x": r.choice(("svc", "client", "store", "repo", "api")),
            "n": r.choice((0, 1, 2, 3, 5, 10, 30, 60, 100, 250, 1000, 4096)),
            "s": " ".join(r.choices(SENTENCE, k=r.randint(3, 14))),
            "S": " ".join(r.choices(SENTENCE, k=r.randint(8, 30))).capitalize(),
        }

    def _pool(self, templates: tuple[str, ...], unit: str, levels: int) -> list[str]:
        r = self.rng
        pool = []
        for _ in range(self.POOL):
            template = r.choice(templates)
            indent = unit * r.randint(1, levels) if levels else ""
            line = template.format(i=indent, **self._fields())
            if r.random() < 0.015:  # the occasional long line: a literal list or a call chain
                items = ", ".join(repr(w) for w in r.choices(WORDS, k=r.randint(20, 90)))
                line = f"{indent}{r.choice(WORDS)}_{r.choice(WORDS)} = [{items}]"
            pool.append(line)
        return pool

    def header(self, lang: str, index: int) -> list[str]:
        r = self.rng
        a, b = r.choice(WORDS), r.choice(WORDS)
        if lang == "py":
            return [
                f'"""{a.capitalize()} {b} helpers ({index})."""',
                "",
                "from __future__ import annotations",
                "",
                *(f"from app.{r.choice(WORDS)} import {r.choice(WORDS)}" for _ in range(4)),
                "import logging",
                "",
                "logger = logging.getLogger(__name__)",
                "",
            ]
        if lang == "go":
            return [f"package {a}", "", "import (", '\t"fmt"', '\t"log"', '\t"time"', ")", ""]
        if lang == "ts":
            return [f"import {{ {a.capitalize()} }} from '../{b}';", ""]
        if lang == "java":
            return [f"package com.example.{a}.{b};", "", "import java.util.List;", ""]
        return [f"# {a.capitalize()} {b}", ""]

    def block_head(self, lang: str) -> str:
        r = self.rng
        verb, a, b = r.choice(VERBS), r.choice(WORDS), r.choice(WORDS)
        suffix = r.choice(("", "", "", "_handler", "_async", "_v2"))
        if lang == "py":
            if r.random() < 0.2:
                return f"\nclass {a.capitalize()}{b.capitalize()}{suffix.title()[1:]}:"
            return f"\ndef {verb}_{a}_{b}{suffix}(self, {a}, {b}=None, timeout={r.randint(1, 90)}):"
        if lang == "go":
            return (
                f"\nfunc (s *{a.capitalize()}Service) {verb.capitalize()}{b.capitalize()}"
                f"(ctx context.Context, {a} string) (*{b.capitalize()}, error) {{"
            )
        if lang == "ts":
            return f"\nexport async function {verb}{a.capitalize()}{b.capitalize()}({a}: string) {{"
        if lang == "java":
            return f"\n    public {a.capitalize()} {verb}{b.capitalize()}(String {a}) {{"
        return f"\n## {verb.capitalize()} {a} {b}"

    def source(self, lang: str, index: int, size: int) -> str:
        r = self.rng
        pool = self.pools[lang]
        lines = self.header(lang, index)
        used = sum(len(line) + 1 for line in lines)
        while used < size:
            head = self.block_head(lang)
            body = r.choices(pool, k=r.randint(4, 40))
            lines.append(head)
            lines.extend(body)
            used += len(head) + 1 + sum(len(line) + 1 for line in body)
        return "\n".join(lines) + "\n"

    def minified(self, size: int) -> str:
        r = self.rng
        parts, used = [], 0
        while used < size:
            fields = self._fields()
            piece = (
                f"function {fields['v']}{fields['B']}(e,t){{var n=e.{fields['a']}||{fields['n']};"
                f'return t.{fields["c"]}(n,"{fields["s"]}")}}'
            )
            parts.append(piece)
            used += len(piece)
            if r.random() < 0.004:  # a few newlines: lines of roughly 5-50 KB
                parts.append("\n")
        return "".join(parts) + "\n"

    def json_data(self, size: int) -> str:
        r = self.rng
        rows, used = [], 0
        while used < size:
            row = json.dumps({w: r.randint(0, 10_000) for w in r.sample(WORDS, 6)})
            rows.append(row)
            used += len(row) + 2
        return "[" + ", ".join(rows) + "]\n"  # one long line


# (directory prefix, language, extension, share of the files)
LARGE_LAYOUT = (
    ("src/app", "py", ".py", 0.40),
    ("tests", "py", ".py", 0.10),
    ("services", "go", ".go", 0.15),
    ("web/src", "ts", ".ts", 0.14),
    ("android/app/src/main/java/com/example", "java", ".java", 0.10),
    ("docs", "md", ".md", 0.07),
    ("web/dist", "min", ".min.js", 0.012),
    ("data/fixtures", "json", ".json", 0.008),
    ("assets/img", "bin", ".png", 0.02),
)


def _large_paths(rng: random.Random, files: int) -> list[tuple[str, str]]:
    paths: dict[str, str] = {}
    for prefix, lang, ext, share in LARGE_LAYOUT:
        count = max(1, round(files * share))
        subdirs = [
            "/".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
            for _ in range(max(2, count // 25))
        ]
        made = 0
        while made < count:
            name = f"{rng.choice(VERBS)}_{rng.choice(WORDS)}"
            if prefix == "tests":
                name = "test_" + name
            path = f"{prefix}/{rng.choice(subdirs)}/{name}{ext}"
            if path not in paths:
                paths[path] = lang
                made += 1
    while len(paths) < files:  # top up rounding losses with Python modules
        paths[f"src/app/misc/{rng.choice(VERBS)}_{len(paths)}.py"] = "py"
    return sorted(paths.items())


def make_large_repo(root: Path, spec: LargeSpec, *, log: bool = True) -> Path:
    """Create (or reuse, when already built with `spec`) the large repository at `root`."""
    marker = root.with_suffix(".json")
    if (root / ".git").is_dir() and _spec_matches(marker, spec):
        return root
    started = time.perf_counter()
    _init(root)
    rng = random.Random(spec.seed)
    text = _Text(rng)
    entries = _large_paths(rng, spec.files)
    text_entries = [e for e in entries if e[1] != "bin"]
    # Lognormal sizes (many small files, a long tail), scaled to the requested total.
    weights = [rng.lognormvariate(0, 1.0) for _ in text_entries]
    for index, (_path, lang) in enumerate(text_entries):
        if lang in ("min", "json"):
            weights[index] *= 8
    scale = spec.text_mb * 1024 * 1024 / sum(weights)
    planted = set(rng.sample(range(len(text_entries)), RARE_FILES))
    total = 0
    for index, ((path, lang), weight) in enumerate(zip(text_entries, weights, strict=True)):
        size = max(300, int(weight * scale))
        if lang == "min":
            content = text.minified(size)
        elif lang == "json":
            content = text.json_data(size)
        else:
            content = text.source(lang, index, size)
        if index in planted:
            lines = content.split("\n")
            at = rng.randrange(1, max(2, len(lines) - 1))
            lines.insert(at, f"    # {RARE_TOKEN}: keep in sync with the billing export")
            content = "\n".join(lines)
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode()
        target.write_bytes(data)
        total += len(data)
    for path, _lang in (e for e in entries if e[1] == "bin"):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\x89PNG\r\n\x1a\n\0\0" + rng.randbytes(rng.randint(2_000, 30_000)))
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Import the generated tree")
    # A second commit that changes one file: HEAD is checked out, HEAD~1 is not.
    changed = root / text_entries[0][0]
    changed.write_bytes(changed.read_bytes() + b"# touched by the second commit\n")
    git(root, "commit", "-q", "-am", "Touch one file")
    if spec.gc:
        git(root, "gc", "-q", "--prune=now")
    _refresh_index(root)
    marker.write_text(json.dumps(asdict(spec)))
    if log:
        storage = "packed with git gc" if spec.gc else "loose objects"
        print(
            f"  generated {len(entries):,} files, {total / 1e6:.1f} MB of text in "
            f"{time.perf_counter() - started:.1f} s ({storage})",
            file=sys.stderr,
            flush=True,
        )
    return root


# --- the 100,000-file tree -----------------------------------------------------------------

WIDE_TOP = ("src", "lib", "tests", "tools", "web", "vendor", "docs", ".github")
WIDE_EXTS = (".py", ".py", ".py", ".ts", ".go", ".md", ".json", ".txt")


def _wide_paths(rng: random.Random, files: int) -> list[str]:
    """Directory trees of depth 1-7, with `deep` directories scattered at every level."""
    dirs: list[str] = []
    for top in WIDE_TOP:
        frontier = [top]
        for depth in range(6):
            nxt = []
            for parent in frontier:
                for _ in range(rng.randint(2, 5) if depth < 3 else rng.randint(0, 2)):
                    name = "deep" if rng.random() < 0.06 else rng.choice(WORDS)
                    nxt.append(f"{parent}/{name}")
            dirs.extend(frontier)
            frontier = nxt[:400]
        dirs.extend(frontier)
    dirs = sorted(set(dirs))
    paths: set[str] = set()
    while len(paths) < files:
        folder = rng.choice(dirs)
        ext = rng.choice(WIDE_EXTS)
        stem = f"{rng.choice(VERBS)}_{rng.choice(WORDS)}_{rng.randrange(1000)}"
        if ext == ".py" and (folder.startswith("tests") or rng.random() < 0.15):
            stem = "test_" + stem
        paths.add(f"{folder}/{stem}{ext}")
    return sorted(paths)


def make_wide_tree(root: Path, spec: WideSpec, *, log: bool = True) -> Path:
    """Create (or reuse) the `spec.files`-file repository at `root`, checked out on disk."""
    marker = root.with_suffix(".json")
    if (root / ".git").is_dir() and _spec_matches(marker, spec):
        return root
    started = time.perf_counter()
    _init(root)
    rng = random.Random(spec.seed)
    paths = _wide_paths(rng, spec.files)
    chunks = [
        b"commit refs/heads/main\n",
        b"committer Bench Author <bench@example.com> 1714564800 +0000\n",
        b"data 17\nGenerated tree.\n\n",
    ]
    for path in paths:
        body = f"# {path}\n".encode()
        chunks.append(b"M 100644 inline " + path.encode() + b"\n")
        chunks.append(b"data %d\n" % len(body) + body + b"\n")
    git(root, "fast-import", "--quiet", input_bytes=b"".join(chunks))
    imported = time.perf_counter()
    git(root, "read-tree", "-u", "--reset", "HEAD")  # writes the files and the index
    _refresh_index(root)
    marker.write_text(json.dumps(asdict(spec)))
    if log:
        print(
            f"  generated {len(paths):,} files: fast-import {imported - started:.1f} s, "
            f"checkout {time.perf_counter() - imported:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    return root
