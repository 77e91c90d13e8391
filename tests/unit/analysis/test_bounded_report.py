"""Bounded counts end to end: the tables keep the raw count, the report counts the units
whose count the per-kind bound lowered, and a run without such a unit renders as before."""

from __future__ import annotations

import json
from pathlib import Path

from critiquebench.analysis import build_report, connect
from critiquebench.analysis.render._html import html_report
from critiquebench.analysis.render._terminal import verdict_lines
from critiquebench.analysis.report._report_types import RunReport
from critiquebench.judges import COUNT_BOUND, PythonJudge, StaticSettings
from critiquebench.loop import LoopDependencies, run_loop
from critiquebench.models import ScriptedProvider
from critiquebench.pipeline import ResultStore, RunConfig, Unit
from critiquebench.pipeline._units import outcome_rows
from tests.helpers import fenced, make_case
from tests.unit.analysis.synthetic_run import FakeUnit, write_run

# Correct, with one line pattern repeated 3,000 times: 3,000 unused imports (F401).
FLOOD = "import os\n" * 3000 + "\n\ndef add(a, b):\n    return a + b\n"


def test_a_flood_of_lint_findings_counts_the_bound_and_keeps_the_raw_count(
    tmp_path: Path,
) -> None:
    output = tmp_path / "runs"
    write_run(output, "flood", [])  # the runs row; the unit comes from the real loop and judge
    config = RunConfig(arms=("A",), run_id="flood", suite="synthetic")
    judge = PythonJudge(static=StaticSettings(cache_dir=tmp_path / "mypy"))
    case = make_case()
    try:
        deps = LoopDependencies(provider=ScriptedProvider([fenced(FLOOD)]), judge=judge)
        unit = Unit(case.id, "A", 0)
        outcome = run_loop(case, deps, config.loop_settings("A"), rep=0)
        ResultStore(output).write_unit(
            "flood", unit, outcome_rows(case, unit, outcome, config, 1.0, "m")
        )
    finally:
        judge.close()

    db = connect(output)
    cases = db.execute(
        "SELECT final_lint, defects_total_final, defects_total_final_raw, final_raw_by_kind, "
        "defects_total_initial_raw, passed, tests_passed FROM cases"
    ).fetchall()
    raw = cases[0][2]
    assert raw >= 3000  # every unused import, whatever else ruff adds
    # Its tests pass; with lint defects it does not pass.
    assert cases == [(COUNT_BOUND, COUNT_BOUND, raw, json.dumps({"lint": raw}), raw, False, True)]
    attempts = db.execute(
        "SELECT defects_lint, defects_total, defects_total_raw, defects_raw_by_kind FROM attempts"
    ).fetchall()
    assert attempts == [(COUNT_BOUND, COUNT_BOUND, raw, json.dumps({"lint": raw}))]
    (findings,) = db.execute("SELECT count(*) FROM findings WHERE kind = 'lint'").fetchone() or (0,)
    assert findings == raw  # every finding is still listed

    report = build_report(db, "flood", resamples=50)
    (arm,) = report.arms
    assert arm.mean_defects == COUNT_BOUND and arm.units_bounded == 1
    assert arm.defects_by_group["lint"] == COUNT_BOUND


def _units(raw: bool) -> list[FakeUnit]:
    """A's c1 has 30 defects before the bound (20 after) when ``raw``; otherwise as old."""
    extra = {"raw": (30,)} if raw else {}
    return [
        FakeUnit("c1", "A", defects=(COUNT_BOUND,), **extra),  # type: ignore[arg-type]
        FakeUnit("c1", "B", defects=(2, 0)),
        FakeUnit("c2", "A", defects=(1,)),
        FakeUnit("c2", "B", defects=(1, 1)),
    ]


def test_a_unit_at_the_bound_is_reported_per_arm(tmp_path: Path) -> None:
    write_run(tmp_path, "bounded", _units(raw=True))
    report = build_report(connect(tmp_path), "bounded", resamples=50)
    assert {a.arm: a.units_bounded for a in report.arms} == {"A": 1, "B": 0}
    assert report.arms[0].mean_defects == (COUNT_BOUND + 1) / 2  # the bounded count
    line = "Bounded counts: 1 unit(s) had a defect count lowered to the per-kind bound"
    assert any(text.startswith(line) and "A 1, B 0" in text for text in verdict_lines(report))
    assert line in html_report(report)
    again = RunReport.from_json(report.to_json())
    assert again.arms[0].units_bounded == 1 and again.bounded_text == report.bounded_text


def test_a_run_without_a_bounded_unit_renders_as_before(tmp_path: Path) -> None:
    # The same numbers with raw counts equal to the bounded ones, and without raw
    # columns at all (a run written before the bound): the same terminal lines and page.
    equal = [FakeUnit(u.case_id, u.arm, defects=u.defects, raw=u.defects) for u in _units(False)]
    write_run(tmp_path / "new", "same", equal)
    write_run(tmp_path / "old", "same", _units(raw=False))
    new = build_report(connect(tmp_path / "new"), "same", resamples=50)
    old = build_report(connect(tmp_path / "old"), "same", resamples=50)
    assert new.units_bounded == 0 and new.bounded_text is None
    assert verdict_lines(new) == verdict_lines(old)
    assert html_report(new) == html_report(old)
    assert not any("Bounded" in line for line in verdict_lines(new))
