"""Comparing a query's rows with a check's expected rows, in the trusted parent.

The matching rule (docs/suites.md, "sql"):

1. Rows are compared as a multiset: each expected row is paired with an equal
   actual row (numbers within the check's tolerance, ``1 == 1.0``; text, booleans
   and NULLs exactly; a row's width counts).
2. Of the rows left over, an expected row and an actual row with the same first
   column (the key) are one ``wrong_value``; when exactly one row is left on each
   side, they are one ``wrong_value`` too (a one-row answer with a wrong number).
3. Every expected row still left is a ``missing_row``; every actual row still
   left is an ``extra_row``.
4. An ``ordered`` check whose rows match as a multiset but not in order has one
   ``wrong_value``: the first position where they differ.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from critiquebench.judges._plain import clean_text

DEFAULT_TOLERANCE = 1e-6
"""Numbers equal within this (absolute or relative) difference are equal."""


@dataclass(frozen=True)
class RowDifference:
    """One difference between the expected and the actual rows."""

    code: str
    """``missing_row``, ``extra_row`` or ``wrong_value``."""
    message: str
    expected: str | None = None
    actual: str | None = None


def same_value(expected: Any, actual: Any, tolerance: float) -> bool:
    """Whether one actual cell matches one expected cell."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        if math.isnan(expected) and math.isnan(actual):
            return True
        return math.isclose(expected, actual, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(expected, list) and isinstance(actual, list):
        return same_row(expected, actual, tolerance)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            same_value(expected[key], actual[key], tolerance) for key in expected
        )
    return type(expected) is type(actual) and bool(expected == actual)


def same_row(expected: list[Any], actual: list[Any], tolerance: float) -> bool:
    """Whether two rows have the same width and matching cells."""
    return len(expected) == len(actual) and all(
        same_value(e, a, tolerance) for e, a in zip(expected, actual, strict=True)
    )


def show_row(row: list[Any]) -> str:
    """A row as the suite writes it (JSON), bounded."""
    return clean_text(json.dumps(row, default=repr, ensure_ascii=False), 300)


def compare_rows(
    expected: list[list[Any]],
    actual: list[list[Any]],
    columns: list[str],
    *,
    ordered: bool = False,
    tolerance: float = DEFAULT_TOLERANCE,
) -> list[RowDifference]:
    """Every difference between ``actual`` and ``expected`` under the matching rule."""
    missing, extra = _unmatched(expected, actual, tolerance)
    differences = _paired(missing, extra, columns, tolerance)
    differences += [
        RowDifference("missing_row", "this expected row is not in the result", show_row(row))
        for row in missing
    ]
    differences += [
        RowDifference("extra_row", "this row of the result is not expected", None, show_row(row))
        for row in extra
    ]
    if not differences and ordered:
        differences = _order(expected, actual, tolerance)
    return differences


def _unmatched(
    expected: list[list[Any]], actual: list[list[Any]], tolerance: float
) -> tuple[list[list[Any]], list[list[Any]]]:
    """The expected rows without an equal actual row, and the actual rows left over."""
    left = list(actual)
    missing: list[list[Any]] = []
    for row in expected:
        index = next((i for i, other in enumerate(left) if same_row(row, other, tolerance)), None)
        if index is None:
            missing.append(row)
        else:
            del left[index]
    return missing, left


def _paired(
    missing: list[list[Any]], extra: list[list[Any]], columns: list[str], tolerance: float
) -> list[RowDifference]:
    """Wrong values: left-over rows paired by key, taken out of ``missing``/``extra``."""
    pairs: list[tuple[list[Any], list[Any]]] = []
    for row in list(missing):
        match = next(
            (other for other in extra if row and other and same_value(row[0], other[0], tolerance)),
            None,
        )
        if match is not None:
            pairs.append((row, match))
            missing.remove(row)
            extra.remove(match)
    if len(missing) == 1 and len(extra) == 1:
        pairs.append((missing.pop(), extra.pop()))
    return [_wrong_value(row, other, columns, tolerance) for row, other in pairs]


def _wrong_value(
    expected: list[Any], actual: list[Any], columns: list[str], tolerance: float
) -> RowDifference:
    if len(expected) != len(actual):
        message = f"the row has {len(actual)} column(s); {len(expected)} expected"
    else:
        wrong = [
            _column_name(index, columns)
            for index, (e, a) in enumerate(zip(expected, actual, strict=True))
            if not same_value(e, a, tolerance)
        ]
        message = "wrong value in column(s) " + ", ".join(wrong)
    return RowDifference("wrong_value", message, show_row(expected), show_row(actual))


def _column_name(index: int, columns: list[str]) -> str:
    name = columns[index] if index < len(columns) else ""
    return f"{index + 1} ({name})" if name else str(index + 1)


def _order(
    expected: list[list[Any]], actual: list[list[Any]], tolerance: float
) -> list[RowDifference]:
    for position, (row, other) in enumerate(zip(expected, actual, strict=True), start=1):
        if not same_row(row, other, tolerance):
            message = f"the rows are right but in the wrong order (first at row {position})"
            return [RowDifference("wrong_value", message, show_row(row), show_row(other))]
    return []
