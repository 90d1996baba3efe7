"""Running the cases: the normal review of each, then the judges, `jobs` cases at a time.

Each case ends scored or as an error that says at which stage (settings, review, judge) and
why; an incomplete review or a judge that cannot answer is never a case with no findings
or no match. Finished reviews and verdicts go to the cache as they come, so an interrupted
run resumes where it stopped and a new judge re-scores without reviewing again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from reviewer import __version__
from reviewer.context.tickets.model import TicketRequest
from reviewer.context.tickets.read import gather_tickets
from reviewer.errors import ReviewerError
from reviewer.eval import verification
from reviewer.eval.cache import Cache, key_of
from reviewer.eval.cases import EvalCase
from reviewer.eval.judge import JudgeError, LLMJudge, Verdict, location_match
from reviewer.eval.metrics import Pair, greedy_match
from reviewer.eval.stages import (
    POST_REVIEW_SETTINGS,
    PostReview,
    StageChooser,
    StageInput,
    discarded_json,
    finding_data,
    finding_from_data,
    review_stage_flags,
)
from reviewer.findings import Finding, Usage
from reviewer.report import write_transcript
from reviewer.review.context import ChangeInfo
from reviewer.settings.layers import load_settings
from reviewer.settings.prompts import PROMPT_NAMES, VERIFY_PROMPT_NAMES, prompt_texts
from reviewer.wording import plural
from reviewer.workspace import repository_root, resolve_commit

JudgeKind = Literal["llm", "location"]
# Settings that do not change what a review says: the same model behind another URL (a new
# port, a tunnel) reuses its reviews. `--cache` elsewhere starts afresh.
_NOT_IN_KEY = {"api_key", "base_url", "request_timeout", "max_retries", "concurrency"}
# Marks of a finding that do not change what the judge reads (its cache key leaves them out).
_MARKS = ("confidence", "verdict", "merged_from")


def setup_identity(flags: dict[str, Any], config_path: Path | None, environ: dict[str, str]) -> str:
    """A hash of the settings every case of a run shares (the flags, the --config file, the
    REVIEWER_* environment, the version), by which --merge refuses shards run differently.
    Like the review key, it leaves out where the model is reached and the key."""
    from reviewer.settings.layers import environment_layer

    environment = {
        key: value
        for key, value in environment_layer(environ).values.items()
        if key not in _NOT_IN_KEY
    }
    try:
        config = hashlib.sha256(config_path.read_bytes()).hexdigest() if config_path else None
    except OSError:
        config = str(config_path)  # load_settings says what is wrong with it
    return key_of("setup", __version__, flags, environment, config)[:12]


@dataclass(frozen=True)
class RunOptions:
    flags: dict[str, Any]
    config_path: Path | None
    judge_kind: JudgeKind
    judge: LLMJudge | None
    cache: Cache
    jobs: int = 1
    # The stage after the review (the verification), run apart from cached reviews; None:
    # the program's own (verification.post_review_stage).
    post_review: StageChooser | None = None
    # Where each review run now writes its transcript (CASE.jsonl); None: kept by none.
    transcripts: Path | None = None


@dataclass
class CaseRun:
    case: EvalCase
    dataset: str
    review: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    # Every pair the judge was asked about, and the one-to-one matches, by judge.
    verdicts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    matches: dict[str, list[Pair]] = field(default_factory=dict)
    judge_usage: Usage = field(default_factory=Usage)
    judge_seconds: float = 0.0
    review_cached: bool = False
    verdicts_cached: int = 0

    @property
    def scored(self) -> bool:
        return self.error is None


def run_cases(
    cases: list[tuple[str, EvalCase]], options: RunOptions, log: Callable[[str], None]
) -> list[CaseRun]:
    done = 0
    lock = threading.Lock()

    def one(item: tuple[str, EvalCase]) -> CaseRun:
        nonlocal done
        started = time.monotonic()
        run = run_case(item[1], item[0], options)
        with lock:
            done += 1
            log(f"eval [{done}/{len(cases)}] {_line(run, time.monotonic() - started)}")
        return run

    if options.jobs <= 1 or len(cases) <= 1:
        return [one(item) for item in cases]
    with ThreadPoolExecutor(max_workers=min(options.jobs, len(cases))) as pool:
        return list(pool.map(one, cases))


def _line(run: CaseRun, seconds: float) -> str:
    name = " ".join(run.case.id.split())[:80]
    if run.error:
        return f"{name}: ERROR ({run.error['stage']}): {run.error['message'][:200]}"
    assert run.review is not None
    kind = "llm" if "llm" in run.matches else "location"
    found = len(run.matches[kind])
    reused = " (review from cache)" if run.review_cached else ""
    return (
        f"{name}: {found}/{len(run.case.expected)} expected found, "
        f"{plural(len(run.review['findings']), 'finding')}, {seconds:.1f}s{reused}"
    )


def run_case(case: EvalCase, dataset: str, options: RunOptions) -> CaseRun:
    run = CaseRun(case, dataset)
    try:
        run.review, run.review_cached = _review(case, options)
    except ReviewerError as exc:
        run.error = {"stage": "review", "message": str(exc)}
        return run
    if run.review["status"] != "complete":
        run.error = {
            "stage": "review",
            "message": f"review incomplete: {run.review['incomplete_reason']}",
        }
        return run
    findings = run.review["findings"]
    run.verdicts["location"] = [
        {"issue": i, "finding": j, "match": bool(location_match(issue, finding))}
        for i, issue in enumerate(case.expected)
        for j, finding in enumerate(findings)
        if location_match(issue, finding) is not None
    ]
    run.matches["location"] = greedy_match(
        Pair(v["issue"], v["finding"], 1.0) for v in run.verdicts["location"] if v["match"]
    )
    if options.judge_kind == "llm":
        assert options.judge is not None
        try:
            _judge_all(run, options.judge, options.cache)
        except JudgeError as exc:
            run.error = {"stage": "judge", "message": str(exc)}
    return run


def _judge_all(run: CaseRun, judge: LLMJudge, cache: Cache) -> None:
    assert run.review is not None
    verdicts = []
    for i, issue in enumerate(run.case.expected):
        for j, finding in enumerate(run.review["findings"]):
            # Keyed by the finding as the judge reads it: its confidence and verdict do not
            # change the answer, so a verified run reuses the unverified run's verdicts.
            judged = {k: v for k, v in finding.items() if k not in _MARKS}
            key = key_of("judge", judge.settings.identity(), run.case.id, asdict(issue), judged)
            stored = cache.get("judgements", key)
            if stored is not None:
                verdict = Verdict.from_json(stored)
                run.verdicts_cached += 1
            else:
                verdict = judge.judge(issue, finding)
                cache.put("judgements", key, verdict.to_json())
                run.judge_usage += verdict.usage
                run.judge_seconds += verdict.seconds
            verdicts.append(
                {
                    "issue": i,
                    "finding": j,
                    "match": verdict.match,
                    "confidence": verdict.confidence,
                    "reasoning": verdict.reasoning,
                }
            )
    run.verdicts["llm"] = verdicts
    run.matches["llm"] = greedy_match(
        Pair(v["issue"], v["finding"], v["confidence"]) for v in verdicts if v["match"]
    )


def _review(case: EvalCase, options: RunOptions) -> tuple[dict[str, Any], bool]:
    """The case's review record, from the cache or by running the normal review."""
    from reviewer.review.pipeline import run_review
    from reviewer.review.prepare import ReviewRequest, ticket_settings

    root = repository_root(case.repo)
    base, head = resolve_commit(root, case.base), resolve_commit(root, case.head)
    asked = load_settings(
        flags=options.flags, root=root, config_revision=base, config_path=options.config_path
    )
    # With a post-review stage apart, the review runs without it and its key leaves the
    # stage's settings out: one cached review serves every verify setting.
    stage = (options.post_review or verification.post_review_stage)(asked)
    flags = review_stage_flags(options.flags) if stage else options.flags
    settings = asked
    if stage:
        settings = load_settings(
            flags=flags, root=root, config_revision=base, config_path=options.config_path
        )
    excluded = _NOT_IN_KEY | POST_REVIEW_SETTINGS if stage else _NOT_IN_KEY
    settings_json = settings.model_dump(mode="json", exclude=excluded)
    prompts = _prompt_hashes(root, base, PROMPT_NAMES)
    key = key_of(
        "review",
        __version__,
        case.id,
        base,
        head,
        case.title,
        case.description,
        [asdict(ticket) for ticket in case.tickets],
        case.repository,
        settings_json,
        prompts,
        # The case's learnings text; None: the base's .reviewer/learnings.md (`base` is in
        # the key). The verification's prompts are in the post-review stage's key.
        ("learnings", case.learnings),
    )
    stored = options.cache.get("reviews", key)
    info = ChangeInfo(case.title, case.description, case.repository)
    # The case's tickets as the review shows them, by the review's own function: at most
    # max_tickets, each cut (none with tickets = "off").
    shown = gather_tickets(
        TicketRequest(given=case.tickets, detect=False), [], ticket_settings(settings), {},
        lambda line: None,
    ).tickets  # fmt: skip
    context = StageInput(root, base, head, info, asked, (), shown, case.learnings)
    if stored is not None and (not stage or "finding_data" in stored):
        return _after_review(stored, stage, context, options.cache), True
    review = run_review(
        ReviewRequest(
            repo=root,
            base=base,
            head=head,
            flags=flags,
            config_path=options.config_path,
            info=info,
            keep_transcript=options.transcripts is not None,
            announce_settings=False,
            # The case's own tickets, with their text; no tracker is asked.
            tickets=TicketRequest(given=case.tickets, detect=False),
            learnings=case.learnings,
        )
    )
    if options.transcripts is not None:
        write_transcript(review.transcript, transcript_path(options.transcripts, case.id))
    result = review.result
    record = {
        "key": key,
        "status": result.status,
        "incomplete_reason": result.incomplete_reason,
        "model": result.model,
        "base_url": settings.base_url,
        "base": base,
        "head": head,
        "settings_hash": key_of(settings_json)[:12],
        "prompt_hashes": prompts,
        "findings": [finding_json(f) for f in result.findings],
        "suppressed": len(result.suppressed),
        # What the review discarded before posting (the noise table), with why.
        "discarded": [discarded_json(f) for f in result.discarded],
        "usage": {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "requests": result.usage.requests,
            "cached_prompt_tokens": result.usage.cached_prompt_tokens,
        },
        # USD from the model's price (settings or the shipped table); None without a price.
        "cost": result.cost_usd,
        "duration_seconds": result.duration_seconds,
        "tool_calls": result.tool_calls,
        "turns": result.turns,
        # What the model was told the change is for (tickets = "off": nothing).
        "tickets": settings.tickets,
        "tickets_shown": sum(1 for ticket in result.tickets if ticket.read),
        # What the team had taught it (learnings = "off": nothing), and how many of its
        # learnings reached a part of the review.
        "learnings": settings.learnings,
        "learnings_shown": sum(1 for learning in result.learnings if learning.applied_to),
    }
    if stage:
        record["finding_data"] = [finding_data(f) for f in result.findings]
    if result.complete:
        options.cache.put("reviews", key, record)
    return _after_review(record, stage, context, options.cache), False


