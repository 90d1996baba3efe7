"""The verification as the evaluation's post-review stage (stages.py): the same pass a review
runs (verify.verify_findings), on a cached review's findings, with the read-only tools at the
case's head. `reviewer eval --compare` of `verify = "off"` against `verify = "all"` then
reviews each case once and pays only for the verification.
"""

from __future__ import annotations

from reviewer.change import load_change
from reviewer.checks.verdict import SUBMIT_VERDICT
from reviewer.checks.verify import Verifier, verify_environment, verify_findings
from reviewer.eval.stages import PostReview, StageInput, StageOutput, discarded_json
from reviewer.llm import Connection, ServerProfile
from reviewer.loop.budget import ReviewBudget
from reviewer.safety.redact import Redactor
from reviewer.settings.config import Settings
from reviewer.settings.learnings import load_learnings
from reviewer.settings.pricing import price_for
from reviewer.workspace import RevisionWorkspace


def post_review_stage(settings: Settings) -> PostReview | None:
    """The verification stage, for every value of `verify` (with "off" it only applies
    `min_confidence`), so every verify setting shares one cached review."""
    return verification_stage


def verification_stage(given: StageInput) -> StageOutput:
    """Verify `given.findings` as the settings say; with `verify = "off"` only
    `min_confidence` applies, and no model is asked."""
    from reviewer.review.pipeline import chat_model  # the review's own model factory, one way in

    settings = given.settings
    profile, connection = ServerProfile(), Connection(settings)
    verifier = Verifier(
        settings=settings,
        workspace=RevisionWorkspace(given.root, given.head),
        change=load_change(given.root, given.base, given.head),
        redactor=Redactor(),
        budget=ReviewBudget(settings),
        model=lambda own: chat_model(own, None, profile, connection, SUBMIT_VERDICT),
        environment=verify_environment(given.root, given.base),
        repository=given.info.repository,
        tickets=given.tickets,
        learnings=load_learnings(given.root, given.base, settings.learnings, given.learnings),
    )
    checked = verify_findings(list(given.findings), settings, verifier)
    price = price_for(settings.verify_model or settings.model, settings.prices)
    unverified = [
        f for f in checked.kept if f.verification and f.verification.verdict == "unverified"
    ]
    return StageOutput(
        findings=tuple(checked.kept),
        discarded=tuple(discarded_json(f) for f in checked.discarded),
        usage=checked.usage,
        cost=price.cost(checked.usage) if price else None,
        # A check that could not run is not an answer to keep: asked again next time.
        complete=not unverified,
    )
