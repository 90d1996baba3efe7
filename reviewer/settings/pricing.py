"""What a review costs: a model's price (USD per million tokens) and the cost of its usage.

The well-known prices are data (`data/prices.toml`, each with its source and date); the
settings override them (`[prices."MODEL"]`). A model is priced only by its own name, or a
name the table says is the same model at the same price: never by a look-alike, since a
borrowed price makes a wrong bill look right. Without a price a report shows tokens only
and says why.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from functools import cache
from importlib.resources import files

from pydantic import BaseModel, ConfigDict, Field

from reviewer.findings import ModelPrice

__all__ = ["ModelPrice", "Price", "known_prices", "no_price_text", "price_for", "rates_text", "usd"]


class Price(BaseModel):
    """A model's price in USD per million tokens, as a settings table gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="Prompt tokens, USD per million.")
    cached_input: float | None = Field(
        None, ge=0, description="Prompt tokens read from the server's cache; `input` if unset."
    )
    output: float = Field(ge=0, description="Completion tokens (reasoning included).")


@cache
def _table() -> dict[str, ModelPrice]:
    text = files("reviewer").joinpath("data/prices.toml").read_text(encoding="utf-8")
    table: dict[str, ModelPrice] = {}
    for name, row in tomllib.loads(text)["models"].items():
        price = Price.model_validate(
            {k: v for k, v in row.items() if k not in ("source", "checked", "same_price_as")}
        )
        source = f"{row['source']} (checked {row['checked']})"
        for alias in (name, *row.get("same_price_as", ())):
            table[alias] = _priced(alias, price, source)
    return table


def known_prices() -> dict[str, ModelPrice]:
    """The shipped table, every documented name of a model as its own key."""
    return dict(_table())


def price_for(model: str | None, overrides: Mapping[str, Price]) -> ModelPrice | None:
    """The price of `model`: the settings' own, else the shipped table's; None if neither
    has this exact name."""
    if not model:
        return None
    if model in overrides:
        return _priced(model, overrides[model], f'the settings ([prices."{model}"])')
    return _table().get(model)


def _priced(model: str, price: Price, source: str) -> ModelPrice:
    cached = price.input if price.cached_input is None else price.cached_input
    return ModelPrice(model, price.input, cached, price.output, source)


def no_price_text(model: str | None) -> str:
    """Why a review shows no cost, and how to give one."""
    if not model:
        return "tokens only: no model is set, so no price"
    return f"tokens only: no price is known for '{model}' (set [prices.\"{model}\"])"


def rates_text(price: ModelPrice) -> str:
    """`$2.50 input, $1.25 cached, $10.00 output per million tokens`."""
    return (
        f"{_rate(price.input)} input, {_rate(price.cached_input)} cached, "
        f"{_rate(price.output)} output per million tokens"
    )


def _rate(amount: float) -> str:
    """A price as published: `$2.50`, `$0.075`."""
    return f"${amount:,.2f}" if round(amount, 2) == amount else f"${amount:g}"


def usd(amount: float) -> str:
    """`$12.35` from a dollar up; below, up to four decimals (cents would hide a small
    review's cost): `$0.0426`, `$0.10`."""
    if amount >= 1:
        return f"${amount:,.2f}"
    if 0 < amount < 0.0001:
        return "<$0.0001"
    digits = f"{amount:.4f}".rstrip("0")
    whole, _, decimals = digits.partition(".")
    return f"${whole}.{decimals.ljust(2, '0')}"
