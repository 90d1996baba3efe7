"""What a results.json must hold to be read back (`--merge`, `--compare`): checked once, right
after its format tag, so a file someone edited, cut or made up is one line and exit 2, never
a crash halfway through a merge nor a results.json that is not strict JSON.

The models type what merge.py, results.assemble, compare.py and the report read (a shard's
place, every case's issues, findings, matches and counts, the usage); every other field is
kept as it is (`extra="allow"`), so a results.json of an earlier version still reads.
JSON is read strictly: `NaN`, `Infinity` and numbers past a float's range are refused, and
so is a string no encoder can write (a lone surrogate, which JSON's `\\udc80` escape makes).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from reviewer.errors import ReviewerError, json_problem
from reviewer.findings import Severity
from reviewer.safety.sinks import valid_text
from reviewer.wording import plural

_SeverityName = Literal["critical", "high", "medium", "low", "info"]
if set(get_args(_SeverityName)) != {severity.value for severity in Severity}:
    raise ValueError("results_shape's severities must be findings.Severity's")
_Count = Annotated[int, Field(ge=0)]
# What to do, whatever is wrong with the file.
_FIX = "give the results.json that `reviewer eval` wrote (run the cases again if it was changed)"


class _Shape(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", allow_inf_nan=False)


class ShardRecord(_Shape):
    index: int = Field(ge=1)
    count: int = Field(ge=1)
    cases: _Count

    @model_validator(mode="after")
    def _index_within_count(self) -> ShardRecord:
        if self.index > self.count:
            raise ValueError(f"shard {self.index} of {self.count}: K must be at most N")
        return self


class _Dataset(_Shape):
    name: str
    version: str


class _Reviewer(_Shape):
    model: Any
    flags: dict[str, Any]
    settings_hashes: list[str]
    prompt_hashes: list[str]
    setup: str | None = None

    @field_validator("model")
    @classmethod
    def _model_names(cls, value: Any) -> Any:
        if isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(name, str) for name in value)
        ):
            return value
        raise ValueError("should be a model name or a list of them")


class _Judge(_Shape):
    kind: Literal["llm", "location"]
    model: str | None
    prompt_version: str | None


class _Outcomes(_Shape):
    posted: _Count
    merged: _Count
    discarded: _Count
    unverified: _Count
    discarded_by: dict[str, _Count]


class _DiscardedFinding(_Shape):
    merged_from: int = Field(default=1, ge=1)
    discard_reason: str = ""
    verification: dict[str, Any] | None = None


class _Discarded(_Shape):
    finding: _DiscardedFinding = _DiscardedFinding()


class _Stage(_Shape):
    discarded: list[_Discarded] = []


class _Finding(_Shape):
    severity: _SeverityName
    confidence: float | None = None
    verdict: str | None = None
    merged_from: int = Field(default=1, ge=1)


class _Review(_Shape):
    findings: list[_Finding]
    discarded: list[_Discarded] = []
    verification: _Stage | None = None


class _Issue(_Shape):
    description: str
    severity: _SeverityName | None
    path: str | None


class _Match(_Shape):
    issue: _Count
    finding: _Count
    confidence: float


class _CaseError(_Shape):
    stage: str
    message: str


class _Case(_Shape):
    id: str = Field(min_length=1)
    dataset: str
    repository: str
    status: Literal["scored", "error"]
    error: _CaseError | None
    expected: list[_Issue]
    review: _Review | None
    matches: dict[str, list[_Match]] | None = None
    verification: _Outcomes | None = None

    @model_validator(mode="after")
    def _scored_means_reviewed(self) -> _Case:
        if self.status == "error":
            if self.error is None:
                raise ValueError("an errored case says no error (stage and message)")
            return self
        if self.review is None or self.matches is None:
            raise ValueError("a scored case has no review or no matches")
        for kind, matches in self.matches.items():
            for match in matches:
                if match.issue >= len(self.expected) or match.finding >= len(self.review.findings):
                    issues = plural(len(self.expected), "issue")
                    findings = plural(len(self.review.findings), "finding")
                    raise ValueError(
                        f"its {kind} judge's match pairs issue {match.issue} and finding "
                        f"{match.finding}, of {issues} and {findings} (counted from 0)"
                    )
        return self


class _Metrics(_Shape):
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    tp: _Count = 0
    fp: _Count = 0
    fn: _Count = 0
    findings_per_case: float | None = None
    verification: dict[str, Any] | None = None


class ResultsShape(_Shape):
    version: Literal[1]
    reviewer_version: str
    datasets: list[_Dataset]
    reviewer: _Reviewer
    judge: _Judge
    shard: ShardRecord | None = None
    primary: Literal["llm", "location"]
    cases_total: _Count
    cases_scored: _Count
    cases_errored: _Count
    metrics: dict[str, _Metrics]
    usage: dict[str, float | None]
    cases: list[_Case]

    @field_validator("usage")
    @classmethod
    def _usage_times(cls, usage: dict[str, float | None]) -> dict[str, float | None]:
        missing = [key for key in ("review_seconds", "wall_seconds") if key not in usage]
        if missing:
            raise ValueError(f"has no {' and no '.join(missing)}")
        return usage


def read_strict_json(path: Path, flag: str) -> Any:
    """The JSON document at `path`; NaN, Infinity and numbers past a float's range refused
    (Python's reader takes them: they are not JSON, RFC 8259 §6)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReviewerError(f"{flag}: cannot read '{path}': {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ReviewerError(f"{flag}: '{path}' is not UTF-8 text ({exc.reason}); {_FIX}") from exc
    try:
        return json.loads(text, parse_constant=_not_a_number, parse_float=_finite)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise ReviewerError(f"{flag}: '{path}' is not JSON: {json_problem(exc)}; {_FIX}") from exc


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON has (strict JSON, RFC 8259)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is past a float's range")
    return value


def check_results(data: dict[str, Any], path: Path, flag: str) -> None:
    """One line naming the file, the place and what is wrong, when `data` (a results.json by
    its format tag) is not a results.json these commands can read."""
    surrogate = _lone_surrogate(data, "")
    if surrogate:
        raise ReviewerError(
            f"{flag}: '{path}' holds a lone surrogate escape at {surrogate}, which no text "
            f"can be written with; {_FIX}"
        )
    try:
        ResultsShape.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = _place(error["loc"])
        what = str(error["msg"]).removeprefix("Value error, ").removeprefix("Input ")
        got = json.dumps(error.get("input"), ensure_ascii=True, default=str)
        if error["type"] == "value_error":  # a sentence of ours: after a colon, as it is
            problem = f"{where}: {what}" if where else what
        else:
            problem = f"{where} {what} (it is {got[:60]})"
        raise ReviewerError(f"{flag}: '{path}' is not a results.json: {problem}; {_FIX}") from None


def _place(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _lone_surrogate(value: Any, where: str) -> str:
    """Where the first string (or key) with a lone surrogate is, or ""."""
    if isinstance(value, str):
        return where or "the top" if valid_text(value) != value else ""
    if isinstance(value, dict):
        for key, item in value.items():
            place = f"{where}.{key}" if where else str(key)
            if valid_text(key) != key:
                return place.encode("utf-8", "backslashreplace").decode()
            found = _lone_surrogate(item, place)
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{where}[{index}]")
            if found:
                return found
    return ""
