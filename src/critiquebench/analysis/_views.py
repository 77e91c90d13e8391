"""DuckDB views over the Parquet tables of every run in an output folder."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa

from critiquebench.pipeline import TABLES, arrow_schema


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_DUCKDB_TYPES = {
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
    pa.string(): "VARCHAR",
}


def _with_missing_columns(connection: duckdb.DuckDBPyConnection, table: str, source: str) -> str:
    """``source`` plus typed NULL columns for what files of an older schema lack.

    Runs written before a column existed (say ``defects_total_final``, schema v3)
    still answer every query; the column reads as NULL for them.
    """
    present = {row[0] for row in connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    missing = [
        f"CAST(NULL AS {_DUCKDB_TYPES.get(c.type, 'VARCHAR')}) AS {c.name}"
        for c in TABLES[table]
        if c.name not in present and c.type in _DUCKDB_TYPES
    ]
    if not missing:
        return source
    return f"(SELECT *, {', '.join(missing)} FROM {source})"


_FINDING = '[{"file": "VARCHAR", "line": "INTEGER", "code": "VARCHAR", "message": "VARCHAR"}]'
FINDINGS_VIEW = " UNION ALL ".join(
    f"""SELECT run_id, case_id, arm, rep, iteration, '{kind}' AS kind,
       f.file, f.line, f.code, f.message
FROM attempts,
     unnest(from_json(coalesce(nullif({kind}_findings, ''), '[]'), '{_FINDING}')) AS t(f)"""
    for kind in ("lint", "types")
)
"""One row per lint or type finding of every attempt (the view ``findings``)."""


def _define(
    connection: duckdb.DuckDBPyConnection,
    output: Path,
    kind: Literal["VIEW", "TABLE"],
) -> None:
    """Create ``runs``, ``cases``, ``attempts``, ``calls`` as views (or copied tables),
    and the view ``findings`` (one row per lint or type finding).

    A table with no files yet gets the right columns and no rows, so queries never
    fail just because nothing has been written.
    """
    for table in TABLES:
        files = sorted(output.glob(f"*/{table}/*.parquet"))
        if files:
            listing = ", ".join(_sql_literal(str(path)) for path in files)
            source = _with_missing_columns(
                connection, table, f"read_parquet([{listing}], union_by_name = true)"
            )
        else:
            empty = pa.Table.from_pylist([], schema=arrow_schema(table))
            connection.register(f"_{table}_empty", empty)
            source = f"_{table}_empty"
        connection.execute(f"CREATE {kind} {table} AS SELECT * FROM {source}")
        if not files and kind == "TABLE":
            # The copy holds the columns; the registered Arrow table is no longer needed.
            connection.unregister(f"_{table}_empty")
    connection.execute(f"CREATE VIEW findings AS {FINDINGS_VIEW}")


def connect(output: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with views ``runs``, ``cases``, ``attempts``, ``calls``.

    The connection is unrestricted (the report and the interactive session use it);
    for queries typed by a user, use :func:`read_only_connection`.
    """
    connection = duckdb.connect()
    _define(connection, output, "VIEW")
    return connection


@contextmanager
def read_only_connection(output: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB holding a copy of the tables of ``output`` that a query cannot escape.

    The tables are copied into a private database file that is then reopened
    read-only, so ``DROP``/``CREATE``/``INSERT`` fail. External access is then
    switched off and the configuration locked, so ``COPY ... TO``, ``ATTACH``,
    ``read_csv``, ``INSTALL``/``LOAD`` and URLs fail too. The data is copied rather
    than left as views because DuckDB checks file access when a view is read, and
    allowing the run's Parquet files (``allowed_paths``) would also let a query
    overwrite them.
    """
    with tempfile.TemporaryDirectory(prefix="critiquebench-sql-") as folder:
        path = Path(folder) / "results.duckdb"
        writer = duckdb.connect(str(path))
        try:
            _define(writer, output, "TABLE")
        finally:
            writer.close()
        connection = duckdb.connect(str(path), read_only=True)
        try:
            connection.execute("SET enable_external_access = false")
            connection.execute("SET lock_configuration = true")
            yield connection
        finally:
            connection.close()
