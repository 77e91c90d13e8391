"""Defects per group (tests, lint, types, sql, ...): the view, report.json and the tables.

Each run is written row by row with known counts, so every mean is a hand count.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from critiquebench.analysis import (
    artifact_rows,
    build_report,
    connect,
    html_report,
    report_markdown,
)
from critiquebench.analysis.render._terminal import _cells, headers, summary_table
from tests.unit.analysis.synthetic_run import FakeUnit, write_run


def _unit(case: str, arm: str, judge: str, *counts: dict[str, int]) -> FakeUnit:
    return FakeUnit(case_id=case, arm=arm, judge=judge, kind_counts=counts,
                    defects=tuple(sum(c.values()) for c in counts))  # fmt: skip


# Two python cases, two sql cases, one json case (clean throughout).
MIXED = [
    _unit("py1", "A", "python", {"assertion": 1, "lint": 2}),
    _unit("py2", "A", "python", {"types": 1}),
    _unit("sq1", "A", "sql", {"sql": 3}),
    _unit("sq2", "A", "sql", {"sql": 0}),
    _unit("js1", "A", "json", {"json": 0}),
    _unit("py1", "B", "python", {"assertion": 1, "lint": 2}, {"lint": 1}),
    _unit("py2", "B", "python", {"types": 1}, {}),
    _unit("sq1", "B", "sql", {"sql": 3}, {"sql": 1}),
    _unit("sq2", "B", "sql", {"sql": 0}),
    _unit("js1", "B", "json", {"json": 0}),
]


def test_the_view_has_a_row_per_unit_and_group_its_judge_reports(tmp_path: Path) -> None:
    write_run(tmp_path, "mixed", MIXED)
    rows = (
        connect(tmp_path)
        .execute(
            "SELECT case_id, judge, defect_group, defects_initial, defects_final "
            "FROM defects_by_kind WHERE arm = 'B' ORDER BY case_id, defect_group"
        )
        .fetchall()
    )
    assert rows == [
        ("js1", "json", "json", 0, 0),
        ("py1", "python", "lint", 2, 1),
        ("py1", "python", "tests", 1, 0),
        ("py1", "python", "types", 0, 0),
        ("py2", "python", "lint", 0, 0),
        ("py2", "python", "tests", 0, 0),
        ("py2", "python", "types", 1, 0),
        ("sq1", "sql", "sql", 3, 1),
        ("sq2", "sql", "sql", 0, 0),
    ]


def test_report_means_per_group_add_up_to_the_mean_defects(tmp_path: Path) -> None:
    write_run(tmp_path, "mixed", MIXED)
    report = build_report(connect(tmp_path), "mixed", resamples=100)
    assert report.defect_groups == ("tests", "lint", "types", "sql", "json")
    a, b = report.arms
    # Over 5 units: A kept tests 1, lint 2, types 1, sql 3; B kept lint 1, sql 1.
    assert a.defects_by_group == pytest.approx(
        {"tests": 0.2, "lint": 0.4, "types": 0.2, "sql": 0.6, "json": 0.0}
    )
    assert b.defects_by_group == pytest.approx(
        {"tests": 0.0, "lint": 0.2, "types": 0.0, "sql": 0.2, "json": 0.0}
    )
    assert b.defects_initial_by_group == a.defects_by_group
    b_row = artifact_rows(report)[1]
    assert (b_row["defects_lint"], b_row["defects_sql"], b_row["defects_json"]) == (0.2, 0.2, 0)
    for arm in report.arms:
        assert sum(arm.defects_by_group.values()) == pytest.approx(arm.mean_defects)
        assert sum(arm.defects_initial_by_group.values()) == pytest.approx(arm.mean_defects_initial)


@pytest.mark.parametrize("width", [80, 120, 250])
def test_the_terminal_names_every_group_and_fits(tmp_path: Path, width: int) -> None:
    write_run(tmp_path, "mixed", MIXED)
    report = build_report(connect(tmp_path), "mixed", resamples=100)
    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(summary_table(report))
    text = console.export_text()
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    assert " tests/lint/types/sql/json " in text
    lines = text.splitlines()
    for arm in report.arms:
        row = [line for line in lines if line.startswith(f"│ {arm.arm} ")]
        for value in _cells(arm, report.defect_groups)[1:]:
            assert any(f" {value} " in line for line in row), (value, text)
    assert " 0.00/0.20/0.00/0.20/0.00 " in text  # B, whole, on one line
    assert "trigger decisions" not in text


def test_a_sql_run_shows_sql_only(tmp_path: Path) -> None:
    write_run(tmp_path, "sql", [u for u in MIXED if u.judge == "sql"])
    report = build_report(connect(tmp_path), "sql", resamples=100)
    assert report.defect_groups == ("sql",)
    assert headers(report)[4] == "sql"
    assert "| sql |" in report_markdown(report)
    page = html_report(report)
    assert "<th>sql kept</th>" in page and "tests/lint/types" not in page
    # B: 3 sql defects in the first drafts, 1 kept, over 2 units; sql is all there is.
    b_row = r"<tr><td>B</td><td>2</td><td>2</td><td>1.50</td><td>0.50</td><td>[^<]*</td>"
    assert re.search(b_row + "<td>0.50</td>", page), page


def test_a_judge_a_package_registers_reports_tests(tmp_path: Path) -> None:
    units = [_unit("h1", "A", "haiku", {"assertion": 2}), _unit("h2", "A", "", {"assertion": 0})]
    write_run(tmp_path, "haiku", units)
    db = connect(tmp_path)
    rows = db.execute(
        "SELECT case_id, judge, defect_group, defects_final FROM defects_by_kind ORDER BY ALL"
    ).fetchall()
    # A run written before judges were recorded (no judge) is a python run.
    assert rows == [
        ("h1", "haiku", "tests", 2),
        ("h2", "python", "lint", 0),
        ("h2", "python", "tests", 0),
        ("h2", "python", "types", 0),
    ]
    assert build_report(db, "haiku", resamples=50).defect_groups == ("tests", "lint", "types")


def test_compare_shows_each_group_and_a_dash_where_a_run_does_not_measure_it(
    tmp_path: Path,
) -> None:
    from critiquebench.analysis import comparison_table

    write_run(tmp_path, "mixed", MIXED)
    write_run(tmp_path, "python", [u for u in MIXED if u.judge == "python"])
    db = connect(tmp_path)
    mixed, python = (build_report(db, run, resamples=50) for run in ("mixed", "python"))
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(comparison_table(mixed, python))
    rows = {
        tuple(cell.strip() for cell in line.split("│")[1:-1])
        for line in console.file.getvalue().splitlines()  # type: ignore[attr-defined]
        if line.startswith("│")
    }
    # Hand counts: arm A keeps tests 1, lint 2, types 1, sql 3 over 5 units (mixed)
    # and tests 1, lint 2, types 1 over 2 units (python); arm B keeps lint 1, sql 1.
    assert {
        ("A", "tests", "0.20", "0.50"), ("A", "lint", "0.40", "1.00"),
        ("A", "types", "0.20", "0.50"), ("A", "sql", "0.60", "-"), ("A", "json", "0.00", "-"),
        ("B", "lint", "0.20", "0.50"), ("B", "sql", "0.20", "-"),
    } <= rows  # fmt: skip
