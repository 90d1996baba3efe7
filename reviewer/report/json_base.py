"""The base of the JSON report's models (json_schema.py, json_context.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    # Unknown keys are refused when a report is read back: a typo is not silence.
    model_config = ConfigDict(extra="forbid", frozen=True)
