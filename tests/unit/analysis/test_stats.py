from __future__ import annotations

import numpy as np
import pytest

from critiquebench.analysis.stats._stats import (
    ReductionEstimate,
    acceptance,
    mcnemar_exact,
    paired_bootstrap_reduction,
)


def test_proportional_treatment_gives_a_zero_width_interval_at_the_exact_value() -> None:
    # X = A / 4 in every pair, so every resample's reduction is exactly 0.75.
    baseline = [4, 8, 0, 12, 4, 16, 8, 4, 20, 4, 8, 0]
    treatment = [a / 4 for a in baseline]
    result = paired_bootstrap_reduction(baseline, treatment, resamples=2_000)
    assert result.estimate == pytest.approx(0.75)
    assert result.low == pytest.approx(0.75)
    assert result.high == pytest.approx(0.75)
    assert result.n_pairs == 12


def test_hand_computed_two_pair_example() -> None:
    # Pairs (A, X) = (2, 1) and (0, 1). A resample is one of: both first pair
    # (p = 1/4, reduction (4 - 2) / 4 = 0.5), one of each (p = 1/2, reduction 0),
    # both second pair (p = 1/4, baseline mean 0: dropped). Of the kept draws a
    # third are 0.5, so the 2.5% quantile is 0 and the 97.5% quantile is 0.5.
    result = paired_bootstrap_reduction([2, 0], [1, 1], resamples=10_000, seed=3)
    assert result.estimate == pytest.approx(0.0)
    assert result.low == pytest.approx(0.0)
    assert result.high == pytest.approx(0.5)
    assert result.resamples_used + result.resamples_dropped == 10_000
    assert result.resamples_dropped / 10_000 == pytest.approx(0.25, abs=0.02)
    assert result.note is not None and "independent" in result.note


def test_point_estimate_is_the_reduction_of_means() -> None:
    result = paired_bootstrap_reduction([2, 1, 3, 0], [0, 1, 1, 0], resamples=500)
    assert result.estimate == pytest.approx((1.5 - 0.5) / 1.5)
    assert result.low is not None and result.high is not None
    assert result.low <= result.high


def test_same_seed_same_interval() -> None:
    baseline, treatment = [3, 1, 4, 1, 5, 9, 2, 6], [1, 0, 2, 1, 0, 3, 1, 2]
    first = paired_bootstrap_reduction(baseline, treatment, resamples=1_000, seed=7)
    again = paired_bootstrap_reduction(baseline, treatment, resamples=1_000, seed=7)
    assert first == again


@pytest.mark.parametrize(
    ("baseline", "treatment", "reason"),
    [([0, 0, 0], [1, 0, 2], "baseline has no defects"), ([], [], "no pairs")],
)
def test_undefined_reduction_says_why(
    baseline: list[int], treatment: list[int], reason: str
) -> None:
    result = paired_bootstrap_reduction(baseline, treatment)
    assert (result.estimate, result.low, result.high, result.resamples_used) == (
        None,
        None,
        None,
        0,
    )
    assert result.note is not None and reason in result.note
    assert acceptance(result) == "inconclusive"


@pytest.mark.parametrize(
    ("baseline", "treatment"), [([1, 2], [1]), ([1, -1], [0, 0]), ([1.0, float("nan")], [0, 0])]
)
def test_bad_inputs_are_rejected(baseline: list[float], treatment: list[float]) -> None:
    with pytest.raises(ValueError):
        paired_bootstrap_reduction(baseline, treatment)


def test_interval_covers_the_true_reduction_in_at_least_90_of_100_experiments() -> None:
    # Each case has its own defect rate; the treatment fixes each defect with
    # probability 0.6 (binomial thinning), so the true reduction is exactly 0.6
    # and the two arms are correlated, as real pairs are.
    truth, covered = 0.6, 0
    for experiment in range(100):
        rng = np.random.default_rng(1_000 + experiment)
        rates = rng.gamma(shape=2.0, scale=1.0, size=200)
        baseline = rng.poisson(rates)
        treatment = rng.binomial(baseline, 1.0 - truth)
        result = paired_bootstrap_reduction(
            baseline.tolist(), treatment.tolist(), resamples=2_000, seed=experiment
        )
        assert result.low is not None and result.high is not None
        covered += result.low <= truth <= result.high
    print(f"coverage: {covered}/100")
    assert covered >= 90


