"""Power by simulation and solving the planted fix probability for an effect."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from critiquebench.analysis.stats._power import (
    estimate_power,
    min_cases_for_power,
    params_for_effect,
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


def test_too_few_cases_are_never_met() -> None:
    strong = params_for_effect(0.99, retry_limit=2)
    result = estimate_power(strong, target=0.5, n_cases=9, reps=3, retry_limit=2, experiments=30)
    assert result.inconclusive == 1.0


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
