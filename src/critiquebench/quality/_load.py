"""One run's tables as pandas frames for the checks, plus the columns that need another table."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from critiquebench.analysis import connect
from critiquebench.pipeline import TABLES, Root

Frame = Any
"""A pandas DataFrame (pandas ships no type information)."""

_UNIT = "USING (run_id, case_id, arm, rep)"
_UNITS = f"(SELECT DISTINCT run_id, case_id, arm, rep, TRUE AS present FROM cases) u {_UNIT}"
_PER_UNIT = "GROUP BY run_id, case_id, arm, rep"
DERIVED_SQL = {
    "runs": "SELECT * FROM runs ORDER BY invocation_started_at",
    "cases": f"""
        SELECT c.*, c.tokens_in + c.tokens_out AS tokens_total,
            coalesce(k.call_rows, 0) AS call_rows, coalesce(k.metered, 0) > 0 AS tokens_expected,
            coalesce(a.attempt_rows, 0) AS attempt_rows
        FROM cases c
        LEFT JOIN (SELECT run_id, case_id, arm, rep, count(*) AS call_rows,
                count(*) FILTER (NOT coalesce(cached, FALSE) AND error IS NULL
                    AND NOT starts_with(model, 'replay:')) AS metered
            FROM calls {_PER_UNIT}) k {_UNIT}
        LEFT JOIN (SELECT run_id, case_id, arm, rep, count(*) AS attempt_rows
            FROM attempts {_PER_UNIT}) a {_UNIT}
        ORDER BY run_id, case_id, arm, rep""",
    "attempts": f"""
        SELECT t.*, t.iteration = row_number() OVER (
                PARTITION BY run_id, case_id, arm, rep ORDER BY t.iteration) - 1
            AS iteration_contiguous,
            u.present IS NULL AS orphan
        FROM attempts t LEFT JOIN {_UNITS}
        ORDER BY run_id, case_id, arm, rep, t.iteration""",
    "calls": f"""
        SELECT t.*, u.present IS NULL AS orphan
        FROM calls t LEFT JOIN {_UNITS}
        ORDER BY run_id, case_id, arm, rep, t.call_index""",
}
"""Each table of the run, plus the columns its suite needs from other tables."""


def derived_tables(tables: duckdb.DuckDBPyConnection) -> tuple[dict[str, pa.Table], int | None]:
    """Each table of a run's open tables with its derived columns (Arrow), and the run's
    retry limit: all the quality check reads."""
    derived = {table: tables.sql(DERIVED_SQL[table]).to_arrow_table() for table in TABLES}
    row = tables.execute("SELECT max(retry_limit) FROM runs").fetchone()
    return derived, None if row is None or row[0] is None else int(row[0])


def load_tables(
    output: Root, run_id: str, tables: duckdb.DuckDBPyConnection | None = None
) -> tuple[dict[str, Frame], int | None]:
    """The run's four tables with derived columns, and its retry limit (read-only).

    ``tables`` is the run's tables already open (``connect(..., snapshot=True)``, as
    the flow shares one scan between this check and the report); without it only
    this run's files are read.
    """
    derived, retry_limit = derived_tables(tables or connect(output, [run_id], snapshot=True))
    # Through Arrow: DuckDB's own .df() trips a pandas 3 deprecation warning.
    return {table: data.to_pandas() for table, data in derived.items()}, retry_limit
