"""What the model is shown of the tools is a contract: a change to it must be deliberate.

The snapshot holds the whole `tools` list a review sends, the seven tools and submit_review,
whose arguments a script for the fake model writes (`reviewer tools --json` prints it).

To accept a change, run `REVIEWER_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_schemas.py`
and commit the new snapshot with the change that explains it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from reviewer.review.submission import review_tools
from reviewer.tools import TOOLS, tool_schemas

SNAPSHOT = Path(__file__).parent / "snapshots" / "tool_schemas.json"
# The final tool of a finding's verification loop (reviewer/checks/verdict.py), pinned the same way.
VERDICT_SNAPSHOT = Path(__file__).parent / "snapshots" / "submit_verdict.json"

CONTRACT = {
    "read_file": {"path"},
    "read_file_lines": {"path", "startLine", "endLine", "side"},
    "list_files": {"directory", "pattern"},
    "search_text": {"pattern", "path", "filePattern"},
    "get_file_structure": {"path"},
    "get_git_blame": {"path", "startLine", "endLine"},
    "get_git_log": {"path", "count"},
}
REQUIRED = {
    "read_file": ["path"],
    "read_file_lines": ["path", "startLine", "endLine"],
    "list_files": [],
    "search_text": ["pattern"],
    "get_file_structure": [],
    "get_git_blame": ["path"],
    "get_git_log": [],
}


def test_schemas_match_the_snapshot() -> None:
    current = json.dumps(review_tools(), indent=2, sort_keys=True) + "\n"
    if os.environ.get("REVIEWER_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(current, encoding="utf-8")
    assert SNAPSHOT.read_text(encoding="utf-8") == current, (
        "The tool schemas changed; if on purpose, update the snapshot (see module docstring)."
    )


def test_the_verdict_schema_matches_its_snapshot() -> None:
    from reviewer.checks.verdict import submit_verdict_schema

    current = json.dumps(submit_verdict_schema(), indent=2, sort_keys=True) + "\n"
    if os.environ.get("REVIEWER_UPDATE_SNAPSHOTS"):
        VERDICT_SNAPSHOT.write_text(current, encoding="utf-8")
    assert VERDICT_SNAPSHOT.read_text(encoding="utf-8") == current, (
        "The submit_verdict schema changed; if on purpose, update the snapshot (see module "
        "docstring)."
    )


def test_tool_names_and_parameters_are_the_public_contract() -> None:
    assert list(TOOLS) == list(CONTRACT)
    for schema in tool_schemas():
        function = schema["function"]
        assert schema["type"] == "function"
        assert set(function["parameters"]["properties"]) == CONTRACT[function["name"]]
        assert function["parameters"]["required"] == REQUIRED[function["name"]]
        assert function["description"]
        for prop in function["parameters"]["properties"].values():
            assert prop.get("description") and prop.get("type") in ("string", "integer")


@pytest.mark.parametrize("schema", review_tools(), ids=lambda s: s["function"]["name"])
def test_each_schema_is_valid_json_schema(schema: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(schema["function"]["parameters"])
