"""The forge-neutral core (reviewer/forge/) imports nothing of a forge: no PyGithub, no
python-gitlab, no adapter. Everything it needs of a forge goes through forge/interface.py."""

from __future__ import annotations

import ast
from pathlib import Path

import reviewer.forge

FORBIDDEN = ("github", "gitlab", "reviewer.github", "reviewer.gitlab")


def _imports(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            if node.module == "reviewer":  # `from reviewer import github` names the adapter
                names += [f"reviewer.{alias.name}" for alias in node.names]
    return names


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_the_core_imports_no_forge() -> None:
    root = Path(reviewer.forge.__file__).parent
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 10  # the walk sees the core
    found = [
        f"{path.relative_to(root)}: {name}"
        for path in modules
        for name in _imports(ast.parse(path.read_text(encoding="utf-8")))
        if _forbidden(name)
    ]
    assert found == []


def test_the_check_sees_an_adapter_import() -> None:
    tree = ast.parse(
        "import github\nfrom reviewer.github.client import X\nfrom reviewer import gitlab\n"
        "from gitlab.v4 import objects\nfrom reviewer.githubish import y\n"
    )
    assert [name for name in _imports(tree) if _forbidden(name)] == [
        "github",
        "reviewer.github.client",
        "reviewer.gitlab",
        "gitlab.v4",
    ]


# The layers below the review: the agent loop (loop/) runs for a review, a verification and an
# answer, so it knows no finding and no prompt of theirs; llm/ is below the loop.
LAYERS = {
    "loop": ("reviewer.review", "reviewer.checks", "reviewer.forge", "reviewer.report"),
    "llm": ("reviewer.loop", "reviewer.review", "reviewer.checks", "reviewer.forge"),
    "change": ("reviewer.review", "reviewer.loop", "reviewer.checks"),
    # The checks a review's findings go through (grounding, intent, noise, verification):
    # the review runs them, so they know nothing of it (issue 32, where it lives).
    "checks": ("reviewer.review", "reviewer.forge", "reviewer.report", "reviewer.github",
               "reviewer.gitlab"),
    # What a review reads besides the diff (tickets): below the review, knowing no forge.
    "context": ("reviewer.review", "reviewer.checks", "reviewer.loop", "reviewer.forge",
                "reviewer.github", "reviewer.gitlab", "github", "gitlab"),
}  # fmt: skip


def _below(package: str, forbidden: tuple[str, ...]) -> list[str]:
    root = Path(reviewer.forge.__file__).parent.parent / package
    return [
        f"{package}/{path.relative_to(root)}: {name}"
        for path in sorted(root.rglob("*.py"))
        for name in _imports(ast.parse(path.read_text(encoding="utf-8")))
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


def test_the_loop_and_the_model_client_import_nothing_above_them() -> None:
    packages = ("loop", "llm", "change", "checks", "context")
    assert {package: _below(package, LAYERS[package]) for package in packages} == {
        "loop": [],
        "llm": [],
        "change": [],
        "checks": [],
        "context": [],
    }


def _forge_names_compared(tree: ast.AST) -> list[int]:
    """Lines that compare something with a forge's name ("github", "gitlab"): a switch on
    the forge, which belongs in an adapter."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            values = [node.left, *node.comparators]
            if any(isinstance(v, ast.Constant) and str(v.value).lower() in ("github", "gitlab")
                   for v in values):  # fmt: skip
                lines.append(node.lineno)
    return lines


def test_the_core_never_switches_on_the_forge() -> None:
    """What differs between forges is said by the adapter (`issue_kind`, `dialect`, `words`,
    ...); the core only passes it on (review_flow.py once chose the issues' kind by
    comparing `dialect` with "gitlab")."""
    root = Path(reviewer.forge.__file__).parent
    found = {
        str(path.relative_to(root)): lines
        for path in sorted(root.rglob("*.py"))
        if (lines := _forge_names_compared(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}
    assert _forge_names_compared(ast.parse('kind = "gitlab" if d == "gitlab" else "x"')) == [1]


def test_each_adapter_says_how_its_forge_writes_issues() -> None:
    from reviewer.github.adapter import GitHubPull
    from reviewer.gitlab.adapter import GitLabMergeRequest
    from reviewer.gitlab.unposted import UnpostedMergeRequest

    kinds = {cls.__name__: cls.issue_kind
             for cls in (GitHubPull, GitLabMergeRequest, UnpostedMergeRequest)}  # fmt: skip
    assert kinds == {"GitHubPull": "github", "GitLabMergeRequest": "gitlab",
                     "UnpostedMergeRequest": "gitlab"}  # fmt: skip
