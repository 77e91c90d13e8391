"""The ab-matrix flow under a real (temporary) Prefect API, writing real Parquet."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from critiquebench.analysis import arm_summaries, connect, read_report
from critiquebench.pipeline import RunConfig, Unit
from tests.helpers import drop_unit, hollow_then_fixed_replay, written_identities
from tests.integration.lazy_flow import run_ab_matrix

pytestmark = pytest.mark.usefixtures("prefect_harness")


@pytest.fixture(scope="module")
def flow_run(
    prefect_harness: None, tmp_path_factory: pytest.TempPathFactory
) -> tuple[RunConfig, dict[str, object]]:
    """One 6-unit flow run (3 cases x arms A, B), shared: the tests only read it or copy it."""
    folder = tmp_path_factory.mktemp("flow")
    replay = hollow_then_fixed_replay(folder, limit=3)
    config = RunConfig(
        suite="basic", limit=3, model=f"replay:{replay}", output=folder / "runs", run_id="flow-1"
    )
    return config, run_ab_matrix(config)


def test_flow_writes_four_tables_that_duckdb_reads_back(
    flow_run: tuple[RunConfig, dict[str, object]],
) -> None:
    config, result = flow_run
    output = config.output
    assert result["run_id"] == "flow-1"
    db = connect(output)
    assert db.execute("SELECT count(*) FROM cases").fetchone() == (6,)
    halts = dict(
        db.execute("SELECT arm, list(DISTINCT halt_reason) FROM cases GROUP BY arm").fetchall()
    )
    assert halts == {"A": ["single_draft"], "B": ["visible_clean"]}
    per_arm = dict(db.execute("SELECT arm, count(*) FROM attempts GROUP BY arm").fetchall())
    assert per_arm == {"A": 3, "B": 6}
    assert db.execute("SELECT count(*), bool_and(NOT cached) FROM calls").fetchone() == (9, True)
    run = db.execute("SELECT status, units_planned, arms, feedback FROM runs").fetchone()
    assert run == ("completed", 6, "A,B", "visible")
    summaries = {s.arm: s for s in arm_summaries(db, "flow-1")}
    assert summaries["B"].mean_defects == 0 and summaries["A"].mean_defects > 0
    assert summaries["B"].reduction_vs_a == pytest.approx(1.0)
    # The flow's report task wrote the report once, as report.json beside the tables.
    written = read_report(output, "flow-1")
    assert [(s.arm, s.n, s.mean_defects) for s in written.arms] == [
        (s.arm, s.n, s.mean_defects) for s in summaries.values()
    ]
    assert (output / "flow-1" / "report.html").is_file()


def test_rerun_with_the_same_run_id_resumes_without_duplicates(
    flow_run: tuple[RunConfig, dict[str, object]], tmp_path: Path
) -> None:
    finished, _ = flow_run
    output = tmp_path / "runs"  # a copy: the shared run stays as the flow left it
    shutil.copytree(finished.output / "flow-1", output / "flow-1")
    config = finished.model_copy(update={"output": output})
    lost = sorted(written_identities(output / "flow-1"))[0]
    drop_unit(output / "flow-1", Unit(*lost))  # as if its batch never landed
    run_ab_matrix(config)
    db = connect(output)
    assert db.execute(
        "SELECT count(*), count(DISTINCT (case_id, arm, rep)) FROM cases"
    ).fetchone() == (6, 6)
    runs = db.execute("SELECT units_skipped FROM runs ORDER BY invocation_started_at").fetchall()
    assert runs == [(0,), (5,)]
