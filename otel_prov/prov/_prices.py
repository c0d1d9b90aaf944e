"""A price table: what a model call cost when its instrumentation did not say.

``OTEL_PROV_PRICES`` names a TOML or JSON file keyed by model name, each model giving
prices per million tokens of each kind and, optionally, its currency (default ``USD``)::

    ["gpt-4o"]
    input = 2.50          # per million input tokens not read from or written to a cache
    output = 10.00        # per million output tokens (reasoning tokens included)
    cache_read = 1.25     # optional: per million cached input tokens read (default: input)
    cache_write = 3.75    # optional: per million input tokens written to a cache (default: input)
    reasoning = 10.00     # optional: per million reasoning tokens (default: output)
    currency = "USD"

Token counts follow the GenAI conventions: ``gen_ai.usage.input_tokens`` includes the
cached tokens, ``output_tokens`` the reasoning ones, so those are priced at their own
rate and taken off the plain count.  Parsing is pure (the text in, a table or a
:class:`PriceFileError` naming the problem out); the mapper prices calls with the table
it is given, so the same spans and table always give the same cost.  Amounts are
:class:`~decimal.Decimal`: money is not rounded through binary floats.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import tomllib

__all__ = ["TOKEN_KINDS", "ModelPrice", "PriceFileError", "PriceTable", "Usage", "parse_prices"]

TOKEN_KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")
"""The kinds of tokens counted per model call and totalled per session, in this order."""
_OPTIONAL = {"cache_read": "input", "cache_write": "input", "reasoning": "output"}
"""Optional prices, and the price each defaults to."""
_MILLION = Decimal(1_000_000)


class PriceFileError(ValueError):
    """The price file cannot be used; the message names the model and field at fault."""


@dataclass(frozen=True)
class Usage:
    """The token counts of one model call (None: not reported)."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None


@dataclass(frozen=True)
class ModelPrice:
    per_million: Mapping[str, Decimal]
    """Token kind -> price per million tokens, every kind of :data:`TOKEN_KINDS`."""
    currency: str

    def cost(self, usage: Usage) -> Decimal | None:
        """The cost of a call, or None when it reported neither input nor output tokens."""
        if usage.input is None and usage.output is None:
            return None
        cache_read, cache_write = usage.cache_read or 0, usage.cache_write or 0
        reasoning = usage.reasoning or 0
        counts = {
            "input": max((usage.input or 0) - cache_read - cache_write, 0),
            "cache_read": cache_read,
            "cache_write": cache_write,
            "output": max((usage.output or 0) - reasoning, 0),
            "reasoning": reasoning,
        }
        total = sum((self.per_million[kind] * n for kind, n in counts.items()), Decimal(0))
        return total / _MILLION


@dataclass(frozen=True)
class PriceTable:
    models: Mapping[str, ModelPrice]

    def price(self, model: str | None) -> ModelPrice | None:
        return self.models.get(model) if model is not None else None


def parse_prices(text: str, *, name: str) -> PriceTable:
    """The table in ``text``; ``name`` (the file's name) says JSON (``.json``) or TOML."""
    is_json = name.endswith(".json")
    try:
        document: Any = json.loads(text) if is_json else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise PriceFileError(f"not valid {'JSON' if is_json else 'TOML'}: {exc}") from exc
    if not isinstance(document, dict):
        raise PriceFileError("expected a table of models at the top level")
    return PriceTable({str(model): _model(str(model), entry) for model, entry in document.items()})


def _model(model: str, entry: Any) -> ModelPrice:
    if not isinstance(entry, dict):
        raise PriceFileError(f"model {model!r}: expected a table of prices per million tokens")
    unknown = set(entry) - {*TOKEN_KINDS, "currency"}
    if unknown:
        raise PriceFileError(
            f"model {model!r}: unknown field(s) {', '.join(sorted(unknown))} "
            f"(expected {', '.join(TOKEN_KINDS)}, currency)"
        )
    currency = entry.get("currency", "USD")
    if not isinstance(currency, str) or not currency.strip():
        raise PriceFileError(f'model {model!r}: currency must be a code such as "USD"')
    prices: dict[str, Decimal] = {}
    for kind in ("input", "output"):
        if kind not in entry:
            raise PriceFileError(f"model {model!r}: no {kind} price")
        prices[kind] = _price(model, kind, entry[kind])
    for kind, default in _OPTIONAL.items():
        prices[kind] = _price(model, kind, entry[kind]) if kind in entry else prices[default]
    return ModelPrice(prices, currency.strip())


def _price(model: str, kind: str, value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise PriceFileError(f"model {model!r}: {kind} price {value!r} is not a number")
    try:
        price = Decimal(str(value))
    except InvalidOperation as exc:
        raise PriceFileError(f"model {model!r}: {kind} price {value!r} is not a number") from exc
    if not price.is_finite() or price < 0:
        raise PriceFileError(f"model {model!r}: {kind} price {value!r} is not a number >= 0")
    return price
