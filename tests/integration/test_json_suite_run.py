"""`critiquebench run --suite json` end to end on the simulated model: the json judge's
defects reach the attempts and cases tables under their own kind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from critiquebench.analysis import connect

pytestmark = pytest.mark.slow

_CLI = str(Path(sys.executable).with_name("critiquebench"))


def test_a_json_run_counts_json_defects_per_attempt_and_case(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    done = subprocess.run(
        [_CLI, "run", "--suite", "json", "--model", "sim:suite=json,draft=0.9,fix=0.9",
         "--arms", "A,B", "--limit", "4", "--no-cache", "--output", str(output),
         "--run-id", "json-sim"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "json-sim" in done.stdout
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