def _estimate(low: float | None, high: float | None) -> ReductionEstimate:
    return ReductionEstimate(0.8, low, high, 50, 10_000, 0, 0.95, None, n_cases=50)


@pytest.mark.parametrize(
    ("low", "high", "outcome"),
    [
        (0.85, 0.95, "met"),
        (0.80, 0.90, "met"),
        (0.50, 0.79, "not met"),
        (0.70, 0.90, "inconclusive"),
        (None, None, "inconclusive"),
    ],
)
def test_acceptance_outcomes(low: float | None, high: float | None, outcome: str) -> None:
    assert acceptance(_estimate(low, high), target=0.80) == outcome


def test_acceptance_uses_the_given_target() -> None:
    assert acceptance(_estimate(0.55, 0.70), target=0.5) == "met"


def test_mcnemar_hand_computed() -> None:
    # 1 pair A-pass/X-fail (b), 5 pairs A-fail/X-pass (c), 2 both pass, 2 both fail.
    # p = 2 * (C(6,0) + C(6,1)) / 2**6 = 14 / 64.
    baseline = [True, False, False, False, False, False, True, True, False, False]
    treatment = [False, True, True, True, True, True, True, True, False, False]
    result = mcnemar_exact(baseline, treatment)
    assert (result.n_pairs, result.b, result.c) == (10, 1, 5)
    assert result.p_value == pytest.approx(14 / 64)
    assert result.pass_rate_baseline == pytest.approx(0.3)
    assert result.pass_rate_treatment == pytest.approx(0.7)
    assert result.pass_rate_difference == pytest.approx(0.4)


def test_mcnemar_balanced_and_no_discordant_pairs_give_p_one() -> None:
    assert mcnemar_exact([True, False] * 3, [False, True] * 3).p_value == 1.0
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0


def test_mcnemar_is_exact_for_many_pairs() -> None:
    # b = 0, c = 2000: p = 2 / 2**2000, far below any float; must not overflow.
    result = mcnemar_exact([False] * 2_000, [True] * 2_000)
    assert result.p_value == 0.0
    assert mcnemar_exact([False] * 10, [True] * 10).p_value == pytest.approx(2 / 1024)


def test_mcnemar_rejects_empty_and_unequal_inputs() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact([], [])
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


def test_mcnemar_p_value_matches_the_binomial_tail_summed_exactly() -> None:
    # b = 1, c = 10: 2 * (C(11,0) + C(11,1)) / 2**11 = 24 / 2048.
    assert mcnemar_exact([True] + [False] * 10, [False] + [True] * 10).p_value == pytest.approx(
        24 / 2048, rel=1e-12
    )
    # b = 480, c = 520 (1,000 discordant pairs): the integer sum, divided once.
    from math import comb

    exact = 2 * sum(comb(1000, k) for k in range(481)) / 2**1000
    baseline = [True] * 480 + [False] * 520
    assert mcnemar_exact(baseline, [not x for x in baseline]).p_value == pytest.approx(
        exact, rel=1e-9
    )


@pytest.mark.parametrize(
    ("df", "quantile"),
    # Student t 0.975 quantiles from printed tables (df 2, 9, 29).
    [(2, 4.302653), (9, 2.262157), (29, 2.045230)],
)
def test_t_quantile_is_exact_for_few_cases(df: int, quantile: float) -> None:
    from critiquebench.analysis.stats._exact import t_quantile

    assert t_quantile(0.975, df) == pytest.approx(quantile, abs=5e-7)
