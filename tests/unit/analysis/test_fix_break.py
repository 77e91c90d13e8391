"""Fix and break rates per round, on a run whose every round is known by hand."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from critiquebench.analysis import build_report, connect, html_report, verdict_lines, views_sql
from critiquebench.analysis.report._report_types import RunReport
from critiquebench.analysis.views._fix_break import FixBreakRound
from tests.unit.analysis.synthetic_run import Call, FakeUnit, write_run


def _calls(attempts: int) -> tuple[Call, ...]:
    return tuple(Call(i, 10, 5) for i in range(attempts))


def _unit(case: str, arm: str, defects: tuple[int, ...], **extra: object) -> FakeUnit:
    return FakeUnit(case, arm, 0, defects, calls=_calls(len(defects)), **extra)  # type: ignore[arg-type]


# Every arm on the same four cases, as in a run (the report compares arms over the
# cases all of them measured).
UNITS = [
    *(_unit(f"k{i}", "A", (2,)) for i in range(1, 5)),
    # B, round 1: three failing inputs, two fixed; round 2: one failing input, not fixed.
    _unit("k1", "B", (2, 0)),
    _unit("k2", "B", (3, 3, 1)),
    _unit("k3", "B", (1, 0)),
    # An infrastructure failure is in no statistic, its rounds neither.
    _unit("k4", "B", (3, 0), error="provider: fixer call failed: 503"),
    # C, round 1: inputs k1 and k2 pass (k1 broken), k3 and k4 fail (both fixed);
    # round 2: k1 fails (fixed), k3 passes (broken).
    _unit("k1", "C", (0, 2, 0)),
    _unit("k2", "C", (0, 0)),
    _unit("k3", "C", (1, 0, 1)),
    # One lint finding and no failed test: failing, since a pass has no defect of any kind.
    _unit("k4", "C", (1, 0), kinds=("lint",), kind_counts=({"lint": 1}, {})),
    # Fresh drafts of the resampling arm are no fix rounds.
    _unit("k1", "R", (2, 1, 0), roles=("actor", "actor", "actor"), halt="visible_clean"),
    *(
        _unit(f"k{i}", "R", (1, 1), roles=("actor", "actor"), halt="draw_limit")
        for i in range(2, 5)
    ),
]

EXPECTED = (
    FixBreakRound(arm="B", round=1, failing=3, fixed=2, passing=0, broken=0),
    FixBreakRound(arm="B", round=2, failing=1, fixed=0, passing=0, broken=0),
    FixBreakRound(arm="C", round=1, failing=2, fixed=2, passing=2, broken=1),
    FixBreakRound(arm="C", round=2, failing=1, fixed=1, passing=1, broken=1),
)


@pytest.fixture
def report(tmp_path: Path) -> RunReport:
    write_run(tmp_path, "fb", UNITS)
    return build_report(connect(tmp_path), "fb", resamples=200)


def test_each_rounds_fixed_and_broken_counts_match_hand_counts(report: RunReport) -> None:
    assert report.fix_break == EXPECTED
    c1 = report.fix_break[2]
    assert (c1.fix_rate, c1.break_rate) == (1.0, 0.5)
    assert report.fix_break[0].break_rate is None  # no passing input: no rate, not 0%


def test_the_view_gives_the_same_counts_for_sql(tmp_path: Path) -> None:
    write_run(tmp_path, "fb", UNITS)
    rows = (
        connect(tmp_path)
        .execute(
            "SELECT arm, round, failing, fixed, passing, broken, fix_rate, break_rate "
            "FROM fix_break WHERE run_id = 'fb' ORDER BY arm, round"
        )
        .fetchall()
    )
    assert rows == [
        ("B", 1, 3, 2, 0, 0, pytest.approx(2 / 3), None),
        ("B", 2, 1, 0, 0, 0, 0.0, None),
        ("C", 1, 2, 2, 2, 1, 1.0, 0.5),
        ("C", 2, 1, 1, 1, 1, 1.0, 1.0),
    ]
    assert "CREATE VIEW fix_break AS" in views_sql(tmp_path)


def test_the_terminal_and_the_page_show_the_rates_with_counts(report: RunReport) -> None:
    lines = "\n".join(verdict_lines(report))
    assert "r1 fixed 2/2 (100%) broke 1/2 (50%), r2 fixed 1/1 (100%) broke 1/1 (100%)" in lines
    assert "r1 fixed 2/3 (67%) broke 0/0, r2 fixed 0/1 (0%) broke 0/0" in lines
    page = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_report(report))).split())
    assert "failing answers fixed passing answers broken" in page
    rounds_c = page.split("Arm C round")[1].split("Arm C: recommended")[0]
    assert "2/2 (100%) 1/2 (50%)" in rounds_c and "1/1 (100%) 1/1 (100%)" in rounds_c


def test_the_report_reads_back_with_its_rounds(report: RunReport) -> None:
    assert RunReport.from_json(report.to_json()).fix_break == EXPECTED
