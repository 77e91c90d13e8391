"""The sql judge's matching rule on rows whose right answer is known (no DuckDB)."""

from __future__ import annotations

from typing import Any

from critiquebench.judges.sql._compare import compare_rows, same_value


def _codes(expected: list[list[Any]], actual: list[list[Any]], **options: Any) -> list[str]:
    return [d.code for d in compare_rows(expected, actual, ["a", "b"], **options)]


def test_rows_are_a_multiset_duplicates_count() -> None:
    assert _codes([["x", 1], ["x", 1]], [["x", 1], ["x", 1]]) == []
    assert _codes([["x", 1], ["x", 1]], [["x", 1]]) == ["missing_row"]
    assert _codes([["x", 1]], [["x", 1], ["x", 1]]) == ["extra_row"]


def test_a_left_over_row_with_the_same_key_is_a_wrong_value() -> None:
    found = compare_rows([["x", 1], ["y", 2]], [["y", 3], ["x", 1]], ["name", "n"])
    assert [(d.code, d.message) for d in found] == [
        ("wrong_value", "wrong value in column(s) 2 (n)")
    ]
    assert (found[0].expected, found[0].actual) == ('["y", 2]', '["y", 3]')


def test_rows_without_a_shared_key_are_missing_and_extra() -> None:
    assert _codes([["x", 1], ["y", 2]], [["z", 1], ["w", 2]]) == [
        "missing_row",
        "missing_row",
        "extra_row",
        "extra_row",
    ]
    # One row left on each side is paired even without a shared key.
    assert _codes([[3]], [[4]]) == ["wrong_value"]


def test_an_empty_expected_result_makes_every_row_extra() -> None:
    assert _codes([], [[1], [2]]) == ["extra_row", "extra_row"]
    assert _codes([], []) == []


def test_order_counts_only_for_ordered_checks() -> None:
    assert _codes([[1], [2]], [[2], [1]]) == []
    found = compare_rows([[1], [2]], [[2], [1]], ["a"], ordered=True)
    assert [(d.code, d.expected, d.actual) for d in found] == [("wrong_value", "[1]", "[2]")]


def test_cells_match_by_kind_numbers_within_tolerance() -> None:
    assert same_value(1, 1.0, 1e-6)
    assert same_value(0.1 + 0.2, 0.3, 1e-6)
    assert not same_value(0.3, 0.31, 1e-6)
    assert same_value(0.3, 0.31, 0.02)
    assert not same_value(True, 1, 1e-6)
    assert not same_value(None, "", 1e-6)
    assert not same_value("1", 1, 1e-6)
    assert same_value(None, None, 1e-6)
    assert same_value([1, "a"], [1.0, "a"], 1e-6)
    assert same_value({"k": 1}, {"k": 1.0}, 1e-6)
    assert not same_value({"k": 1}, {"j": 1}, 1e-6)


def test_a_row_of_the_wrong_width_never_matches() -> None:
    found = compare_rows([["x", 1]], [["x", 1, 0]], ["a", "b", "c"])
    assert [(d.code, d.message) for d in found] == [
        ("wrong_value", "the row has 3 column(s); 2 expected")
    ]
