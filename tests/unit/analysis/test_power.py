"""Power by simulation and solving the planted fix probability for an effect."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from critiquebench.analysis.stats import _power
from critiquebench.analysis.stats._power import (
    estimate_power,
    min_cases_for_power,
    params_for_effect,
    simulate_defects,
)
from critiquebench.analysis.stats._stats import (
    MIN_CASES,
    cluster_bootstrap_reduction,
    decide_acceptance,
)
from critiquebench.cli import app
from critiquebench.models import SimParams, true_reduction


def test_params_for_effect_plants_the_asked_reduction() -> None:
    params = params_for_effect(0.9, retry_limit=3, base=SimParams(het=1.0, noise=0.3))
    assert true_reduction(params, 3) == pytest.approx(0.9, abs=1e-9)
    with pytest.raises(ValueError):
        params_for_effect(1.5, retry_limit=2)


def test_a_clear_effect_with_many_cases_is_met_and_a_weak_one_is_not() -> None:
    strong = params_for_effect(0.95, retry_limit=2)
    result = estimate_power(strong, target=0.8, n_cases=80, reps=3, retry_limit=2, experiments=60)
    assert result.met >= 0.9 and result.not_met == 0.0
    weak = params_for_effect(0.5, retry_limit=2)
    result = estimate_power(weak, target=0.8, n_cases=80, reps=3, retry_limit=2, experiments=60)
    assert result.not_met >= 0.9 and result.met == 0.0


def test_too_few_cases_are_never_met(monkeypatch: pytest.MonkeyPatch) -> None:
    strong = params_for_effect(0.99, retry_limit=2)
    # Drawn by hand: the acceptance rule calls each experiment with too few cases
    # inconclusive, however strong the effect...
    rng = np.random.default_rng(0)
    for experiment in range(30):
        baseline, treatment = simulate_defects(strong, MIN_CASES - 1, 3, 2, rng)
        estimate = cluster_bootstrap_reduction(
            baseline.tolist(), treatment.tolist(), resamples=200, seed=experiment
        )
        assert decide_acceptance(estimate, 0.5).verdict == "inconclusive"

    # ... so estimate_power says so without drawing any.
    def no_draws(*args: object) -> None:
        raise AssertionError("drew experiments whose verdict is known")

    monkeypatch.setattr(_power, "simulate_defects", no_draws)
    result = estimate_power(strong, target=0.5, n_cases=9, reps=3, retry_limit=2, experiments=30)
    assert (result.met, result.not_met, result.inconclusive) == (0.0, 0.0, 1.0)
    assert result.truth == pytest.approx(0.99)


def test_min_cases_grows_as_the_effect_nears_the_target() -> None:
    far, _ = min_cases_for_power(
        params_for_effect(0.97, 2), target=0.8, reps=3, retry_limit=2, experiments=60
    )
    near, tried = min_cases_for_power(
        params_for_effect(0.88, 2), target=0.8, reps=3, retry_limit=2, experiments=60
    )
    assert far is not None and near is not None and far < near
    assert tried[-1].n_cases == near and tried[-1].met >= 0.8


def test_power_command_prints_designs() -> None:
    result = CliRunner().invoke(
        app, ["power", "--effect", "0.95", "--cases", "30", "--experiments", "20"]
    )
    assert result.exit_code == 0, result.output
    assert "verdict probabilities" in result.output and "30" in result.output
