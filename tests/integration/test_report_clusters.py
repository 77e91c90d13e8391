"""The report resamples cases, and leaves infrastructure failures out of the pairs."""

from __future__ import annotations

from pathlib import Path

from critiquebench.analysis import (
    SelftestSettings,
    build_report,
    connect,
    render_html_report,
    run_experiment,
)
from critiquebench.pipeline import Unit
from tests.helpers import set_case_columns


def _mark_failed(output: Path, run_id: str, unit: Unit) -> None:
    set_case_columns(output / run_id, unit, error="provider failed")


def test_reps_are_clustered_and_failed_units_are_no_pairs(tmp_path: Path) -> None:
    settings = SelftestSettings(reps=2, cases=12, resamples=500)
    run_experiment(settings, seed=4, output=tmp_path)
    run_id = "selftest-4"
    arm_b = next(a for a in build_report(connect(tmp_path), run_id).arms if a.arm == "B")
    assert arm_b.reduction is not None and arm_b.mcnemar is not None
    assert (arm_b.reduction.n_cases, arm_b.reduction.n_pairs) == (12, 24)
    assert arm_b.mcnemar.n_cases == 12

    first, second = "basic/001_add_two", "basic/002_max_of_two"
    _mark_failed(tmp_path, run_id, Unit(first, "A", 0))  # one pair of a case goes
    _mark_failed(tmp_path, run_id, Unit(second, "B", 0))  # a whole case goes
    _mark_failed(tmp_path, run_id, Unit(second, "B", 1))
    arm_b = next(a for a in build_report(connect(tmp_path), run_id).arms if a.arm == "B")
    assert arm_b.reduction is not None
    assert (arm_b.reduction.n_cases, arm_b.reduction.n_pairs) == (11, 21)

    page = render_html_report(tmp_path, run_id).read_text(encoding="utf-8")
    assert "11 cases, 21 pairs" in page
    assert "resamples cases" in page
