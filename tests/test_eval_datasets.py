"""The benchmark readers of `reviewer eval`: Martian's Code Review Bench and AACR-Bench.

The files read are real: a few cases copied from each benchmark (tests/data/eval/*/README.md
names the source, commit and licence). The clones are real too, made from local bare
"remotes" shaped like GitHub's (`refs/pull/N/head`, served over file:// with partial clone
allowed); the base with a token comes from the shipped fake GitHub, over real HTTP.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reviewer.change import load_change
from reviewer.errors import ReviewerError
from reviewer.eval.aacr import detect_aacr, load_aacr, read_aacr
from reviewer.eval.cases import EvalCase
from reviewer.eval.clones import Clones, PullCase, parse_pull_url
from reviewer.eval.martian import detect_martian, load_martian, read_martian
from reviewer.testing.fake_github import FakeGitHub
from reviewer.workspace import RevisionWorkspace, repository_root
from tests.conftest import GitRepo

DATA = Path(__file__).parent / "data" / "eval"
MARTIAN = DATA / "martian"
AACR = DATA / "aacr"


def _json(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


# --- reading the real files -------------------------------------------------------------------


def test_martian_cases_titles_and_severities_come_from_the_golden_files() -> None:
    version, cases = read_martian(MARTIAN)
    entries = [
        (f.stem, e) for f in sorted(MARTIAN.glob("*.json")) for e in _json(f)
    ]  # the same order: files by name, entries as listed
    assert [c.title for c in cases] == [e["pr_title"] for _, e in entries]
    for case, (_, entry) in zip(cases, entries, strict=True):
        assert case.pull == parse_pull_url(entry["url"], "test")
        assert case.id == f"{case.pull.repository}#{case.pull.number}"
        assert [(i.description, i.severity) for i in case.expected] == [
            (c["comment"].strip(), c["severity"].lower()) for c in entry["comments"]
        ]
        assert all(i.path is None and i.lines is None for i in case.expected)
        assert case.base is None and case.head is None  # found when cloned
    by_id = {c.id: c for c in cases}
    # `url` is what was reviewed, a copy in the evaluation organisation for some...
    copy = by_id["ai-code-review-evaluation/sentry-greptile#2"]
    # ...labelled with the upstream repository its file is about, like the others there.
    assert copy.repository == by_id["getsentry/sentry#67876"].repository == "getsentry/sentry"
    assert by_id["ai-code-review-evaluation/discourse-graphite#1"].repository == (
        "discourse/discourse"  # from original_url, which names a commit there
    )
    assert {c.repository for c in cases} == {
        "getsentry/sentry",
        "discourse/discourse",
        "keycloak/keycloak",
        "grafana/grafana",
        "calcom/cal.com",
    }
    assert {i.severity for c in cases for i in c.expected} <= {"low", "medium", "high", "critical"}
    assert version.startswith("sha256:")
    assert read_martian(MARTIAN)[0] == version
    assert read_martian(MARTIAN / "sentry.json")[0] != version


def test_aacr_cases_carry_locations_and_the_pull_requests_with_no_valid_issue() -> None:
    version, cases = read_aacr(AACR)
    positive = _json(AACR / "positive_samples.json")
    negative = _json(AACR / "negative_samples.json")
    with_issues = {s["githubPrUrl"] for s in positive}
    clean = [s for s in negative if s["githubPrUrl"] not in with_issues]
    assert len(clean) == 1  # opencv/opencv#27185: only rejected comments
    assert len(cases) == len(positive) + len(clean)
    for case, sample in zip(cases, [*positive, *clean], strict=True):
        assert case.pull == parse_pull_url(sample["githubPrUrl"], "test")
        assert case.base == sample["source_commit"]
        assert case.head == sample["target_commit"]
        assert case.repository == case.pull.repository
    for case, sample in zip(cases, positive, strict=False):
        assert len(case.expected) == len(sample["comments"])
        for issue, comment in zip(case.expected, sample["comments"], strict=True):
            assert issue.description == comment["note"].strip()
            assert issue.severity is None
            assert issue.path == comment["path"]
            assert issue.side == comment["side"].upper()
            assert issue.lines == (
                min(comment["from_line"], comment["to_line"]),
                max(comment["from_line"], comment["to_line"]),
            )
    # The rejected comments of a pull request that has valid ones are not expected issues.
    assert cases[-1].expected == ()
    assert sum(len(c.expected) for c in cases) == sum(len(s["comments"]) for s in positive)
    # The real data has both sides and one backwards range, made first <= last.
    assert {i.side for c in cases for i in c.expected} == {"LEFT", "RIGHT"}
    assert any(c["from_line"] > c["to_line"] for s in positive for c in s["comments"])
    assert all(i.lines[0] <= i.lines[1] for c in cases for i in c.expected if i.lines)
    assert version.startswith("sha256:")


def test_the_positive_file_alone_reads_its_negative_sibling() -> None:
    assert read_aacr(AACR / "positive_samples.json") == read_aacr(AACR)


def test_detection_tells_the_benchmarks_apart(tmp_path: Path) -> None:
    assert detect_martian(MARTIAN) and detect_martian(MARTIAN / "keycloak.json")
    assert detect_aacr(AACR) and detect_aacr(AACR / "positive_samples.json")
    assert not detect_martian(AACR) and not detect_aacr(MARTIAN)
    benchmark = tmp_path / "code-review-benchmark" / "offline" / "golden_comments"
    shutil.copytree(MARTIAN, benchmark)
    assert detect_martian(tmp_path / "code-review-benchmark")
    dataset = tmp_path / "aacr-bench" / "dataset"
    shutil.copytree(AACR, dataset)
    assert detect_aacr(tmp_path / "aacr-bench")
    (tmp_path / "broken.json").write_text("[{", encoding="utf-8")
    assert not detect_martian(tmp_path / "broken.json")
    assert not detect_aacr(tmp_path / "missing")


# --- errors -----------------------------------------------------------------------------------


def _one_line_error(call: Callable[[], object]) -> str:
    with pytest.raises(ReviewerError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_missing_or_malformed_file_is_a_one_line_error(tmp_path: Path) -> None:
    message = _one_line_error(lambda: read_martian(tmp_path / "nope.json"))
    assert "does not exist" in message and "golden_comments" in message
    assert "does not exist" in _one_line_error(lambda: read_aacr(tmp_path / "nope"))
    broken = tmp_path / "sentry.json"
    broken.write_text((MARTIAN / "sentry.json").read_text(encoding="utf-8")[:-20])
    message = _one_line_error(lambda: read_martian(broken))
    assert str(broken) in message and "not valid JSON" in message
    entries = _json(MARTIAN / "sentry.json")
    entries[1]["comments"][0]["severity"] = "Blocker"
    broken.write_text(json.dumps(entries), encoding="utf-8")
    message = _one_line_error(lambda: read_martian(broken))
    assert "entry 2" in message and "'Blocker'" in message
    samples = _json(AACR / "positive_samples.json")
    samples[0]["comments"][3]["side"] = "middle"
    (tmp_path / "positive_samples.json").write_text(json.dumps(samples), encoding="utf-8")
    message = _one_line_error(lambda: read_aacr(tmp_path))
    assert "sample 1: comment 4" in message and "left nor right" in message
    samples[0]["comments"][3]["side"] = "right"
    samples[0]["target_commit"] = "HEAD"
    (tmp_path / "positive_samples.json").write_text(json.dumps(samples), encoding="utf-8")
    assert "target_commit" in _one_line_error(lambda: read_aacr(tmp_path))


def test_a_pull_request_url_that_is_not_githubs_is_a_one_line_error(tmp_path: Path) -> None:
    entries = _json(MARTIAN / "grafana.json")
    entries[1]["url"] = "https://gitlab.com/grafana/grafana/-/merge_requests/103633"
    file = tmp_path / "grafana.json"
    file.write_text(json.dumps(entries), encoding="utf-8")
    message = _one_line_error(lambda: read_martian(file))
    assert "entry 2: url" in message and "gitlab.com" in message
    assert "https://github.com/OWNER/NAME/pull/N" in message
    for url in (
        "https://github.com/a/b/issues/3",
        "https://github.com/a/../pull/3",
        "https://github.com/a/.git/pull/3",  # no name: it would be the owner's cache folder
        "https://github.com/a/..git/pull/3",
        None,
    ):
        _one_line_error(lambda url=url: parse_pull_url(url, "x"))


# --- cloning ------------------------------------------------------------------------------------


@dataclass
class Pull:
    number: int
    fork_point: str  # where the branch left main: the merge base without a token
    head: str
    commits: list[str]  # the branch's commits, oldest first


@dataclass
class Remote:
    """A repository on the fake "github.com": a working copy and its bare copy served."""

    work: GitRepo
    bare: Path
    pulls: dict[int, Pull] = field(default_factory=dict)

    def publish(self) -> None:
        if self.bare.exists():
            shutil.rmtree(self.bare)
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(self.work.root), str(self.bare)], check=True
        )
        git = ["git", "-C", str(self.bare)]
        subprocess.run([*git, "config", "uploadpack.allowFilter", "true"], check=True)
        for number, pull in self.pulls.items():
            ref = f"refs/pull/{number}/head"
            subprocess.run([*git, "update-ref", ref, pull.head], check=True)
        # Only main is a branch, as after a merged pull request's branch is deleted.
        for branch in self.work.git("branch", "--format=%(refname:short)").split():
            if branch != "main":
                subprocess.run([*git, "branch", "-q", "-D", branch], check=True)


class FakeGitHubHost:
    """Local bare repositories at `<root>/OWNER/NAME.git`, cloned through file:// URLs."""

    def __init__(self, root: Path, make_repo: Callable[[str], GitRepo]) -> None:
        self.root = root
        self.make_repo = make_repo
        self.git_base = root.as_uri()

    def repository(self, full_name: str, pulls: list[int]) -> Remote:
        work = self.make_repo(full_name.replace("/", "--"))
        work.write("README.md", f"# {full_name}\n")
        work.write("app.py", "def run():\n    return 1\n")
        work.commit("start")
        remote = Remote(work, self.root / f"{full_name}.git")
        for number in pulls:
            fork_point = work.head()
            work.git("checkout", "-q", "-b", f"pr{number}")
            work.write(f"feature_{number}.py", f"VALUE = {number}\n")
            first = work.commit(f"pull request {number}, part 1")
            work.write("app.py", f"def run():\n    return {number * 10}\n")
            second = work.commit(f"pull request {number}, part 2")
            work.git("checkout", "-q", "main")
            work.write("README.md", f"# {full_name}\n\nmain moved on after #{number}\n")
            work.commit(f"main after {number}")
            remote.pulls[number] = Pull(number, fork_point, second, [first, second])
        remote.publish()
        return remote


