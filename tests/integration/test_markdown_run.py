"""``critiquebench run --suite markdown`` end to end on the simulated model: the
markdown judge's defects reach the attempts and cases tables under their own kind."""

from __future__ import annotations

from pathlib import Path

from critiquebench.analysis import connect
from tests.integration.conftest import SuiteRun


def test_a_markdown_run_counts_markdown_defects_per_attempt_and_case(
    tmp_path: Path, run_suite_cli: SuiteRun
) -> None:
    output = tmp_path / "runs"
    run_suite_cli("markdown", "sim:suite=markdown,draft=0.9", arms="A,B", limit=4, run_id="md-1")
    db = connect(output)
    judges = db.execute("SELECT DISTINCT judge FROM cases").fetchall()
    assert judges == [("markdown",)]
    # Every defect of a markdown case is a markdown defect: none leaks into the test kinds.
    attempts = db.execute(
        "SELECT sum(defects_markdown), sum(defects), sum(defects_assertion + defects_syntax)"
        " FROM attempts"
    ).fetchone()
    assert attempts is not None and attempts[0] > 0 and attempts[0] == attempts[1]
    assert attempts[2] == 0
    finals = dict(db.execute("SELECT arm, sum(final_markdown) FROM cases GROUP BY arm").fetchall())
    initial = dict(
        db.execute("SELECT arm, sum(defects_initial) FROM cases GROUP BY arm").fetchall()
    )
    assert finals["A"] == initial["A"] > 0  # one draft: what it had, it keeps
    assert finals["B"] < finals["A"]  # the fed-back loop fixes some of them
    failures = db.execute(
        "SELECT failures FROM attempts WHERE defects_markdown > 0 LIMIT 1"
    ).fetchone()
    assert failures is not None and "missing_section" in str(failures[0])
