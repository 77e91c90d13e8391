from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from critiquebench.analysis.report._cost import (
    CallCost,
    Price,
    PriceFileError,
    PriceTable,
    call_cost,
    cost_per_defect_removed,
    cost_summary,
)
from critiquebench.runtime.project import PACKAGED_PRICES

DEFAULT_PRICES = PACKAGED_PRICES  # the table shipped inside the package


@pytest.fixture
def table() -> PriceTable:
    return PriceTable.from_file(DEFAULT_PRICES)


def test_default_file_prices(table: PriceTable) -> None:
    assert table.price_for("gemini:gemini-2.5-flash") == Price(0.30, 2.50)
    assert table.price_for("gemini:gemini-2.5-pro") == Price(1.25, 10.00)
    assert table.price_for("gemini:gemini-2.5-flash-lite") == Price(0.10, 0.40)


def test_prefix_matching_prefers_the_longest_prefix(table: PriceTable) -> None:
    assert table.price_for("local:smollm2-135m") == Price(0.0, 0.0)
    assert table.price_for("replay:answers.jsonl") == Price(0.0, 0.0)
    # Both gemini-2.5-flash and gemini-2.5-flash-lite are prefixes: the longer wins.
    assert table.price_for("gemini:gemini-2.5-flash-lite-001") == Price(0.10, 0.40)
    assert table.price_for("gemini:gemini-2.5-flash-001") == Price(0.30, 2.50)


def test_unknown_model_is_free_but_flagged(table: PriceTable) -> None:
    assert table.price_for("gpt-oss-20b") == Price(0.0, 0.0, known=False)


def test_call_cost_arithmetic(table: PriceTable) -> None:
    # 1M in at 0.30 + 200k out at 2.50 = 0.30 + 0.50.
    assert call_cost("gemini:gemini-2.5-flash", 1_000_000, 200_000, table) == pytest.approx(0.80)
    assert call_cost("gemini:gemini-2.5-pro", 2_000, 500, table) == pytest.approx(0.0025 + 0.005)
    assert call_cost("local:smollm2", 5_000, 5_000, table) == 0.0
    with pytest.raises(ValueError):
        call_cost("gemini:gemini-2.5-pro", -1, 0, table)


def test_summary_separates_run_cost_from_experiment_cost(table: PriceTable) -> None:
    calls = [
        CallCost.priced("gemini:gemini-2.5-flash", 1_000_000, 200_000, False, table),  # 0.80
        CallCost.priced("gemini:gemini-2.5-flash", 1_000_000, 200_000, True, table),  # 0.80, cached
        CallCost.priced("gemini:gemini-2.5-pro", 100_000, 10_000, False, table),  # 0.225
        CallCost.priced("mystery-model", 9_999, 9_999, False, table),  # unknown: 0
    ]
    summary = cost_summary(calls)
    assert (summary.n_calls, summary.n_cached) == (4, 1)
    assert summary.run_cost == pytest.approx(0.80 + 0.225)
    assert summary.experiment_cost == pytest.approx(0.80 + 0.80 + 0.225)
    assert summary.unknown_models == ("mystery-model",)


def test_empty_summary() -> None:
    summary = cost_summary([])
    assert (summary.n_calls, summary.run_cost, summary.experiment_cost) == (0, 0.0, 0.0)


def test_cost_per_defect_removed() -> None:
    assert cost_per_defect_removed(1.5, 0.5, 4) == pytest.approx(0.25)
    assert cost_per_defect_removed(1.5, 0.5, 0) is None
    assert cost_per_defect_removed(1.5, 0.5, -2) is None


def _write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "prices.json"
    text = document if isinstance(document, str) else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return path


def test_comment_keys_are_ignored_at_both_levels(tmp_path: Path) -> None:
    document = {
        "_comment": "USD per million tokens",
        "models": {
            "_note": "anything",
            "m": {"input_per_million": 1, "output_per_million": 2, "_source": "list price"},
        },
    }
    assert PriceTable.from_file(_write(tmp_path, document)).price_for("m") == Price(1.0, 2.0)


GOOD = {"input_per_million": 1.0, "output_per_million": 2.0}


@pytest.mark.parametrize(
    ("document", "names"),
    [
        ("{not json", ["cannot read"]),
        ([1, 2], ["top level"]),
        ({"modles": {}}, ["'modles'"]),
        ({"_comment": "x"}, ["'models'"]),
        ({"models": []}, ["'models'", "object"]),
        ({"models": {"m": 3}}, ["models['m']", "object"]),
        ({"models": {"m": {"input_per_million": 1.0}}}, ["models['m']", "'output_per_million'"]),
        ({"models": {"m": {**GOOD, "input_per_milion": 1}}}, ["models['m']", "'input_per_milion'"]),
        (
            {"models": {"m": {**GOOD, "output_per_million": "2.5"}}},
            ["'output_per_million'", "'2.5'"],
        ),
        ({"models": {"m": {**GOOD, "input_per_million": -1}}}, ["'input_per_million'", "-1"]),
        ({"models": {"m": {**GOOD, "input_per_million": True}}}, ["'input_per_million'", "True"]),
    ],
)
def test_malformed_file_errors_name_the_file_and_key(
    tmp_path: Path, document: Any, names: list[str]
) -> None:
    path = _write(tmp_path, document)
    with pytest.raises(PriceFileError) as raised:
        PriceTable.from_file(path)
    message = str(raised.value)
    assert str(path) in message
    for name in names:
        assert name in message


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.json"
    with pytest.raises(PriceFileError) as raised:
        PriceTable.from_file(path)
    assert str(path) in str(raised.value)


def test_calls_priced_as_columns_total_exactly_as_priced_one_by_one() -> None:
    import numpy as np

    from critiquebench.analysis.report._cost import CallColumns, summarize_calls

    table = PriceTable({"m:a": Price(0.3, 2.5), "m:b": Price(1.25, 10.0)})
    names = ("m:a", "m:b", "m:unknown")
    rng = np.random.default_rng(7)
    n = 5_000
    models = rng.integers(0, len(names), n)
    tokens_in, tokens_out = rng.integers(0, 90_000, n), rng.integers(0, 9_000, n)
    cached = rng.random(n) < 0.3
    one_by_one = cost_summary(
        [
            CallCost.priced(names[m], int(i), int(o), bool(c), table)
            for m, i, o, c in zip(models, tokens_in, tokens_out, cached, strict=True)
        ]
    )
    columns = CallColumns(names, models, tokens_in, tokens_out, cached)
    # Equal to the last bit: the report's costs do not change with how they are summed.
    assert summarize_calls(columns, table) == one_by_one
    assert one_by_one.unknown_models == ("m:unknown",) and one_by_one.n_cached > 0
    some = np.arange(n) % 3 == 0
    picked = [index for index in range(n) if some[index]]
    assert summarize_calls(columns.take(some), table) == cost_summary(
        [
            CallCost.priced(names[models[k]], int(tokens_in[k]), int(tokens_out[k]),
                            bool(cached[k]), table)
            for k in picked
        ]
    )  # fmt: skip
    with pytest.raises(ValueError, match="non-negative"):
        summarize_calls(CallColumns(names, models[:1], -tokens_in[:1], tokens_out[:1],
                                    cached[:1]), table)  # fmt: skip