@pytest.fixture
def host(tmp_path: Path, make_repo: Callable[[str], GitRepo]) -> FakeGitHubHost:
    return FakeGitHubHost(tmp_path / "github", make_repo)


@pytest.fixture
def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], int]:
    """Counts git commands run in the cache (`tmp_path/cache`) by name: a `git` first on PATH
    logs its folder and arguments, then runs git."""
    real = shutil.which("git")
    assert real is not None
    shim = tmp_path / "shim"
    shim.mkdir()
    log = tmp_path / "git-calls.log"
    script = shim / "git"
    script.write_text(f'#!/bin/sh\necho "$PWD $*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    cache = str(tmp_path / "cache")

    def count(command: str) -> int:
        lines = log.read_text().splitlines() if log.exists() else []
        return sum(
            1
            for line in lines
            if line.split()[0].startswith(cache) and _subcommand(line.split()[1:]) == command
        )

    return count


def _subcommand(argv: list[str]) -> str:
    """`clone` in `-c a=b -c c=d clone ...`."""
    words = iter(argv)
    for word in words:
        if word == "-c":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


def _sentry_remotes(host: FakeGitHubHost) -> tuple[Remote, Remote]:
    # The pull requests tests/data/eval/martian/sentry.json names.
    return (
        host.repository("ai-code-review-evaluation/sentry-greptile", [1, 2]),
        host.repository("getsentry/sentry", [67876]),
    )


def _load_sentry(host: FakeGitHubHost, cache: Path) -> dict[str, EvalCase]:
    dataset = load_martian(
        MARTIAN / "sentry.json",
        cache_dir=cache,
        token=None,
        log=lambda message: None,
        git_base=host.git_base,
    )
    assert dataset.name == "martian"
    return {case.id: case for case in dataset.cases}


def _missing(root: Path, revision: str) -> list[str]:
    """The objects of `revision`'s files that the partial clone does not have."""
    listed = _git(root, "rev-list", "--objects", "--no-walk", "--missing=print", revision)
    return [line for line in listed.splitlines() if line.startswith("?")]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_martian_cases_are_cloned_once_per_repository_and_reused(
    host: FakeGitHubHost, tmp_path: Path, git_calls: Callable[[str], int]
) -> None:
    greptile, sentry = _sentry_remotes(host)
    cache = tmp_path / "cache"
    cases = _load_sentry(host, cache)
    expected = {
        "ai-code-review-evaluation/sentry-greptile#1": (greptile, 1),
        "ai-code-review-evaluation/sentry-greptile#2": (greptile, 2),
        "getsentry/sentry#67876": (sentry, 67876),
    }
    assert set(cases) == set(expected)
    for case_id, (remote, number) in expected.items():
        case, pull = cases[case_id], remote.pulls[number]
        owner_name = case_id.split("#")[0]
        assert case.repo == cache / "github.com" / owner_name
        assert case.head == pull.head
        # No token: the merge base with the default branch, not main's tip of today.
        assert case.base == pull.fork_point
        assert case.title and case.description == ""
        assert case.repository == "getsentry/sentry"
        # What the review reads: a non-bare repository without checkout, files fetched late.
        root = repository_root(case.repo)
        assert not (root / "app.py").exists()
        assert _git(root, "config", "remote.origin.partialclonefilter") == "blob:none"
        # The head's files are all here already (fetched in one batch, not one per read)...
        assert _missing(root, case.head) == []
        # ...and files no reviewed revision has were not fetched.
        assert _missing(root, "origin/main") != []
        change = load_change(root, case.base, case.head)
        assert {f.path for f in change.files} == {"app.py", f"feature_{number}.py"}
        assert b"return %d" % (number * 10) in RevisionWorkspace(root, case.head).read_bytes(
            "app.py", 1000
        )
    assert git_calls("clone") == 2  # two repositories, three cases
    fetches = git_calls("fetch")
    # A second load reuses the clones and what was learnt: no clone, nothing fetched.
    assert _load_sentry(host, cache) == cases
    assert git_calls("clone") == 2
    assert git_calls("fetch") == fetches


def test_concurrent_cases_of_one_repository_clone_it_once(
    host: FakeGitHubHost, tmp_path: Path, git_calls: Callable[[str], int]
) -> None:
    remote = host.repository("acme/shop", [3, 4, 5, 6])
    clones = Clones(tmp_path / "cache", token=None, log=lambda m: None, git_base=host.git_base)
    pending = [
        PullCase(
            f"acme/shop#{n}",
            parse_pull_url(f"https://github.com/acme/shop/pull/{n}", ""),
            (),
            "acme/shop",
        )
        for n in remote.pulls
    ]
    with ThreadPoolExecutor(4) as pool:
        cases = list(pool.map(clones.resolve, pending))
    assert [c.head for c in cases] == [p.head for p in remote.pulls.values()]
    assert git_calls("clone") == 1


def test_the_base_comes_from_github_with_a_token_and_from_git_without(
    host: FakeGitHubHost, tmp_path: Path
) -> None:
    _, sentry = _sentry_remotes(host)
    pull = sentry.pulls[67876]
    main_tip = sentry.work.git("rev-parse", "main").strip()
    assert main_tip != pull.fork_point
    sentry.work.git("branch", "pr67876-served", pull.head)
    with FakeGitHub(
        sentry.work.root,
        repository="getsentry/sentry",
        number=67876,
        base_ref="main",
        head_ref="pr67876-served",
        body="What the author wrote.",
        token="secret",
    ) as fake:
        clones = Clones(
            tmp_path / "with-token",
            token="secret",
            log=lambda m: None,
            git_base=host.git_base,
            api_url=fake.base_url,
        )
        pending = PullCase(
            "getsentry/sentry#67876",
            parse_pull_url("https://github.com/getsentry/sentry/pull/67876", ""),
            (),
            "getsentry/sentry",
        )
        with_token = clones.resolve(pending)
        asked = [r for r in fake.requests if r.path.endswith("/pulls/67876")]
        fake.assert_no_failures()
    assert with_token.base == main_tip  # the pull request's base.sha
    assert with_token.title == "Change things"  # the fake's default title
    assert with_token.description == "What the author wrote."
    assert len(asked) == 1
    # Asked once: a second resolve reads the cache (the fake is gone).
    again = Clones(
        tmp_path / "with-token",
        token="secret",
        log=lambda m: None,
        git_base=host.git_base,
        api_url="http://127.0.0.1:9",
    )
    assert again.resolve(pending) == with_token
    without = Clones(tmp_path / "without", token=None, log=lambda m: None, git_base=host.git_base)
    assert without.resolve(pending).base == pull.fork_point
    assert without.resolve(pending).description == ""


def test_a_pull_request_merged_by_a_merge_commit_has_its_base_without_a_token(
    host: FakeGitHubHost, tmp_path: Path
) -> None:
    def case(full_name: str, number: int) -> PullCase:
        url = f"https://github.com/{full_name}/pull/{number}"
        return PullCase(f"{full_name}#{number}", parse_pull_url(url, ""), (), full_name)

    clones = Clones(tmp_path / "cache", token=None, log=lambda m: None, git_base=host.git_base)
    merged = host.repository("acme/merged", [8])
    merged.work.git("merge", "-q", "--no-ff", "-m", "Merge #8", merged.pulls[8].head)
    merged.work.write("later.txt", "after the merge\n")
    merged.work.commit("later")
    merged.publish()
    head = merged.pulls[8].head
    assert merged.work.git("merge-base", head, "main").strip() == head  # already in main
    found = clones.resolve(case("acme/merged", 8))
    assert found.base == merged.pulls[8].fork_point
    assert [f.path for f in load_change(found.repo, found.base, found.head).files] == [
        "app.py",
        "feature_8.py",
    ]
    # Fast-forwarded: no trace of its base is left, so only GitHub can tell.
    fast = host.repository("acme/fast", [9])
    fast.work.git("reset", "-q", "--hard", fast.pulls[9].head)
    fast.work.write("later.txt", "after the fast-forward\n")
    fast.work.commit("later")
    fast.publish()
    message = _one_line_error(lambda: clones.resolve(case("acme/fast", 9)))
    assert "acme/fast#9" in message and "token" in message


def test_an_unreachable_clone_url_is_a_one_line_error_and_leaves_no_clone(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    nowhere = (tmp_path / "nowhere").as_uri()
    message = _one_line_error(
        lambda: load_martian(
            MARTIAN / "keycloak.json",
            cache_dir=cache,
            token=None,
            log=lambda m: None,
            git_base=nowhere,
        )
    )
    assert message.startswith(
        f"cannot clone {nowhere}/ai-code-review-evaluation/keycloak-greptile.git"
    )
    assert "REVIEWER_EVAL_GIT_BASE" in message
    folder = cache / "github.com" / "ai-code-review-evaluation"
    assert not [p for p in folder.iterdir() if p.is_dir()]


def test_a_missing_pull_request_is_a_one_line_error(host: FakeGitHubHost, tmp_path: Path) -> None:
    host.repository("acme/shop", [3])
    clones = Clones(tmp_path / "cache", token=None, log=lambda m: None, git_base=host.git_base)
    url = "https://github.com/acme/shop/pull/404"
    message = _one_line_error(
        lambda: clones.resolve(PullCase("x", parse_pull_url(url, ""), (), "acme/shop"))
    )
    assert message.startswith("cannot fetch the head of acme/shop#404")


def test_aacr_cases_get_their_commits_even_when_no_branch_holds_them(
    host: FakeGitHubHost, tmp_path: Path, git_calls: Callable[[str], int]
) -> None:
    remote = host.repository("acme/shop", [3, 4])
    # AACR names the reviewed commit, which may be older than the pull request's head now...
    reviewed = remote.pulls[3].commits[0]
    # ...and a base that only an old ref holds (a deleted release branch, say).
    work = remote.work
    work.git("checkout", "-q", "-b", "gone", remote.pulls[4].fork_point)
    work.write("notes.txt", "gone\n")
    gone = work.commit("on a branch deleted since")
    work.git("checkout", "-q", "main")
    remote.publish()
    subprocess.run(
        ["git", "-C", str(remote.bare), "update-ref", "refs/keep/gone", gone], check=True
    )
    main_tip = work.git("rev-parse", "main").strip()
    real = _json(AACR / "positive_samples.json")
    samples = [
        {
            **real[1],
            "githubPrUrl": "https://github.com/acme/shop/pull/3",
            "source_commit": main_tip,
            "target_commit": reviewed,
        },
        {
            **real[2],
            "githubPrUrl": "https://github.com/acme/shop/pull/4",
            "source_commit": gone,
            "target_commit": remote.pulls[4].head,
        },
    ]
    folder = tmp_path / "aacr"
    folder.mkdir()
    (folder / "positive_samples.json").write_text(json.dumps(samples), encoding="utf-8")
    load = lambda: load_aacr(  # noqa: E731
        folder,
        cache_dir=tmp_path / "cache",
        token=None,
        log=lambda m: None,
        git_base=host.git_base,
    )
    dataset = load()
    first, second = dataset.cases
    assert (first.base, first.head) == (main_tip, reviewed)
    assert (second.base, second.head) == (gone, remote.pulls[4].head)
    assert first.expected and first.expected[0].path == real[1]["comments"][0]["path"]
    assert first.repo == second.repo
    # The diff from the merge base, as for the pull request: only the reviewed commit's file.
    change = load_change(first.repo, first.base, first.head)
    assert [f.path for f in change.files] == ["feature_3.py"]
    calls = (git_calls("clone"), git_calls("fetch"))
    assert load() == dataset
    assert (git_calls("clone"), git_calls("fetch")) == calls == (1, calls[1])


@pytest.mark.parametrize(
    ("tickets", "said"),
    [
        ({"key": "PAY-1"}, '"tickets" is a list'),
        ([{"key": "PAY-1", "text": "x", "body": "y"}], "unknown key(s) ['body']"),
        ([{"key": "", "text": "x"}], '"key" and "text" are non-empty'),
        ([{"key": "PAY-1", "text": 3}], "every value is a string"),
        ([{"key": "PAY-1", "text": "a"}, {"key": "pay-1", "text": "b"}], "the same key"),
    ],
)
def test_a_cases_tickets_are_checked_with_a_one_line_error(
    tmp_path: Path, tickets: object, said: str
) -> None:
    from reviewer.eval.local import load_local

    dataset = tmp_path / "d.json"
    case = {"id": "c", "commits": [{"files": {"a.py": "x = 1\n"}}, {"files": {"a.py": "x = 2\n"}}],
            "tickets": tickets}  # fmt: skip
    dataset.write_text(json.dumps({"format": "reviewer-eval", "cases": [case]}))
    message = _one_line_error(lambda: load_local(dataset, cache_dir=tmp_path, token=None, log=None))
    assert "case 1 ('c')" in message and said in message

