"""Estimated cost of model calls from a configurable price table (USD per million tokens)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_FIELDS = ("input_per_million", "output_per_million")


class PriceFileError(ValueError):
    """A price file that cannot be read; the message names the file and the key."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens; ``known`` is False for a model missing from the table."""

    input_per_million: float
    output_per_million: float
    known: bool = True


_UNKNOWN = Price(0.0, 0.0, known=False)


class PriceTable:
    """Prices by model name or name prefix (``local:`` covers ``local:smollm2``)."""

    def __init__(self, prices: Mapping[str, Price], source: str = "<memory>") -> None:
        self._prices = dict(prices)
        self.source = source

    @classmethod
    def from_file(cls, path: Path) -> PriceTable:
        """Load ``{"models": {name: {"input_per_million": x, "output_per_million": y}}}``.

        Keys starting with ``_`` are comments and ignored at both levels.
        """
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise PriceFileError(f"{path}: cannot read price file: {error}") from error
        return cls.from_text(text, str(path))

    @classmethod
    def from_text(cls, text: str, source: str) -> PriceTable:
        """The table in ``text`` (the format of ``from_file``); ``source`` names it in
        errors, e.g. the run that stored it."""
        try:
            document = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            raise PriceFileError(f"{source}: cannot read price file: {error}") from error
        top = _object(document, source, "the top level")
        # Strict about everything but comments: a misspelt key would silently price at 0.
        unknown = sorted(key for key in top if key != "models" and not key.startswith("_"))
        if unknown:
            raise PriceFileError(f"{source}: unknown top-level key {unknown[0]!r}")
        if "models" not in top:
            raise PriceFileError(f"{source}: missing key 'models'")
        entries = _object(top["models"], source, "'models'")
        prices = {
            name: _price(entry, source, name)
            for name, entry in entries.items()
            if not name.startswith("_")
        }
        return cls(prices, source=source)

    def price_for(self, model: str) -> Price:
        """Exact match, else the longest matching prefix, else a zero price marked unknown."""
        if model in self._prices:
            return self._prices[model]
        matches = [name for name in self._prices if model.startswith(name)]
        return self._prices[max(matches, key=len)] if matches else _UNKNOWN