def _prompt_hashes(root: Path, base: str, names: tuple[str, ...]) -> dict[str, str]:
    """A short hash of each template `names` at `base` (override or packaged)."""
    return {
        name: hashlib.sha256(text.encode()).hexdigest()[:12]
        for name, text in prompt_texts(root, base, names).items()
    }


def transcript_path(folder: Path, case_id: str) -> Path:
    """DIR/CASE.jsonl: the case id (a dataset's text) made a plain file name, with a hash
    of it so that two ids that read alike stay two files."""
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", case_id).strip("._")[:80] or "case"
    return folder / f"{plain}-{hashlib.sha256(case_id.encode()).hexdigest()[:8]}.jsonl"


def _after_review(
    record: dict[str, Any], stage: PostReview | None, context: StageInput, cache: Cache
) -> dict[str, Any]:
    """The review's record after the post-review stage (from its own cache, or run now on
    `context` with the review's findings): its findings are those the stage kept; what it
    discarded and spent beside them. `context.settings` are the settings as asked."""
    if stage is None or record["status"] != "complete":
        return {k: v for k, v in record.items() if k != "finding_data"}
    name = getattr(stage, "__qualname__", type(stage).__name__)
    # The verification's own prompts (the review's are in the review's key).
    prompts = _prompt_hashes(context.root, context.base, VERIFY_PROMPT_NAMES)
    key = key_of(
        "post-review",
        record["key"],
        name,
        context.settings.model_dump(mode="json", exclude=_NOT_IN_KEY),
        prompts,
    )
    stored = cache.get("post-review", key)
    if stored is None:
        findings = tuple(finding_from_data(f) for f in record["finding_data"])
        out = stage(dataclasses.replace(context, findings=findings))
        stored = {
            "findings": [finding_json(f) for f in out.findings],
            "discarded": list(out.discarded),
            "usage": {
                "prompt_tokens": out.usage.prompt_tokens,
                "completion_tokens": out.usage.completion_tokens,
                "requests": out.usage.requests,
            },
            "cost": out.cost,
        }
        if out.complete:
            cache.put("post-review", key, stored)
        from_cache = False
    else:
        from_cache = True
    reviewed = {k: v for k, v in record.items() if k != "finding_data"}
    return {
        **reviewed,
        "prompt_hashes": {**reviewed["prompt_hashes"], **prompts},
        "findings": stored["findings"],
        "verification": {
            "stage": name,
            "findings_before": len(record["findings"]),
            "discarded": stored["discarded"],
            "usage": stored["usage"],
            "cost": stored["cost"],
            "from_cache": from_cache,
        },
    }


def finding_json(finding: Finding) -> dict[str, Any]:
    """A finding as a candidate for the judges: every finding the review reports, inline or
    summary-only."""
    return {
        "path": finding.path,
        "line": finding.line,
        "end_line": finding.end_line,
        "side": finding.side,
        "severity": str(finding.severity),
        "category": finding.category,
        "title": finding.title,
        "body": finding.body,
        "placement": finding.placement,
        # How many reported findings it stands for (merging.py): 1 when none was merged.
        "merged_from": finding.merged_from,
        **finding_marks(finding),
    }


def finding_marks(finding: Finding) -> dict[str, Any]:
    """The finding's own confidence (0..1) and the verifier's verdict on it, for the report's
    tables by band and by verdict; None where the finding has none (a review before
    verification existed, or `verify = "off"`), so the tables read them as unknown/none."""
    confidence = getattr(finding, "confidence", None)
    verification = getattr(finding, "verification", None)
    verdict = getattr(verification, "verdict", verification)
    return {
        "confidence": confidence if isinstance(confidence, int | float) else None,
        "verdict": str(verdict) if verdict else None,
    }
