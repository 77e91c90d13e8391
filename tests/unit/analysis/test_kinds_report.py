"""Lint and type defects from the real judge to the tables, the SQL views and the reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from critiquebench.analysis import build_report, connect
from critiquebench.analysis.render._html import html_report
from critiquebench.analysis.render._terminal import summary_table
from critiquebench.judges import PythonJudge, StaticSettings
from critiquebench.loop import LoopDependencies, run_loop
from critiquebench.models import ScriptedProvider
from critiquebench.pipeline import ResultStore, RunConfig, Unit
from critiquebench.pipeline._units import outcome_rows
from tests.helpers import fenced, make_case
from tests.unit.analysis.synthetic_run import write_run

# Correct, but with an unused import (lint F401, line 1) and a bad annotation (types, line 3).
SLOPPY = 'import os\n\nlabel: int = "s"\n\n\ndef add(a, b):\n    return a + b\n'
CLEAN = "def add(a, b):\n    return a + b\n"


def test_per_kind_defects_reach_tables_views_and_reports(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    write_run(output, "kinds", [])  # the runs row; the units below come from the real loop
    config = RunConfig(arms=("A", "B"), run_id="kinds", suite="synthetic")
    judge = PythonJudge(static=StaticSettings(cache_dir=tmp_path / "mypy"))
    store = ResultStore(output)
    case = make_case()
    answers = {"A": [SLOPPY], "B": [SLOPPY, CLEAN]}
    try:
        for arm, replies in answers.items():
            provider = ScriptedProvider([fenced(reply) for reply in replies])
            deps = LoopDependencies(provider=provider, judge=judge)
            unit = Unit(case.id, arm, 0)  # type: ignore[arg-type]
            outcome = run_loop(case, deps, config.loop_settings(unit.arm), rep=0)
            rows = outcome_rows(case, unit, outcome, config, 1.0, "scripted")
            store.write_unit("kinds", unit, rows)
    finally:
        judge.close()

    db = connect(output)
    cases = db.execute(
        "SELECT arm, defects_final, final_lint, final_types, defects_total_final, passed, "
        "tests_passed FROM cases ORDER BY arm"
    ).fetchall()
    # Tests pass in both arms; arm B's fixer saw the findings and removed them. Only B's
    # answer passes: A's has a lint and a type defect.
    assert cases == [("A", 0, 1, 1, 2, False, True), ("B", 0, 0, 0, 0, True, True)]
    found = db.execute(
        "SELECT arm, iteration, kind, file, line, code FROM findings ORDER BY arm, iteration, kind"
    ).fetchall()
    assert found == [
        ("A", 0, "lint", "candidate.py", 1, "F401"),
        ("A", 0, "types", "candidate.py", 3, "assignment"),
        ("B", 0, "lint", "candidate.py", 1, "F401"),
        ("B", 0, "types", "candidate.py", 3, "assignment"),
    ]

    report = build_report(db, "kinds", resamples=200)
    a, b = report.arms
    assert report.defect_groups == ("tests", "lint", "types")
    assert a.mean_defects == 2 and a.defects_by_group == {"tests": 0, "lint": 1, "types": 1}
    assert (a.pass_rate, a.tests_pass_rate, b.pass_rate, b.tests_pass_rate) == (0, 1, 1, 1)
    assert b.defects_initial_by_group == {"tests": 0, "lint": 1, "types": 1}
    assert b.defects_by_group == {"tests": 0, "lint": 0, "types": 0}
    by_kind = db.execute(
        "SELECT arm, judge, defect_group, defects_initial, defects_final FROM defects_by_kind "
        "ORDER BY arm, defect_group"
    ).fetchall()
    assert by_kind == [
        ("A", "python", "lint", 1, 1),
        ("A", "python", "tests", 0, 0),
        ("A", "python", "types", 1, 1),
        ("B", "python", "lint", 1, 0),
        ("B", "python", "tests", 0, 0),
        ("B", "python", "types", 1, 0),
    ]
    assert (b.mean_defects_initial, b.mean_defects) == (2, 0)
    assert b.reduction is not None and b.reduction.estimate == pytest.approx(1.0)

    console = Console(record=True, width=300)
    console.print(summary_table(report))
    text = console.export_text()
    assert "tests/lint/types" in text and "0.00/1.00/1.00" in text
    html = html_report(report)
    assert "tests/lint/types kept" in html and "0.00/1.00/1.00" in html
