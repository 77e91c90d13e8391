"""`critiquebench run --suite trigger` end to end on the simulated model: the decisions,
their defects by kind and the labels a report needs all land in the tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow

_CLI = str(Path(sys.executable).with_name("critiquebench"))


def test_a_trigger_run_stores_decisions_defects_and_labels(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    done = subprocess.run(
        [_CLI, "run", "--suite", "trigger", "--model", "sim:suite=trigger,draft=0.5",
         "--arms", "A,B,C", "--limit", "8", "--no-cache", "--output", str(output),
         "--run-id", "trig"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    cases = duckdb.sql(
        f"SELECT arm, case_id, judge, judge_data, final_artifact, final_trigger, defects_final "
        f"FROM read_parquet('{output}/trig/cases/*.parquet')"
    ).fetchall()
    assert len(cases) == 8 * 3
    wrong = 0
    for arm, case_id, judge, data, artifact, final_trigger, defects in cases:
        labels = json.loads(data)
        assert judge == "trigger" and case_id.startswith(f"trigger/{labels['skill']}/")
        assert labels["expect"] in ("trigger", "near_miss", "clear_miss")
        right = "trigger" if labels["expect"] == "trigger" else "no_trigger"
        assert artifact in ("trigger", "no_trigger")
        # The known answer: a defect exactly where the decision differs from the label.
        assert final_trigger == defects == int(artifact != right), (arm, case_id)
        wrong += final_trigger
    assert 0 < wrong < len(cases)  # the simulated router is partly right
    attempts = duckdb.sql(
        f"SELECT arm, sum(defects_trigger), sum(defects) "
        f"FROM read_parquet('{output}/trig/attempts/*.parquet') WHERE iteration = 0 GROUP BY arm"
    ).fetchall()
    by_arm = {arm: (trigger, total) for arm, trigger, total in attempts}
    assert set(by_arm) == {"A", "B", "C"}
    assert all(trigger == total for trigger, total in by_arm.values())
    # Paired first drafts: every arm starts from the same decisions.
    assert len({trigger for trigger, _ in by_arm.values()}) == 1
