"""`critiquebench sql` copies only the tables a query can read (the copy of every table
took most of the command's time); the query's answer is the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench.analysis import query_table, read_only_connection
from critiquebench.analysis.views._views import READABLE_TABLES, tables_read_by
from tests.integration.replay_run import build_replay_run


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sql-tables") / "runs"
    return build_replay_run(folder, "tables", limit=2, reps=1).output


def test_a_query_reads_the_tables_it_names_and_those_under_its_views() -> None:
    assert tables_read_by("SELECT arm, count(*) FROM Cases GROUP BY arm") == ("runs", "cases")
    assert tables_read_by("select * from findings") == ("runs", "attempts")
    assert set(tables_read_by("SELECT * FROM defects_by_kind")) == {"runs", "cases", "attempts"}
    assert set(tables_read_by("SELECT * FROM fix_break")) >= {"cases", "attempts", "calls"}
    assert tables_read_by("SELECT 1 -- transcripts") == ("runs", "transcripts")


def test_tables_not_read_are_there_empty_and_the_rest_in_full(output: Path) -> None:
    with read_only_connection(output, tables=("runs", "cases")) as connection:
        counts = {
            table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()
            for table in READABLE_TABLES
        }
    assert counts["cases"] is not None and counts["cases"][0] > 0
    assert counts["attempts"] == (0,) and counts["calls"] == (0,)


def test_the_answer_is_the_one_every_table_gives(output: Path) -> None:
    query = "SELECT c.arm, count(*) AS n FROM cases c JOIN attempts a USING (run_id) GROUP BY 1"
    with read_only_connection(output) as connection:
        full = connection.execute(query + " ORDER BY 1").fetchall()
    table, _ = query_table(output, query + " ORDER BY 1")
    assert full and table.row_count == len(full)
    assert [str(cell) for cell in table.columns[1].cells] == [str(n) for _, n in full]


def test_an_empty_table_has_the_columns_and_types_of_its_arrow_schema(tmp_path: Path) -> None:
    # The empty tables are made in SQL (no pandas); they must read as the Arrow schema would.
    import duckdb
    import pyarrow as pa

    from critiquebench.analysis.views._views import _empty_source
    from critiquebench.pipeline import arrow_schema

    connection = duckdb.connect()
    for table in READABLE_TABLES:
        connection.register("arrow_empty", pa.Table.from_pylist([], schema=arrow_schema(table)))
        expected = connection.execute("DESCRIBE SELECT * FROM arrow_empty").fetchall()
        made = connection.execute(f"DESCRIBE SELECT * FROM {_empty_source(table)}").fetchall()
        assert made == expected, table
        assert connection.execute(f"SELECT count(*) FROM {_empty_source(table)}").fetchall() == [
            (0,)
        ]
        connection.unregister("arrow_empty")


def test_a_query_of_one_table_loads_no_pandas(output: Path) -> None:
    import subprocess
    import sys

    script = f"""
import sys
from pathlib import Path
from critiquebench.analysis import query_table
query_table(Path({str(output)!r}), "SELECT count(*) FROM cases", max_rows=5)
print("pandas" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
