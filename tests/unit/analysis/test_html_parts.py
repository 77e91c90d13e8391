"""The HTML report says what the terminal says, and its charts never show empty panels,
one $0 point, half units, or halts that contradict the pass rate without a word."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from critiquebench.analysis import (
    RunReport,
    build_report,
    connect,
    html_report,
    report_figures,
    verdict_lines,
)
from critiquebench.analysis.render._charts import point_labels
from critiquebench.analysis.render._format import halt_explanation
from tests.unit.analysis.synthetic_run import Call, FakeUnit, write_run
from tests.unit.analysis.test_report import PRICES, units


def _report(tmp_path: Path, made: list[FakeUnit], *, priced: bool = True) -> RunReport:
    write_run(tmp_path, "r", made, reps=2)
    return build_report(connect(tmp_path), "r", prices=PRICES if priced else None, resamples=200)


def _figure(report: RunReport, name: str) -> dict[str, Any]:
    return next(f.spec for f in report_figures(report) if f.name == name)


def _text(report: RunReport) -> str:
    # Tags out, entities decoded, whitespace collapsed: the page as a reader sees it.
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_report(report))).split())


def test_the_page_shows_first_drafts_rounds_and_escalations(tmp_path: Path) -> None:
    text = _text(_report(tmp_path, units()))
    # First-draft defects per arm are in the table (11/6 for both arms).
    assert "defects first draft" in text and text.count("1.83") >= 2
    # Arm B's rounds, as the terminal's "defects by round": kept 1.83 -> 0.83 -> 0.83,
    # latest 1.83 -> 0.83 -> 1.00, gain 1.00 then 0.00, 6 units ran round 1, 1 ran round 2.
    rounds = text.split("Arm B round units that ran it")[1].split("Arm B: recommended")[0]
    header = (
        "defects of the answer kept defects of the latest attempt gain correct -> incorrect "
        "pass rate of the answer kept mean tokens spent failing answers fixed "
        "passing answers broken"
    )
    # Round 1 fixed 2 of its 5 failing inputs, round 2 none of 1; no input passed.
    table = [
        "0 6 1.83 1.83 0 17% 110",
        "1 5 0.83 0.83 1.00 0 50% 168 2/5 (40%) 0/0",
        "2 1 0.83 1.00 0.00 0 50% 180 0/1 (0%) 0/0",
    ]
    assert rounds.split() == " ".join([header, *table]).split()
    assert "Arm A: one draft per unit, no fix round." in text
    assert "Escalated units (3)" in text
    assert "pass rate 17% -> 50% (McNemar exact p" in text


def test_halts_and_pass_rate_are_explained_in_their_own_numbers(tmp_path: Path) -> None:
    # Two B units stop "visible_clean" because their feedback checks are green, yet one
    # of them fails a held-out check: 2 such halts beside a pass rate of 1 in 2.
    made = [
        FakeUnit("c1", "A", 0, (1,)),
        FakeUnit("c2", "A", 0, (1,)),
        FakeUnit("c1", "B", 0, (1, 0)),
        FakeUnit("c2", "B", 0, (1, 1), (1, 0), halt="visible_clean"),
    ]
    report = _report(tmp_path, made)
    b = report.arms[1]
    assert (b.halts, b.pass_rate, b.units_passed, b.green_but_failed) == (
        {"visible_clean": 2}, 0.5, 1, 1
    )  # fmt: skip
    text = _text(report)
    assert (
        "halts B: visible_clean=2. arm B: 2 of 2 units stopped because what the loop was shown "
        "(feedback checks or critic) was clean; 1 of 2 units pass (no measured defect of any "
        "kind: 50%; tests pass rate 50%), held-out checks included; 1 unit(s) stopped clean "
        "yet have defects the loop was not shown."
    ) in text
    assert (
        "arm A makes one draft per unit (single_draft); 0 of 2 units pass (no measured defect"
    ) in text
    # The terminal says it too, under its "halts B: visible_clean=2" caption.
    assert [line for line in verdict_lines(report) if line.startswith("arm B: 2 of 2")] == [
        halt_explanation(b)
    ]


def test_no_gain_panel_when_no_arm_ran_a_fix_round(tmp_path: Path) -> None:
    report = _report(tmp_path, [FakeUnit("c1", "A", 0, (1,)), FakeUnit("c2", "A", 0, (0,))])
    spec = _figure(report, "curve")
    assert "hconcat" not in spec and "Gain per round" not in str(spec)
    caption = next(f.caption for f in report_figures(report) if f.name == "curve")
    assert "No gain per round to draw: no unit of any arm ran a fix round" in caption


def test_the_gain_panel_holds_only_arms_with_a_gain(tmp_path: Path) -> None:
    spec = _figure(_report(tmp_path, units()), "curve")
    _, right = spec["hconcat"]
    gains = right["data"]["values"]
    assert {row["arm"] for row in gains} == {"B"}
    assert [(row["round"], row["gain"]) for row in gains] == [(1, pytest.approx(1.0)), (2, 0.0)]


def test_a_free_model_plots_tokens_with_one_label_per_point(tmp_path: Path) -> None:
    # Same calls in both arms (one of 100 in, 10 out per unit): one point, tokens on x.
    made = [FakeUnit(c, arm, 0, (1,), calls=(Call(0, 100, 10),)) for c in ("c1", "c2")
            for arm in ("A", "B")]  # fmt: skip
    report = _report(tmp_path, made, priced=False)
    spec = _figure(report, "cost")
    points, labels = spec["layer"]
    assert points["encoding"]["x"]["field"] == "tokens"
    assert spec["title"] == "Tokens vs defects (cost is $0)"
    assert labels["data"]["values"] == [{"tokens": 110.0, "mean": 1.0, "label": "A, B"}]
    caption = next(f.caption for f in report_figures(report) if f.name == "cost")
    assert caption.startswith("The run cost $0 (fake:priced is free")


def test_a_priced_run_keeps_cost_on_x(tmp_path: Path) -> None:
    spec = _figure(_report(tmp_path, units()), "cost")
    assert spec["layer"][0]["encoding"]["x"]["field"] == "cost"
    assert spec["title"] == "Cost vs defects"


def test_the_halt_axis_counts_whole_units(tmp_path: Path) -> None:
    axis = _figure(_report(tmp_path, units()), "halts")["encoding"]["x"]["axis"]
    assert (axis["tickMinStep"], axis["format"]) == (1, "d")


def test_points_close_enough_to_overprint_share_one_label() -> None:
    rows = [
        {"arm": "A", "tokens": 100.0, "mean": 2.0},
        {"arm": "B", "tokens": 104.0, "mean": 1.9},  # 4% and 2.5% of the ranges away
        {"arm": "C", "tokens": 0.0, "mean": 2.0},
        {"arm": "D", "tokens": 100.0, "mean": 0.5},
    ]
    assert point_labels(rows, "tokens", "mean") == [
        {"tokens": 100.0, "mean": 2.0, "label": "A, B"},
        {"tokens": 0.0, "mean": 2.0, "label": "C"},
        {"tokens": 100.0, "mean": 0.5, "label": "D"},
    ]


def test_a_run_without_tokens_says_why_its_rounds_sit_at_zero(tmp_path: Path) -> None:
    report = _report(tmp_path, [FakeUnit("c1", "B", 0, (1, 0)), FakeUnit("c2", "B", 0, (1,))])
    caption = next(f.caption for f in report_figures(report) if f.name == "tokens")
    assert caption.endswith(
        "No tokens were counted (e.g. replayed answers), so every round sits at 0."
    )
    spec = _figure(report, "cost")
    assert spec["title"] == "Calls vs defects (cost is $0)"
