"""Adding an arm is one declaration: a toy arm, declared here, runs like the built-in ones.

The whole "diff" of the toy arm is ``TOY`` below: it is named in ``--arms`` by reference
(``T=tests.unit.loop.test_toy_arm:TOY``) and is judged, stored, checked and reported with no
other change to the package.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from critiquebench.analysis import write_reports
from critiquebench.loop import ArmSpec
from critiquebench.quality import check_run
from tests.helpers import run_sim_matrix

TOY = ArmSpec(
    name="T",
    description="toy: failing tests reach the fixer, run errors do not",
    feedback=frozenset({"tests"}),
)


def test_a_toy_arm_is_judged_stored_checked_and_reported(tmp_path: Path) -> None:
    config = run_sim_matrix(tmp_path, f"T={__name__}:TOY")
    run_dir = config.output / config.run_id
    db = duckdb.connect()
    cases = db.execute(
        f"SELECT arm, count(*), sum(loops), max(halt_reason) FILTER (arm = 'A') "
        f"FROM '{run_dir}/cases/*.parquet' GROUP BY arm ORDER BY arm"
    ).fetchall()
    assert [row[:2] for row in cases] == [("A", 4), ("T", 4)]
    assert cases[1][2] > 0  # the toy arm fixed: its fix edge exists
    roles = db.execute(
        f"SELECT DISTINCT role FROM '{run_dir}/calls/*.parquet' WHERE arm = 'T' ORDER BY role"
    ).fetchall()
    assert roles == [("actor",), ("fixer",)]
    runs_arms = db.execute(f"SELECT DISTINCT arms FROM '{run_dir}/runs/*.parquet'").fetchall()
    assert runs_arms == [("A,T",)]

    quality = check_run(config.output, config.run_id)
    assert quality.passed, quality.markdown()
    described = [o.description for o in quality.results if o.description]
    assert "arm T calls only its roles" in described  # the spec's own expectations ran

    files = write_reports(config.output, config.run_id)
    report = files.report
    toy = next(arm for arm in report.arms if arm.arm == "T")
    assert toy.n == 4 and toy.reduction is not None
    assert toy.description == TOY.description  # the report reads the arm's declaration
    assert "T" in (run_dir / "report.html").read_text()
