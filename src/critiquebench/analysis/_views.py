"""DuckDB views over the Parquet tables of every run in an output folder."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from critiquebench.pipeline import TABLES, arrow_schema


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def connect(output: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with views ``runs``, ``cases``, ``attempts``, ``calls``.

    A table with no files yet is an empty view with the right columns, so queries
    never fail just because nothing has been written.
    """
    connection = duckdb.connect()
    for table in TABLES:
        files = sorted(output.glob(f"*/{table}/*.parquet"))
        if files:
            listing = ", ".join(_sql_literal(str(path)) for path in files)
            connection.execute(
                f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listing}], "
                "union_by_name = true)"
            )
        else:
            empty = pa.Table.from_pylist([], schema=arrow_schema(table))
            connection.register(f"_{table}_empty", empty)
            connection.execute(f"CREATE VIEW {table} AS SELECT * FROM _{table}_empty")
    return connection
