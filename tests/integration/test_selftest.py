"""The selftest: simulated experiments through the real pipeline, scored against the truth."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.analysis import (
    DEFAULT_PARAMS,
    SelftestSettings,
    run_experiment,
    run_selftest,
    simulate_selftest,
)
from critiquebench.cli import app
from critiquebench.judges import PythonJudge
from critiquebench.models import true_reduction, unit_states
from critiquebench.models._sim import sim_code
from critiquebench.suites import load_suite


def test_one_experiment_reports_exactly_the_simulators_ground_truth(tmp_path: Path) -> None:
    # The pipeline must turn the sim's planted states into exactly these defect counts:
    # A keeps the draft; B stops at the first correct answer within its fix rounds and
    # otherwise keeps the buggy draft (the best attempt), however often fixes regress.
    settings = SelftestSettings(
        params=dataclasses.replace(DEFAULT_PARAMS, regress=0.3), reps=2, cases=12, retry_limit=2
    )
    outcome = run_experiment(settings, seed=3, output=tmp_path)
    params = dataclasses.replace(settings.params, seed=3)
    judge, sum_a, sum_b = PythonJudge(), 0, 0
    for case in load_suite("basic", limit=12):
        buggy = judge(case, sim_code(case.reference_solution, case.entry_point, "buggy", 0))
        for rep in range(2):
            states = unit_states(params, case.id, rep, settings.retry_limit + 1)
            if states[0] == "buggy":
                sum_a += buggy.defects()
                sum_b += 0 if "correct" in states else buggy.defects()
    assert sum_a > 0
    assert outcome.estimate == pytest.approx(1 - sum_b / sum_a)
    assert (outcome.n_cases, outcome.n_pairs) == (12, 24)
    assert outcome.verdict == "inconclusive" or outcome.low is not None


def test_a_small_selftest_returns_sane_numbers(tmp_path: Path) -> None:
    settings = SelftestSettings(experiments=2, reps=1, cases=10, resamples=500)
    result = run_selftest(settings, workdir=tmp_path)
    assert [o.seed for o in result.outcomes] == [0, 1]
    assert result.truth == pytest.approx(true_reduction(DEFAULT_PARAMS, 2))
    assert 0.0 <= result.coverage <= 1.0 and abs(result.bias) < 0.5
    for outcome in result.outcomes:
        assert outcome.low is not None and outcome.high is not None
        assert outcome.estimate is not None and outcome.low <= outcome.estimate <= outcome.high
    assert sum(result.verdict_shares().values()) == pytest.approx(1.0)
    assert list(tmp_path.iterdir()) == []  # each experiment's run folder is removed


def test_coverage_of_the_planted_effect_is_high_with_many_cases_and_reps() -> None:
    # Statistics only (fixed seeds, so it cannot flake): 44 heterogeneous cases x 3 reps.
    settings = SelftestSettings(experiments=400, reps=3, resamples=1_000, first_seed=11)
    result = simulate_selftest(settings, n_cases=44)
    assert result.coverage >= 0.93
    assert abs(result.bias) < 0.02
    assert result.false_met <= 0.05 and result.false_not_met <= 0.05


def test_selftest_command_prints_the_table() -> None:
    args = ["selftest", "--experiments", "1", "--reps", "1", "--cases", "10",
            "--statistical", "50"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    for text in ("coverage", "end to end", "statistics only", "false met"):
        assert text in result.output
