"""The README is code a newcomer runs and reference a script writer reads: it is held to the
code here, on real repositories with the package's own executables."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import AliasChoices

from reviewer.findings import CATEGORIES, Severity
from reviewer.submission import FindingIn, SubmitReview

README = Path(__file__).resolve().parents[1] / "README.md"


def section(title: str) -> str:
    """The text of the README section whose heading is `title`, up to the next heading."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ )", text, re.S | re.M)
    assert match, f"README has no section '{title}'"
    return match.group(1)


def test_submit_review_fields_are_documented_as_the_model_declares_them() -> None:
    """A script for the fake model writes submit_review's arguments: the README lists every
    field of a finding, which may be left out, its other spellings, and the allowed values."""
    text = section("The answer: `submit_review`")
    for field in SubmitReview.model_fields:
        assert f"`{field}`" in text
    rows = dict(re.findall(r"^\| `(\w+\??)` \| (.*) \|$", text, re.M))
    documented = {name.rstrip("?"): (name.endswith("?"), what) for name, what in rows.items()}
    assert set(documented) == set(FindingIn.model_fields)
    for name, info in FindingIn.model_fields.items():
        optional, what = documented[name]
        assert optional == (not info.is_required()), name
        aliases = info.validation_alias
        others = (
            [a for a in aliases.choices if a != name] if isinstance(aliases, AliasChoices) else []
        )
        spelled = re.search(r"\(also (.*)\)", what)
        assert re.findall(r"`(\w+)`", spelled.group(1) if spelled else "") == others, name
    assert re.findall(r"`(\w+)`", documented["severity"][1]) == [s.value for s in Severity]
    assert re.findall(r"`(\w+)`", documented["category"][1]) == list(CATEGORIES)
