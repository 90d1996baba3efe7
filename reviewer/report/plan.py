"""A dry run's plan, as text for a person and as JSON for a program.

Names and values come from the repository and its settings: untrusted, so the text is
cleaned for the terminal (`clean_text`) and both forms are redacted like any report.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from reviewer import __version__
from reviewer.report.common import plural, short_rev
from reviewer.review.dryrun import DryRun, Span
from reviewer.safety.redact import Redactor, redact_values
from reviewer.safety.sinks import clean_text, data_name, printable

FORMAT = "reviewer-plan"
VERSION = 1


def render_plan_text(plan: DryRun) -> str:
    plan = redact_values(plan, Redactor())
    reviewed = [f for f in plan.files if f.reviewed]
    skipped = [f for f in plan.files if not f.reviewed]
    model = plan.model or "(no model set)"
    out = [
        f"reviewer dry run: {short_rev(plan.base)}..{short_rev(plan.head)} with {model}"
        " (no model was asked)",
        "",
        f"Files: {len(reviewed)} to review, {len(skipped)} skipped",
    ]
    out += [f"  skipped {f.path}: {f.reason or 'not reviewed'}" for f in skipped]
    out += [
        f"  partly {f.path}: {f.shown_text}; the rest of its diff does not fit in a request"
        for f in reviewed
        if f.partly_reviewed
    ]
    out += ["", f"Parts: {len(plan.parts)}"]
    for part in plan.parts:
        out.append(
            f"  part {part.number} of {len(plan.parts)} ({part.label}): "
            f"{plural(len(part.paths), 'file')}, about {part.first_request_tokens:,} tokens "
            "in its first request"
        )
        out += [f"    {path}" for path in part.paths]
    out += ["", f"Rule files: {len(plan.rule_files) or 'none'}"]
    for rule in plan.rule_files:
        cut = f"; {rule.cut}" if rule.cut else ""
        out.append(f"  {rule.path}: for {plural(len(rule.applied_to), 'changed file')}{cut}")
        out += [f"    {path}" for path in rule.applied_to]
    out += ["", "Settings:"]
    for name, (value, source) in plan.settings.items():
        out.append(f"  {name} = {json.dumps(value, ensure_ascii=False)}  ({source})")
    out += ["", f"Estimate: {estimate_text(plan)}"]
    return "\n".join(clean_text(line) for line in out) + "\n"


def estimate_text(plan: DryRun) -> str:
    estimate = plan.estimate
    requests = _range(estimate.requests, lambda v: f"{v:,.0f}")
    tokens = _range(estimate.tokens, lambda v: f"{v:,.0f}")
    # A range ("1 to 40 requests") takes the plural; one exact request does not.
    noun = "request" if estimate.requests.high == 1 else "requests"
    text = f"{requests} {noun}, {tokens} tokens"
    if estimate.cost is not None:
        text += f", {_range(estimate.cost, lambda v: f'${v:,.4f}')} (USD)"
    return f"{text}; {estimate.note}" if estimate.note else text


def _range(span: Span, form: Any) -> str:
    return form(span.low) if span.low == span.high else f"{form(span.low)} to {form(span.high)}"


def render_plan_json(plan: DryRun) -> str:
    plan = printable(redact_values(plan, Redactor()), data_name)
    estimate = plan.estimate
    document = {
        "dry_run": True,
        "format": FORMAT,
        "version": VERSION,
        "reviewer_version": __version__,
        "base": plan.base,
        "head": plan.head,
        "model": plan.model,
        "parts": [
            {
                "number": part.number,
                "label": part.label,
                "files": list(part.paths),
                "first_request_tokens": part.first_request_tokens,
            }
            for part in plan.parts
        ],
        "files": [asdict(f) for f in plan.files],
        "rule_files": [asdict(rule) for rule in plan.rule_files],
        "settings": {
            name: {"value": value, "source": source}
            for name, (value, source) in plan.settings.items()
        },
        "estimate": {
            "requests": asdict(estimate.requests),
            "tokens": asdict(estimate.tokens),
            "cost_usd": None if estimate.cost is None else asdict(estimate.cost),
            "note": estimate.note,
        },
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
