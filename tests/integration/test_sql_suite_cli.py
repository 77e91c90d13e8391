"""`critiquebench run --suite sql` on the simulated model, through the CLI.

The sim answers with the case's reference query or a wrong but valid query; the real
sql judge counts the wrong ones' defects, which land in the attempts and cases tables
as ``defects_sql`` / ``final_sql``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.integration.conftest import SuiteRun


def test_a_sim_run_of_the_sql_suite_counts_sql_defects(
    tmp_path: Path, run_suite_cli: SuiteRun
) -> None:
    run_suite_cli("sql", "sim:suite=sql,draft=0.9,fix=0.9", arms="A,B", limit=4, run_id="sql-1")
    run = tmp_path / "runs" / "sql-1"
    attempts = duckdb.sql(
        "SELECT arm, iteration, defects, defects_sql, defects_error + defects_assertion, "
        f"judge_infrastructure_error FROM read_parquet('{run}/attempts/*.parquet')"
    ).fetchall()
    cases = duckdb.sql(
        f"SELECT arm, judge, final_sql, defects_total_final, passed "
        f"FROM read_parquet('{run}/cases/*.parquet')"
    ).fetchall()
    assert len(cases) == 8
    assert {judge for _, judge, *_ in cases} == {"sql"}
    assert all(row[-1] is None for row in attempts), "no judge infrastructure error"
    # Every defect of a sql case is a sql defect, and the sim's wrong drafts have some.
    assert all(defects == sql for _, _, defects, sql, _, _ in attempts)
    assert sum(sql for _, _, _, sql, _, _ in attempts) > 0
    assert all(python == 0 for *_, python, _ in attempts)  # no Python test kinds
    # Arm B is shown its feedback defects and fixes (fix=0.9): it ends with fewer.
    final = {arm: sum(row[2] for row in cases if row[0] == arm) for arm in ("A", "B")}
    assert final["A"] > 0
    assert final["B"] < final["A"]
    assert all(row[2] == 0 for row in cases if row[4])
