"""Each loop against arm R cut at the loop's tokens on the same unit, counted by hand."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from rich.console import Console

from critiquebench.analysis import (
    RunReport,
    build_report,
    comparison_table,
    connect,
    html_report,
    report_figures,
    verdict_lines,
)
from tests.unit.analysis.synthetic_run import Call, FakeUnit, write_run


def _draft() -> Call:
    return Call(0, 10, 10)  # 20 tokens: the first draft of every arm


def _loop(case: str, defects: tuple[int, ...]) -> FakeUnit:
    rounds = tuple(Call(i, 20, 20) for i in range(1, len(defects)))  # 40 tokens a round
    return FakeUnit(case, "B", 0, defects, calls=(_draft(), *rounds))


def _resample(case: str, defects: tuple[int, ...], halt: str) -> FakeUnit:
    draws = tuple(Call(i, 10, 10) for i in range(len(defects)))  # 20 tokens a draw
    return FakeUnit(case, "R", 0, defects, calls=draws, roles=("actor",) * len(defects), halt=halt)


UNITS = [
    FakeUnit("k1", "A", 0, (3,), calls=(_draft(),)),
    FakeUnit("k2", "A", 0, (2,), calls=(_draft(),)),
    FakeUnit("k3", "A", 0, (4,), calls=(_draft(),)),
    FakeUnit("k4", "A", 0, (1,), calls=(_draft(),)),
    # B spends 60, 100, 60 and 140 tokens and keeps 0, 2, 1 and 0 defects.
    _loop("k1", (3, 0)),
    _loop("k2", (2, 2, 2)),
    _loop("k3", (4, 1)),
    _loop("k4", (1, 1, 1, 0)),
    # R within B's tokens: k1 all three draws (0 kept); k2 both, clean at 40 (0);
    # k3 three of four (4); k4 both draws, 40 < 140 tokens and no clean one: short (1).
    _resample("k1", (3, 3, 0), "visible_clean"),
    _resample("k2", (2, 0), "visible_clean"),
    _resample("k3", (4, 4, 4, 4), "draw_limit"),
    _resample("k4", (1, 1), "draw_limit"),
]


@pytest.fixture
def report(tmp_path: Path) -> RunReport:
    write_run(tmp_path, "vs", UNITS)
    return build_report(connect(tmp_path), "vs", resamples=500)


def test_each_loop_is_cut_against_r_at_its_own_tokens_unit_by_unit(report: RunReport) -> None:
    against = {c.arm: c for c in report.against_resample}
    assert set(against) == {"A", "B"}
    b = against["B"]
    # R at B's tokens keeps 0 + 0 + 4 + 1 = 5 defects, B 0 + 2 + 1 + 0 = 3.
    assert (b.mean_defects_resample, b.mean_defects) == (5 / 4, 3 / 4)
    assert b.reduction.estimate == pytest.approx(0.4)
    assert b.reduction.low is not None and b.reduction.high is not None
    assert (b.n_pairs, b.n_cases, b.short) == (4, 4, 1)
    assert (b.pass_rate.mean, b.pass_rate_resample.mean) == (0.5, 0.5)
    assert (b.mean_tokens, b.mean_tokens_resample) == (90.0, 50.0)
    # At A's tokens R has its first draft only, which is A's: no difference.
    assert against["A"].reduction.estimate == 0.0
    assert RunReport.from_json(report.to_json()).against_resample == report.against_resample


def test_the_terminal_and_the_page_say_what_r_reaches_at_the_loops_tokens(
    report: RunReport,
) -> None:
    lines = verdict_lines(report)
    said = [line for line in lines if "vs R at" in line or "R reaches" in line]
    assert said[0].startswith("arm B vs R at B's tokens: defect reduction 40% [")
    assert said[0].endswith("over 4 pairs (4 cases)")
    assert said[1].startswith("  at the tokens B spends (90 per unit), R reaches pass rate 50%")
    assert "1 pair(s) where R ran out first" in said[1]
    assert not any(line.startswith("arm A vs R") for line in lines)
    page = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_report(report))).split())
    assert "arm B vs R at B's tokens: defect reduction 40% [" in page


def test_no_r_in_the_run_means_no_comparison(tmp_path: Path) -> None:
    write_run(tmp_path, "plain", [u for u in UNITS if u.arm != "R"])
    report = build_report(connect(tmp_path), "plain", resamples=200)
    assert report.against_resample == ()
    assert not any("vs R at" in line for line in verdict_lines(report))


def test_cost_curves_put_every_arms_rounds_on_one_token_axis_with_intervals(
    report: RunReport,
) -> None:
    points = {(p.arm, p.round): p for p in report.cost_curve}
    # B after each round (a unit that stopped keeps its answer and its spend).
    b = [(points["B", r].mean_tokens, points["B", r].mean_defects.mean,
          points["B", r].pass_rate.mean) for r in range(4)]  # fmt: skip
    assert b == [(20.0, 2.5, 0.0), (60.0, 1.0, 0.25), (80.0, 1.0, 0.25), (90.0, 0.75, 0.5)]
    # R after each fresh draft, on the same axis.
    r = [(points["R", k].mean_tokens, points["R", k].pass_rate.mean) for k in range(4)]
    assert r == [(20.0, 0.0), (40.0, 0.25), (50.0, 0.5), (55.0, 0.5)]
    assert points["A", 0].mean_tokens == 20.0 and ("A", 1) not in points
    for point in report.cost_curve:
        for estimate in (point.pass_rate, point.mean_defects):
            assert estimate.low is not None and estimate.high is not None
            assert estimate.mean is not None and estimate.low <= estimate.mean <= estimate.high
    figure = next(f for f in report_figures(report) if f.name == "cost_curve")
    values = figure.spec["data"]["values"]
    assert {(v["arm"], v["measure"]) for v in values} >= {("B", "pass rate"), ("R", "mean defects")}
    assert "pass rate vs tokens (95% CI): r0 0% [" in "\n".join(verdict_lines(report))
    assert RunReport.from_json(report.to_json()).cost_curve == report.cost_curve


def test_compare_gives_each_loops_reduction_against_r_beside_the_one_against_a(
    report: RunReport,
) -> None:
    console = Console(width=200, record=True)
    console.print(comparison_table(report, report))
    text = console.export_text()
    row = next(line for line in text.splitlines() if "reduction vs R" in line and "B" in line)
    assert row.count("40% [") == 2
    assert any("reduction vs A" in line for line in text.splitlines())
