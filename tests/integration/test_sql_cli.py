"""``critiquebench sql``: ad-hoc queries over a real (replayed) run, and the session help."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from critiquebench.analysis import connect
from critiquebench.cli import app
from tests.integration.replay_run import build_replay_run

runner = CliRunner()


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sql") / "runs"
    build_replay_run(folder, "sql-1", limit=3, reps=1)
    return folder


def test_query_prints_a_table(output: Path) -> None:
    query = "SELECT arm, count(*) AS units FROM cases GROUP BY arm ORDER BY arm"
    result = runner.invoke(app, ["sql", query, "--output", str(output)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "│" in line]
    assert [line.split("│")[1:3] for line in lines] == [[" A   ", "     3 "], [" B   ", "     3 "]]
    assert "2 row(s)" in result.output


def test_rows_past_the_limit_are_left_out_and_said_so(output: Path) -> None:
    result = runner.invoke(
        app, ["sql", "SELECT * FROM calls", "--output", str(output), "--max-rows", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "first 2 rows shown" in result.output


def test_a_bad_query_is_a_clear_error(output: Path) -> None:
    result = runner.invoke(app, ["sql", "SELECT nope FROM cases", "--output", str(output)])
    assert result.exit_code == 2
    assert "query failed" in result.output and "nope" in result.output


def test_without_a_query_it_explains_both_interactive_ways_in(output: Path) -> None:
    result = runner.invoke(app, ["sql", "--output", str(output)])
    assert result.exit_code == 0, result.output
    statements = [line for line in result.output.splitlines() if line.startswith("CREATE VIEW")]
    # runs, cases, attempts, calls, transcripts, findings, defects_by_kind,
    # trigger_decisions, fix_break, canaries and critic_accuracy
    assert len(statements) == 11
    # The statements work as printed in a fresh DuckDB, as they would in its CLI.
    db = duckdb.connect()
    for statement in statements:
        db.execute(statement)
    count = "SELECT count(*) FROM attempts WHERE run_id = 'sql-1'"
    assert db.execute(count).fetchone() == connect(output).execute(count).fetchone() == (9,)
    for view in ("findings", "defects_by_kind", "trigger_decisions"):
        query = f"SELECT count(*) FROM {view} WHERE run_id = 'sql-1'"
        assert db.execute(query).fetchone() == connect(output).execute(query).fetchone()

    # The Python one-liner loads the same views (run here without -i).
    line = next(line for line in result.output.splitlines() if " -i -c " in line)
    python, _, _, setup = shlex.split(line)
    check = f"{setup}; print(db.execute('SELECT count(*) FROM cases').fetchone())"
    done = subprocess.run([python, "-c", check], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(6,)"


def test_tables_without_files_become_comments(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sql", "--output", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.count("-- no ") == 5  # the four tables and transcripts
    assert "CREATE VIEW" not in result.output
