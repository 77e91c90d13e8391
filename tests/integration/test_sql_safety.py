"""``critiquebench sql`` shows values literally and cannot write, read other files or go online."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from tests.integration.replay_run import build_replay_run

runner = CliRunner()


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sql-safety") / "runs"
    build_replay_run(folder, "safe-1", limit=2, reps=1)
    return folder


def _sql(output: Path, query: str) -> tuple[int, str]:
    result = runner.invoke(app, ["sql", query, "--output", str(output)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "value",
    ["result[i][i] = 1", "list[list[int]]", "postgres:x:101", "a [/] b", "[bold]loud[/bold]"],
)
def test_cells_and_headers_are_printed_literally(output: Path, value: str) -> None:
    quoted = value.replace("'", "''")
    code, printed = _sql(output, f"SELECT '{quoted}' AS \"{value}\" FROM runs")
    assert code == 0, printed
    # Once as the header, once as the one cell.
    assert printed.count(value) == 2, printed
    assert "1 row(s)" in printed


def test_duckdb_messages_keep_their_brackets(output: Path) -> None:
    code, printed = _sql(output, 'SELECT "[retry_limit]" FROM cases')
    assert code == 2
    assert '"[retry_limit]" not found' in printed
    assert "Traceback" not in printed


@pytest.mark.parametrize(
    "statement",
    [
        "COPY (SELECT * FROM cases) TO '{target}'",
        "COPY cases TO '{target}' (FORMAT parquet, USE_TMP_FILE false)",
        "ATTACH '{target}' AS evil",
        "EXPORT DATABASE '{target}'",
    ],
)
def test_nothing_is_written(output: Path, tmp_path: Path, statement: str) -> None:
    target = tmp_path / "written"
    code, printed = _sql(output, statement.format(target=target))
    assert code == 2, printed
    assert printed.startswith("error: query failed:") and "read-only" in printed
    assert len(printed.strip().splitlines()) == 1, printed
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_the_runs_own_parquet_files_cannot_be_overwritten(output: Path) -> None:
    victim = next(output.glob("*/cases/*.parquet"))
    before = victim.read_bytes()
    code, _ = _sql(output, f"COPY (SELECT 1 AS x) TO '{victim}' (FORMAT parquet)")
    assert code == 2
    assert victim.read_bytes() == before


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM read_csv('{secret}')",
        "SELECT * FROM '{secret}'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SELECT * FROM read_parquet('https://example.invalid/x.parquet')",
        "SET enable_external_access = true",
    ],
)
def test_other_files_and_the_network_are_out_of_reach(
    output: Path, tmp_path: Path, statement: str
) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n")
    code, printed = _sql(output, statement.format(secret=secret))
    assert code == 2, printed
    assert "hunter2" not in printed
    assert len(printed.strip().splitlines()) == 1, printed


@pytest.mark.parametrize(
    "statement",
    [
        "DROP VIEW cases",
        "DROP TABLE cases",
        "CREATE TABLE t (a INTEGER)",
        "CREATE OR REPLACE VIEW cases AS SELECT 1 AS x",
        "DELETE FROM cases",
        "CREATE TEMP VIEW cases AS SELECT 1 AS fake; SELECT * FROM cases",
    ],
)
def test_the_tables_cannot_be_dropped_or_replaced(output: Path, statement: str) -> None:
    code, printed = _sql(output, statement)
    assert code == 2, printed
    assert len(printed.strip().splitlines()) == 1, printed
    code, printed = _sql(output, "SELECT count(*) AS n FROM cases")
    assert code == 0, printed
    cells = [line.split("│")[1].strip() for line in printed.splitlines() if "│" in line]
    assert cells == ["4"]  # the header row uses heavy bars


def test_ordinary_queries_still_work(output: Path) -> None:
    join = (
        "SELECT c.arm, count(*) AS attempts, max(r.run_id) AS run "
        "FROM cases c JOIN attempts a USING (run_id, case_id, arm, rep) "
        "JOIN runs r USING (run_id) "
        "GROUP BY c.arm ORDER BY c.arm"
    )
    code, printed = _sql(output, join)
    assert code == 0, printed
    assert "safe-1" in printed and "2 row(s)" in printed
    code, printed = _sql(output, "DESCRIBE cases")
    assert code == 0 and "arm" in printed, printed
    code, printed = _sql(output, "SELECT count(*) AS n FROM calls WHERE NOT EXISTS (SELECT 1)")
    assert code == 0 and "1 row(s)" in printed, printed
