"""A snapshot of a run's files: the same rows as the views, copied cheaply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from critiquebench.analysis import connect
from critiquebench.analysis.views._views import define_tables, table_files
from critiquebench.pipeline import SCHEMA_VERSION, TABLES, ResultStore
from tests.unit.analysis.synthetic_run import FakeUnit, write_run

UNITS = [
    FakeUnit(f"c{i}", arm, 0, (2, 0) if arm == "B" else (1,)) for i in range(4) for arm in "AB"
]


def _run(output: Path, schema_version: int) -> None:
    write_run(output, "r", UNITS)
    store = ResultStore(output)
    (row,) = store.run_rows("r")
    store.write_run_row("r", "start-1", {**row, "schema_version": schema_version})


def _rows(db: duckdb.DuckDBPyConnection, table: str) -> list[tuple[Any, ...]]:
    return db.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()


class Recording:
    """A DuckDB connection that records the statements it is given."""

    def __init__(self) -> None:
        self.db = duckdb.connect()
        self.statements: list[str] = []

    def execute(self, sql: str, *args: Any) -> duckdb.DuckDBPyConnection:
        self.statements.append(sql)
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def test_a_snapshot_copies_on_one_thread_and_reads_one_schema_once(tmp_path: Path) -> None:
    _run(tmp_path, SCHEMA_VERSION)
    recording = Recording()
    threads = recording.db.execute("SELECT current_setting('threads')").fetchone()
    define_tables(recording, table_files(tmp_path, ["r"]), "TABLE")  # type: ignore[arg-type]
    copies = [s for s in recording.statements if s.startswith("CREATE OR REPLACE TABLE")]
    assert recording.statements[1] == "SET threads = 1" and len(copies) == len(TABLES)
    # Every start wrote this version's files: only the runs table unites schemas by name.
    assert ["union_by_name = True" in s for s in copies] == [True, False, False, False]
    assert recording.db.execute("SELECT current_setting('threads')").fetchone() == threads
    views = connect(tmp_path, ["r"])
    for table in TABLES:
        assert _rows(recording.db, table) == _rows(views, table)


def test_files_of_another_schema_are_united_by_name(tmp_path: Path) -> None:
    _run(tmp_path, SCHEMA_VERSION - 1)  # an older start: its files may lack columns
    cases = tmp_path / "r" / "cases"
    last = sorted(cases.glob("*.parquet"))[-1]
    pq.write_table(pq.read_table(last).drop_columns(["final_artifact"]), last)
    snapshot = connect(tmp_path, ["r"], snapshot=True)
    assert _rows(snapshot, "cases") == _rows(connect(tmp_path, ["r"]), "cases")
    nulls = snapshot.execute("SELECT count(*) FROM cases WHERE final_artifact IS NULL").fetchone()
    assert nulls == (1,)


def test_a_file_that_contradicts_its_runs_row_is_still_read_by_name(tmp_path: Path) -> None:
    # The runs row says every file has this version's columns; one (not the first) lacks
    # one. The fast copy refuses it, and the copy falls back to uniting by name.
    _run(tmp_path, SCHEMA_VERSION)
    cases = tmp_path / "r" / "cases"
    last = sorted(cases.glob("*.parquet"))[-1]
    pq.write_table(pq.read_table(last).drop_columns(["final_artifact"]), last)
    snapshot = connect(tmp_path, ["r"], snapshot=True)
    assert _rows(snapshot, "cases") == _rows(connect(tmp_path, ["r"]), "cases")
    assert snapshot.execute("SELECT count(*) FROM cases").fetchone() == (len(UNITS),)
