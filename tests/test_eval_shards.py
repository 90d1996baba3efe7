"""`reviewer eval --shard K/N` and `--merge DIR...`: a benchmark split over machines scores as
one run; shards that do not make one run are refused with one line. The example workflow's
own commands run here on the shipped sample dataset with scripted models over real HTTP.
Also the report's tables of precision by confidence band and by verdict."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from reviewer.cli.program import main
from reviewer.eval import verification
from reviewer.eval.markdown import render_report
from reviewer.eval.metrics import case_metrics
from reviewer.eval.results import assemble, case_score
from reviewer.eval.runner import finding_marks
from reviewer.eval.stages import StageInput, StageOutput
from reviewer.findings import Finding, Severity, Usage, Verification
from tests.test_eval import REVIEWS, RULES, SAMPLE, Models, env, run_eval  # noqa: F401

# Every test here runs with test_eval's environment: its own cache, no REVIEWER_* of the
# machine, the scripted models' names.
pytestmark = pytest.mark.usefixtures("env")

PROJECT = Path(__file__).resolve().parents[1]
EXAMPLE = PROJECT / "docs" / "examples" / "eval-matrix.yml"
# The sample's cases in its order; shard K of 2 takes every 2nd from the K-th.
ORDER = ["moving-sum-off-by-one", "find-user-sql-injection", "refund-exceeds-charge",
         "greeting-f-string", "clamp-clearer-names", "port-default-constant",
         "refund-split-integer-cents"]  # fmt: skip


def ids(results: dict[str, Any]) -> list[str]:
    return [case["id"] for case in results["cases"]]


def merge(tmp_path: Path, *folders: str, out: str = "merged") -> tuple[int, dict[str, Any]]:
    target = tmp_path / out
    code = main(["eval", "--merge", *(str(tmp_path / f) for f in folders), "--out", str(target)])
    path = target / "results.json"
    return code, json.loads(path.read_text()) if path.exists() else {}


def last_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_shards_take_every_nth_case_and_their_merge_scores_as_one_run(
    tmp_path: Path
) -> None:
    with Models(REVIEWS, RULES):
        code, whole = run_eval(tmp_path, str(SAMPLE), out="whole")
        assert code == 0
        first = run_eval(tmp_path, str(SAMPLE), "--shard", "1/2", out="s1", cache="c1")
        second = run_eval(tmp_path, str(SAMPLE), "--shard", "2/2", out="s2", cache="c2")
    assert (first[0], second[0]) == (0, 0)
    assert ids(first[1]) == ORDER[0::2] and ids(second[1]) == ORDER[1::2]
    assert first[1]["shard"] == {"index": 1, "count": 2, "cases": 7}
    assert whole["shard"] is None
    # Each shard alone: precision 2/3 and 1/3 (their mean would be 0.5 by chance; their
    # recalls, 2/2 and 1/2, would average 0.75 too: the merge's numbers come from cases).
    assert first[1]["metrics"]["llm"]["precision"] == 0.6667
    assert second[1]["metrics"]["llm"]["precision"] == 0.3333

    code, merged = merge(tmp_path, "s2", "s1")
    assert code == 0
    assert ids(merged) == ORDER
    # Computed again from every case: exactly the one run's numbers, not an average.
    assert merged["metrics"] == whole["metrics"]
    assert merged["metrics"]["llm"]["precision"] == 0.5
    assert merged["metrics"]["llm"]["findings_per_clean_case"] == 0.5
    for key in ("cases_total", "cases_scored", "errors", "expected_total", "datasets"):
        assert merged[key] == whole[key], key
    assert [c["metrics"] for c in merged["cases"]] == [c["metrics"] for c in whole["cases"]]
    usage = merged["usage"]
    shards_usage = [first[1]["usage"], second[1]["usage"]]
    assert usage["review_prompt_tokens"] == sum(u["review_prompt_tokens"] for u in shards_usage)
    assert merged["shard"] is None
    report = (tmp_path / "merged" / "report.md").read_text()
    assert "| 0.500 | 0.750 | 0.600 | 3 | 3 | 1 |" in report


@pytest.mark.parametrize("shard", ["0/2", "3/2", "2", "a/b", "1/0", "1/2/3"])
def test_a_bad_shard_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shard: str
) -> None:
    code = main(["eval", str(SAMPLE), "--shard", shard, "--out", str(tmp_path / "o")])
    assert code == 2
    assert last_error(capsys) == (
        f"reviewer: error: --shard '{shard}': give K/N with 1 <= K <= N (e.g. --shard 2/4 "
        "runs every 4th case from the 2nd)"
    )
    assert not (tmp_path / "o").exists()


def test_a_shard_beyond_the_cases_is_empty_and_shards_from_two_machines_merge(
    tmp_path: Path,
) -> None:
    """Each shard with its own model servers (other ports: other URLs for the reviewer and
    the judge, as two machines have): where a model is reached is not a setting that splits
    a run."""
    results, asked = [], []
    for shard, out in (("1/2", "s1"), ("2/2", "s2")):
        with Models(REVIEWS, RULES) as models:
            results.append(run_eval(tmp_path, str(SAMPLE), "--only", "clamp-clearer-names",
                                    "--shard", shard, out=out, cache=f"cache-{out}"))  # fmt: skip
            asked.append(len(models.reviewer.requests))
    assert asked == [1, 0]
    assert [(code, r["cases_total"]) for code, r in results] == [(0, 1), (0, 0)]
    code, merged = merge(tmp_path, "s1", "s2")
    assert code == 0 and ids(merged) == ["clamp-clearer-names"]


def _write(path: Path, results: dict[str, Any]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.json").write_text(json.dumps(results))


def test_shards_that_are_not_one_run_are_refused_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other_dataset = tmp_path / "other.json"
    other_dataset.write_text(SAMPLE.read_text().replace('"version": "4"', '"version": "9"'))
    with Models(REVIEWS, RULES):
        for args, out in [
            ([str(SAMPLE), "--shard", "1/2"], "s1"),
            ([str(SAMPLE), "--shard", "2/2"], "s2"),
            ([str(SAMPLE), "--shard", "2/3"], "of3"),
            ([str(other_dataset), "--shard", "2/2"], "dataset"),
            ([str(SAMPLE), "--shard", "2/2", "--judge", "location"], "judge"),
        ]:
            assert run_eval(tmp_path, *args, out=out)[0] == 0
        os.environ["REVIEWER_MAX_TURNS"] = "7"
        assert run_eval(tmp_path, str(SAMPLE), "--shard", "2/2", out="settings")[0] == 0
    s1 = json.loads((tmp_path / "s1" / "results.json").read_text())
    s2 = json.loads((tmp_path / "s2" / "results.json").read_text())
    _write(tmp_path / "short", {**s2, "cases": s2["cases"][:1]})
    _write(tmp_path / "twice", {**s2, "cases": [*s2["cases"][:2], s1["cases"][0]]})
    (tmp_path / "empty").mkdir()
    s1_, s2_ = tmp_path / "s1", tmp_path / "s2"
    expected = {
        ("s1",): "--merge: shard 2 of 2 is missing (3 cases); give every shard's folder",
        ("s1", "s1"): f"--merge: '{s1_}' and '{s1_}' are both shard 1/2; give each shard once",
        ("s1", "of3"): f"--merge: '{tmp_path / 'of3'}' is shard 2/3 of 7 cases, '{s1_}' 1/2 of "
                       "7; merge the shards of one --shard K/N run",
        ("s1", "dataset"): f"--merge: '{tmp_path / 'dataset'}' is of other datasets "
                           f"(reviewer-sample 9) than '{s1_}' (reviewer-sample 4); merge the "
                           "shards of one run",
        ("s1", "judge"): f"--merge: '{tmp_path / 'judge'}' was judged by ['location', None, "
                         f"None], '{s1_}' by ['llm', 'judge-model', "
                         f"'{s1['judge']['prompt_version']}']; merge shards judged alike",
        ("s1", "short"): f"--merge: '{tmp_path / 'short'}' holds 1 case where shard 2/2 of 7 "
                         "has 3; it is not a whole shard",
        ("s1", "twice"): f"--merge: case '{ORDER[0]}' is in both '{s1_}' and "
                         f"'{tmp_path / 'twice'}'; merge the shards of one run",
        ("s1", "empty"): f"--merge: cannot read '{tmp_path / 'empty' / 'results.json'}': "
                         "No such file or directory",
    }  # fmt: skip
    capsys.readouterr()
    for folders, message in expected.items():
        code, merged = merge(tmp_path, *folders)
        assert (code, merged) == (2, {}), folders
        assert last_error(capsys) == f"reviewer: error: {message}", folders
    code, _ = merge(tmp_path, "s1", "settings")
    assert code == 2
    line = last_error(capsys)
    assert line.startswith(f"reviewer: error: --merge: '{tmp_path / 'settings'}' was run with "
                           f"other settings than '{s1_}'")  # fmt: skip
    # The same shards, whole and alike, merge.
    assert merge(tmp_path, "s1", str(s2_.name))[0] == 0


def _cases(results: dict[str, Any], change: Any) -> dict[str, Any]:
    """`results` with its first case changed by `change` (a copy)."""
    first = json.loads(json.dumps(results["cases"][0]))
    change(first)
    return {**results, "cases": [first, *results["cases"][1:]]}


def _set(mapping: dict[str, Any], key: str, value: Any) -> None:
    mapping[key] = value


# A hostile or broken results.json beside a whole shard 1/2: (how it is made from shard 2/2,
# what the one line says after the file's name). Written with Python's json.dumps, which
# writes NaN and Infinity (not JSON) and escapes a lone surrogate as `\udc80`.
BROKEN: dict[str, tuple[Any, str]] = {
    "count zero": (
        lambda s2: {**s2, "shard": {**s2["shard"], "count": 0}},
        "shard.count should be greater than or equal to 1 (it is 0)",
    ),
    "cases as a string": (
        lambda s2: {**s2, "cases": "every case"},
        'cases should be a valid list (it is "every case")',
    ),
    "cases as a string, a whole run": (
        lambda s2: {**s2, "shard": None, "cases": "abc", "cases_total": 3},
        'cases should be a valid list (it is "abc")',
    ),
    "a null review": (
        lambda s2: _cases(s2, lambda case: _set(case, "review", None)),
        "cases[0]: a scored case has no review or no matches",
    ),
    "a lone surrogate in a case id": (
        lambda s2: _cases(s2, lambda case: _set(case, "id", "case-\udc80")),
        "holds a lone surrogate escape at cases[0].id, which no text can be written with",
    ),
    "NaN in usage": (
        lambda s2: {**s2, "usage": {**s2["usage"], "review_seconds": float("nan")}},
        "is not JSON: NaN is not a number JSON has (strict JSON, RFC 8259)",
    ),
    "Infinity in usage": (
        lambda s2: {**s2, "usage": {**s2["usage"], "review_cost": float("inf")}},
        "is not JSON: Infinity is not a number JSON has (strict JSON, RFC 8259)",
    ),
    "a number past a float's range": (
        lambda s2: json.dumps(s2).replace('"wall_seconds": ', '"wall_seconds": 1e999, "x": '),
        "is not JSON: 1e999 is past a float's range",
    ),
    "severity apocalyptic": (
        lambda s2: _cases(s2, lambda case: _set(case["review"]["findings"][0], "severity",
                                                "apocalyptic")),
        "cases[0].review.findings[0].severity should be 'critical', 'high', 'medium', 'low' "
        'or \'info\' (it is "apocalyptic")',
    ),
    "a match past the findings": (
        lambda s2: _cases(s2, lambda case: _set(case["matches"], "llm", [
            {"issue": 0, "finding": 7, "confidence": 0.9}])),
        "cases[0]: its llm judge's match pairs issue 0 and finding 7, of 2 issues and 1 "
        "finding (counted from 0)",
    ),
}  # fmt: skip


def test_a_results_file_of_a_wrong_shape_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Models(REVIEWS, RULES):
        assert run_eval(tmp_path, str(SAMPLE), "--shard", "1/2", out="s1", cache="c1")[0] == 0
        assert run_eval(tmp_path, str(SAMPLE), "--shard", "2/2", out="s2", cache="c2")[0] == 0
    s1 = json.loads((tmp_path / "s1" / "results.json").read_text())
    s2 = json.loads((tmp_path / "s2" / "results.json").read_text())
    assert len(s2["cases"][0]["review"]["findings"]) == 1  # "a match past the findings"
    fix = "give the results.json that `reviewer eval` wrote (run the cases again if it was changed)"
    capsys.readouterr()
    for name, (make, message) in BROKEN.items():
        made = make(s2)
        folder = tmp_path / name.replace(" ", "-")
        folder.mkdir()
        text = made if isinstance(made, str) else json.dumps(made)
        (folder / "results.json").write_text(text)
        for given in ([folder.name], ["s1", folder.name]):  # alone, and beside a good shard
            code, merged = merge(tmp_path, *given, out=f"out-{folder.name}")
            assert (code, merged) == (2, {}), name
            line = last_error(capsys)
            file = folder / "results.json"
            assert line.startswith(f"reviewer: error: --merge: '{file}' "), (name, line)
            assert message in line and line.endswith(fix) and "unexpected" not in line, line

    # A shard that says it is one of 10^12: named from the shards given, nothing allocated
    # by N (before: a set of every shard number, until MemoryError).
    huge = {**s1, "shard": {**s1["shard"], "count": 10**12}, "cases": s1["cases"][:1],
            "cases_total": 1}  # fmt: skip
    _write(tmp_path / "huge", huge)
    code, merged = merge(tmp_path, "huge")
    assert (code, merged) == (2, {})
    assert last_error(capsys) == (
        "reviewer: error: --merge: shards 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 999,999,999,989 "
        f"more of 1000000000000 are missing ({len(ORDER) - 1} cases); give every shard's folder"
    )
    # --compare reads results the same way.
    code = main(["eval", "--compare", str(tmp_path / "NaN-in-usage" / "results.json"),
                 str(tmp_path / "s1" / "results.json")])  # fmt: skip
    assert code == 2 and "is not JSON: NaN is not a number JSON has" in last_error(capsys)
    # The shards as written merge, into strict JSON.
    assert merge(tmp_path, "s1", "s2")[0] == 0
    json.loads((tmp_path / "merged" / "results.json").read_text(), parse_constant=_refuse)


def _refuse(name: str) -> None:
    raise AssertionError(f"{name} in a results.json")


def test_merge_takes_no_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval", str(SAMPLE), "--merge", str(tmp_path), "--out", str(tmp_path / "o")])
    assert code == 2
    assert last_error(capsys) == (
        "reviewer: error: --merge joins results folders; give no dataset or --shard with it"
    )


def _case(
    expected: int, findings: list[tuple[float | None, str | None]], matched: set[int]
) -> dict[str, Any]:
    """A scored case entry of results.json: `findings` as (confidence, verdict)."""
    issue = {"description": "x", "severity": "high", "path": None, "lines": None,
             "side": "RIGHT"}  # fmt: skip
    entry = {
        "id": f"case-{len(findings)}-{sorted(matched)}",
        "dataset": "d",
        "repository": "r",
        "status": "scored",
        "error": None,
        "expected": [issue] * expected,
        "review": {
            "findings": [{"severity": "high", "confidence": c, "verdict": v} for c, v in findings]
        },
        "matches": {
            "llm": [
                {"issue": i, "finding": f, "confidence": 1.0}
                for i, f in enumerate(sorted(matched))
            ]
        },
        "findings": len(findings),
    }
    entry["metrics"] = {"llm": case_metrics(case_score(entry, "llm"))}
    return entry


def test_the_report_gives_precision_by_confidence_band_and_by_verdict() -> None:
    cases = [
        _case(2, [(0.9, "confirmed"), (0.3, None), (0.85, "uncertain")], {0, 2}),
        _case(0, [(0.6, "unverified"), (None, "confirmed"), (0.8, "confirmed")], set()),
    ]
    usage = {"review_prompt_tokens": 0, "review_completion_tokens": 0, "review_seconds": 0.0,
             "review_cost": None, "judge_prompt_tokens": 0, "judge_completion_tokens": 0,
             "judge_seconds": 0.0, "reviews_from_cache": 0, "verdicts_from_cache": 0,
             "wall_seconds": 0.0}  # fmt: skip
    results = assemble(
        {
            "datasets": [{"name": "d", "version": "1", "format": "local", "cases": 2}],
            "reviewer": {"model": "m", "flags": {}, "setup": "", "settings_hashes": []}
            | {"prompt_hashes": []},
            "judge": {"kind": "llm", "model": "j", "base_url": None, "prompt_version": "1"},
            "primary": "llm",
            "usage": usage,
            "shard": None,
        },
        cases,
    )
    llm = results["metrics"]["llm"]
    assert {band: (r["findings"], r["matched_findings"], r["precision"])
            for band, r in llm["by_confidence"].items()} == {
        "<0.5": (1, 0, 0.0), "0.5-0.8": (1, 0, 0.0), ">=0.8": (3, 2, 0.6667),
        "unknown": (1, 0, 0.0)}  # fmt: skip
    assert {verdict: (r["findings"], r["matched_findings"], r["precision"])
            for verdict, r in llm["by_verdict"].items()} == {
        "confirmed": (3, 1, 0.3333), "uncertain": (1, 1, 1.0), "unverified": (1, 0, 0.0),
        "none": (1, 0, 0.0)}  # fmt: skip
    clean = (llm["clean_cases"], llm["clean_findings"], llm["findings_per_clean_case"])
    assert clean == (1, 3, 3.0)
    report = render_report(results)
    assert "| confidence | findings | matched | precision |" in report
    assert "| &gt;=0.8 | 3 | 2 | 0.667 |" in report  # escaped Markdown: renders ">="
    assert "| unknown | 1 | 0 | 0.000 |" in report
    assert "| verdict | findings | matched | precision |" in report
    assert "| uncertain | 1 | 1 | 1.000 |" in report
    assert "| none | 1 | 0 | 0.000 |" in report


def test_a_findings_confidence_and_verdict_are_read_where_it_has_them() -> None:
    plain = Finding(path="a.py", line=1, severity=Severity.HIGH, title="t", body="b")
    assert finding_marks(plain) == {"confidence": None, "verdict": None}

    class Verified:  # the shape verification gives a finding: a verdict object or a word
        confidence = 0.7
        verification = type("V", (), {"verdict": "confirmed"})()

    assert finding_marks(Verified()) == {"confidence": 0.7, "verdict": "confirmed"}  # type: ignore[arg-type]


# --- the example workflow, run -----------------------------------------------------------

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def resolve(text: str, values: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("secrets."):
            return os.environ[name.removeprefix("secrets.")]
        assert name in values, f"the test does not know the expression {name!r}"
        return values[name]

    return EXPRESSION.sub(one, str(text))


def run_step(step: dict[str, Any], values: dict[str, str], workflow_env: dict[str, str],
             cwd: Path) -> subprocess.CompletedProcess[str]:  # fmt: skip
    environment = {
        **os.environ,
        **workflow_env,
        **{k: resolve(v, values) for k, v in step.get("env", {}).items()},
        # This test's virtualenv stands for the job's installed reviewer.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


def uses(step: dict[str, Any], action: str) -> bool:
    return str(step.get("uses", "")).startswith(f"actions/{action}@")


def test_the_example_matrix_workflow_runs_its_shards_and_merges_them(
    tmp_path: Path
) -> None:
    """The shard job's and the merge job's own commands on the sample dataset, each shard in
    its own folder and cache (its own machine); the artifacts moved as upload-artifact and
    download-artifact (a folder per artifact) move them."""
    workflow = yaml.safe_load(EXAMPLE.read_text())
    shard_job, merge_job = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    assert merge_job["needs"] == "shard" and "!cancelled()" in merge_job["if"]
    matrix = shard_job["strategy"]["matrix"]["shard"]
    workflow_env = {**workflow["env"], "DATASET": str(SAMPLE)}
    evaluate = next(s for s in shard_job["steps"] if "reviewer eval" in s.get("run", ""))
    upload = next(s for s in shard_job["steps"] if uses(s, "upload-artifact"))
    download = next(s for s in merge_job["steps"] if uses(s, "download-artifact"))
    joining = next(s for s in merge_job["steps"] if "reviewer eval --merge" in s.get("run", ""))
    downloaded = tmp_path / "merge-job" / download["with"]["path"]
    with Models(REVIEWS, RULES) as models:
        for shard in matrix:
            machine = tmp_path / f"machine-{shard}"
            machine.mkdir()
            values = {"matrix.shard": str(shard), "strategy.job-total": str(len(matrix))}
            os.environ["XDG_CACHE_HOME"] = str(machine / "cache")
            proc = run_step(evaluate, values, workflow_env, machine)
            assert proc.returncode == 0, proc.stderr
            name = resolve(upload["with"]["name"], values)
            assert re.fullmatch(download["with"]["pattern"].replace("*", ".*"), name)
            shutil.copytree(machine / resolve(upload["with"]["path"], values), downloaded / name)
        # Every case reviewed once, over all the machines.
        assert len(models.reviewer.requests) == len(ORDER)
    proc = run_step(joining, {}, workflow_env, tmp_path / "merge-job")
    assert proc.returncode == 0, proc.stderr
    merged = json.loads((tmp_path / "merge-job" / "eval" / "results.json").read_text())
    assert ids(merged) == ORDER and merged["cases_scored"] == len(ORDER)
    llm = merged["metrics"]["llm"]
    assert (llm["tp"], llm["fp"], llm["fn"], llm["clean_cases"]) == (3, 3, 1, 4)
    assert (tmp_path / "merge-job" / "eval" / "report.md").is_file()


def test_the_example_workflow_is_checked_like_every_workflow() -> None:
    """tests/test_action_yaml.py parses, pins and actionlints every docs/examples/*.yml."""
    from tests.test_action_yaml import WORKFLOWS, uses_lines

    assert EXAMPLE in WORKFLOWS
    named = {line.split("@")[0] for line in uses_lines(EXAMPLE)}
    assert {"actions/upload-artifact", "actions/download-artifact"} <= named


# --- the stage after the review: verification from cached reviews ------------------------


def keep_every_finding(given: StageInput) -> StageOutput:
    """`verify = "off"`: the findings as the review gave them."""
    calls.append(("off", given.head))
    return StageOutput(given.findings)


def stand_in_verifier(given: StageInput) -> StageOutput:
    """`verify = "all"`: refutes the style and docstring nits, confirms the rest."""
    calls.append(("all", given.head))
    kept, discarded = [], []
    for finding in given.findings:
        if finding.title.startswith(("Style", "Missing", "Consider")):
            discarded.append({"title": finding.title, "reason": "refuted"})
        else:
            checked = Verification("confirmed", "the stand-in confirms it", 0)
            kept.append(dataclasses.replace(finding, confidence=0.9, verification=checked))
    return StageOutput(tuple(kept), tuple(discarded), Usage(100, 10, 1), None)


calls: list[tuple[str, str]] = []


def test_verification_runs_from_cached_reviews_and_is_cached_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`verify` off and all (stand-ins through the evaluation's one seam) share each case's
    cached review: the second setting costs only its verification, which is cached too."""
    calls.clear()
    chosen = {"stage": keep_every_finding}
    monkeypatch.setattr(verification, "post_review_stage", lambda settings: chosen["stage"])
    with Models(REVIEWS, RULES) as models:
        code, off = run_eval(tmp_path, str(SAMPLE), out="off")
        assert code == 0 and len(models.reviewer.requests) == 7
        judged = len(models.judge.requests)
        chosen["stage"] = stand_in_verifier
        code, verified = run_eval(tmp_path, str(SAMPLE), out="all")
        assert code == 0
        # No review asked again, and no judge either: the kept findings were judged before.
        assert len(models.reviewer.requests) == 7 and len(models.judge.requests) == judged
        code, again = run_eval(tmp_path, str(SAMPLE), out="again")
        assert code == 0 and len(models.reviewer.requests) == 7
    assert [stage for stage, _ in calls] == ["off"] * 7 + ["all"] * 7
    assert verified["usage"]["reviews_from_cache"] == 7
    assert verified["usage"]["verifications_from_cache"] == 0
    assert again["usage"]["verifications_from_cache"] == 7
    assert verified["usage"]["verification_prompt_tokens"] == 700
    llm_off, llm_all = off["metrics"]["llm"], verified["metrics"]["llm"]
    assert (llm_off["tp"], llm_off["fp"], llm_all["tp"], llm_all["fp"]) == (3, 3, 3, 0)
    assert (llm_off["clean_findings"], llm_all["clean_findings"]) == (2, 0)
    assert llm_all["by_verdict"]["confirmed"] == {"findings": 3, "matched_findings": 3,
                                                  "precision": 1.0}  # fmt: skip
    assert llm_off["by_verdict"]["none"]["findings"] == 6
    moving = next(c for c in verified["cases"] if c["id"] == ORDER[0])
    assert moving["review"]["verification"]["discarded"] == [
        {"title": "Style: name the divisor", "reason": "refuted"}
    ]
    assert moving["review"]["verification"]["findings_before"] == 2
    capsys.readouterr()
    main(["eval", "--compare", str(tmp_path / "off" / "results.json"),
          str(tmp_path / "all" / "results.json")])  # fmt: skip
    out = capsys.readouterr().out
    assert re.search(r"^review tokens +(\d+) +\1 +\+0$", out, re.M), out
    assert re.search(r"^verification tokens +0 +770 +\+770$", out, re.M), out