def _object(value: Any, source: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PriceFileError(f"{source}: {where} must be a JSON object")
    return value


def _price(entry: Any, source: str, name: str) -> Price:
    where = f"models[{name!r}]"
    fields = _object(entry, source, where)
    extra = sorted(key for key in fields if key not in _FIELDS and not key.startswith("_"))
    if extra:
        raise PriceFileError(f"{source}: {where} has unknown key {extra[0]!r}")
    values: list[float] = []
    for field in _FIELDS:
        if field not in fields:
            raise PriceFileError(f"{source}: {where} is missing {field!r}")
        value = fields[field]
        # bool is an int in Python, and true/false as a price is surely a mistake.
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise PriceFileError(
                f"{source}: {where}[{field!r}] must be a non-negative number, got {value!r}"
            )
        values.append(float(value))
    return Price(values[0], values[1])


def call_cost(model: str, tokens_in: int, tokens_out: int, table: PriceTable) -> float:
    """USD of one call at the table's prices (0 for a model the table does not know)."""
    if tokens_in < 0 or tokens_out < 0:
        raise ValueError(f"token counts must be non-negative, got {tokens_in}, {tokens_out}")
    price = table.price_for(model)
    return (tokens_in * price.input_per_million + tokens_out * price.output_per_million) / 1e6


@dataclass(frozen=True)
class CallCost:
    """One priced model call; build it with :meth:`priced`."""

    model: str
    cost: float
    cached: bool
    known: bool

    @classmethod
    def priced(
        cls, model: str, tokens_in: int, tokens_out: int, cached: bool, table: PriceTable
    ) -> CallCost:
        """Price a row of the ``calls`` table."""
        cost = call_cost(model, tokens_in, tokens_out, table)
        return cls(model, cost, cached, table.price_for(model).known)


@dataclass(frozen=True)
class CostSummary:
    """``run_cost`` is what this run paid (calls not served from the cache);
    ``experiment_cost`` is what the experiment costs from scratch (every call).
    ``unknown_models`` were priced at 0, so both costs are then lower bounds.
    """

    n_calls: int
    n_cached: int
    run_cost: float
    experiment_cost: float
    unknown_models: tuple[str, ...]


def cost_summary(calls: Sequence[CallCost]) -> CostSummary:
    """Total the priced calls of a run (or of one arm)."""
    costs = np.fromiter((call.cost for call in calls), dtype=np.float64, count=len(calls))
    cached = np.fromiter((call.cached for call in calls), dtype=bool, count=len(calls))
    return _summary(costs, cached, {call.model for call in calls if not call.known})


def _summary(costs: np.ndarray, cached: np.ndarray, unknown: set[str]) -> CostSummary:
    return CostSummary(
        n_calls=len(costs),
        n_cached=int(cached.sum()),
        run_cost=float(costs[~cached].sum()),
        experiment_cost=float(costs.sum()),
        unknown_models=tuple(sorted(unknown)),
    )


@dataclass(frozen=True)
class CallColumns:
    """Calls as columns, one entry per call: what ``summarize_calls`` prices."""

    model_names: tuple[str, ...]
    """The distinct models."""
    models: np.ndarray
    """Each call's model, as its index in ``model_names``."""
    tokens_in: np.ndarray
    tokens_out: np.ndarray
    cached: np.ndarray
    """Whether the call was a cache hit (``bool``)."""

    def take(self, rows: np.ndarray) -> CallColumns:
        """The calls at the positions (or the mask) ``rows``."""
        return CallColumns(
            self.model_names,
            self.models[rows],
            self.tokens_in[rows],
            self.tokens_out[rows],
            self.cached[rows],
        )


def summarize_calls(calls: CallColumns, table: PriceTable) -> CostSummary:
    """The same totals as ``cost_summary`` of the calls priced one by one (each call's
    cost is the same float, and the sums run over the same array), priced a model at
    a time: a run's calls stay a few numbers each instead of an object apiece (a
    100,000-unit run has some 300,000 calls)."""
    if (calls.tokens_in < 0).any() or (calls.tokens_out < 0).any():
        raise ValueError("token counts must be non-negative")
    costs = np.zeros(len(calls.models), dtype=np.float64)
    unknown: set[str] = set()
    for index in np.unique(calls.models).tolist():
        model = calls.model_names[index]
        price = table.price_for(model)
        mine = calls.models == index
        # call_cost's operations, call by call: each int made a float, then * + /.
        costs[mine] = (
            calls.tokens_in[mine].astype(np.float64) * price.input_per_million
            + calls.tokens_out[mine].astype(np.float64) * price.output_per_million
        ) / 1e6
        if not price.known:
            unknown.add(model)
    return _summary(costs, calls.cached, unknown)


def cost_per_defect_removed(cost_x: float, cost_a: float, defects_removed: float) -> float | None:
    """Extra cost of arm X over the baseline per defect it removed.

    Pass costs and defects on the same scale (both totals, or both per unit).
    None when X removed no defects: the ratio would be infinite or meaningless.
    """
    if defects_removed <= 0:
        return None
    return (cost_x - cost_a) / defects_removed


def load_prices(path: Path) -> PriceTable | None:
    """The price table at ``path``, or None when there is none (costs then show as 0)."""
    return PriceTable.from_file(path) if path.exists() else None


@dataclass(frozen=True)
class StoredPrices:
    """The price table a run recorded when it started; ``table`` is None when it had none
    (its costs were 0 then, and stay 0 wherever it is reported)."""

    table: PriceTable | None


def stored_prices(row: Mapping[str, Any]) -> StoredPrices | None:
    """The price table a ``runs`` row recorded (``prices_json``), or None for a row
    written before runs recorded it (schema version 5), which only named its file.

    Reports price a run with this rather than with whatever file its path names in
    the folder they are made from, so every report of a run gives the same costs.
    """
    if not row.get("content_json"):
        return None
    text = row.get("prices_json")
    if text is None:
        return StoredPrices(None)
    content = json.loads(str(row["content_json"]))
    read_from = content.get("prices", {}).get("path", "its price file")
    source = f"{read_from} as stored with run {row.get('run_id')}"
    return StoredPrices(PriceTable.from_text(str(text), source))
