"""`critiquebench run --suite json` end to end on the simulated model: the json judge's
defects reach the attempts and cases tables under their own kind."""

from __future__ import annotations

from pathlib import Path

from critiquebench.analysis import connect
from tests.integration.conftest import SuiteRun


def test_a_json_run_counts_json_defects_per_attempt_and_case(
    tmp_path: Path, run_suite_cli: SuiteRun
) -> None:
    output = tmp_path / "runs"
    shown = run_suite_cli(
        "json", "sim:suite=json,draft=0.9,fix=0.9", arms="A,B", limit=4, run_id="json-sim"
    )
    assert "json-sim" in shown
    db = connect(output, ["json-sim"])
    attempts = "SELECT sum(defects), sum(defects_json), count(*) FROM attempts"
    defects, json_defects, rows = db.execute(attempts).fetchone() or (0, 0, 0)
    assert rows > 8 and json_defects == defects > 0  # fix rounds ran; every defect is json
    query = "SELECT arm, judge, defects_initial, defects_final, final_json FROM cases"
    cases = db.execute(query + " ORDER BY case_id, arm").fetchall()
    assert len(cases) == 8 and {row[1] for row in cases} == {"json"}
    assert all(final_json == final for _, _, _, final, final_json in cases)
    initial = {arm: sum(row[2] for row in cases if row[0] == arm) for arm in "AB"}
    final = {arm: sum(row[4] for row in cases if row[0] == arm) for arm in "AB"}
    assert initial["A"] == initial["B"] > 0  # the same first drafts in both arms
    assert final["B"] < final["A"]  # the fixer, fed the json defects, removed some
