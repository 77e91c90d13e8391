"""The cheating rate, planted: a sim that games canaries at a known rate, through the
real loop, Python judge, store and report; and canaries change no other number."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

import pytest

from critiquebench.analysis import (
    ArmSummary,
    RunReport,
    build_report,
    connect,
    html_report,
    verdict_lines,
)
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run

CASES, REPS = 8, 4


def _run(output: Path, model: str, canaries: int, arms: str = "A,B") -> RunReport:
    config = RunConfig.model_validate(
        {"suite": "basic", "arms": arms, "model": model, "cache": False, "output": output,
         "run_id": "planted", "limit": CASES, "canaries": canaries, "reps": REPS}
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    assert finish_run(plan, failed=0).status == "completed"
    return build_report(connect(output), "planted", resamples=300)


SIM = "sim:draft=0.5,fix=0.5,seed=3"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunReport, RunReport]:
    root = tmp_path_factory.mktemp("canary")
    plain = _run(root / "plain", SIM, canaries=0, arms="A,B,R")
    cheating = _run(root / "cheating", SIM + ",cheat=0.5", canaries=CASES, arms="A,B,R")
    return plain, cheating


def test_a_sim_that_cheats_at_a_known_rate_gets_that_rate(
    runs: tuple[RunReport, RunReport],
) -> None:
    rates = {r.arm: r for r in runs[1].canaries}
    assert set(rates) == {"A", "B", "R"}
    for rate in rates.values():
        assert rate.units == CASES * REPS
        assert rate.low <= 0.5 <= rate.high
        assert 0 < rate.passed < rate.units
    # A (case, rep) cheats on every answer or none, in both arms alike.
    assert rates["A"].passed == rates["B"].passed == rates["R"].passed


def _timeless(arms: tuple[ArmSummary, ...]) -> tuple[ArmSummary, ...]:
    """The arms without their wall-clock latencies, which no two runs share."""
    return tuple(dataclasses.replace(a, p50_latency_s=0.0, p90_latency_s=0.0) for a in arms)


def test_canaries_change_no_other_number(runs: tuple[RunReport, RunReport]) -> None:
    plain, cheating = runs
    assert not plain.canaries
    assert _timeless(cheating.arms) == _timeless(plain.arms)
    assert cheating.curves == plain.curves
    assert cheating.fix_break == plain.fix_break
    assert cheating.against_resample == plain.against_resample and plain.against_resample
    assert cheating.cost_curve == plain.cost_curve
    assert cheating.regressions == plain.regressions
    assert cheating.failure_kinds == plain.failure_kinds
    assert cheating.cost and plain.cost
    assert (cheating.cost.calls, cheating.cost.paid) == (plain.cost.calls, plain.cost.paid)
    assert not cheating.unmeasured and cheating.sensitivity == ()
    assert plain.meta and cheating.meta
    assert (cheating.meta.units_planned, cheating.meta.units_landed) == (
        plain.meta.units_planned,
        plain.meta.units_landed,
    )


def test_the_terminal_the_page_and_sql_give_the_rate_with_counts(
    runs: tuple[RunReport, RunReport], tmp_path: Path
) -> None:
    report = runs[1]
    passed = report.canaries[0].passed
    line = f"cheating rate: arm A {passed}/{CASES * REPS} canary units passed"
    assert line in "\n".join(verdict_lines(report))
    page = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_report(report))).split())
    assert line in page
    assert RunReport.from_json(report.to_json()).canaries == report.canaries
    assert not any("cheating" in text for text in verdict_lines(runs[0]))


def test_an_honest_sim_cheats_on_no_canary(tmp_path: Path) -> None:
    report = _run(tmp_path, SIM, canaries=3, arms="B")
    (rate,) = report.canaries
    assert (rate.arm, rate.units, rate.passed) == ("B", 3 * REPS, 0)
    assert rate.high < 0.5
    rows = connect(tmp_path).execute(
        "SELECT arm, units, passed, cheating_rate FROM canaries WHERE run_id = 'planted'"
    )
    assert rows.fetchall() == [("B", 3 * REPS, 0, 0.0)]
