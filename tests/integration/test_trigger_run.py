"""`critiquebench run --suite trigger` end to end on the simulated model: the decisions,
their defects by kind and the labels a report needs all land in the tables."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from tests.integration.conftest import SuiteRun


def test_a_trigger_run_stores_decisions_defects_and_labels(
    tmp_path: Path, run_suite_cli: SuiteRun
) -> None:
    output = tmp_path / "runs"
    run_suite_cli("trigger", "sim:suite=trigger,draft=0.5", arms="A,B,C", limit=8, run_id="trig")
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
