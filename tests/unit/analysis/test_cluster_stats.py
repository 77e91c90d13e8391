"""The case-clustered bootstrap, the acceptance rule and the clustered McNemar test."""

from __future__ import annotations

import numpy as np
import pytest

from critiquebench.analysis.stats._stats import (
    MIN_CASES,
    ReductionEstimate,
    acceptance,
    cluster_bootstrap_mean,
    cluster_bootstrap_reduction,
    clustered_mcnemar,
    decide_acceptance,
    mcnemar_exact,
    paired_bootstrap_reduction,
)


def _flat(by_case: list[list[float]]) -> list[float]:
    return [value for reps in by_case for value in reps]


def test_reps_that_copy_their_case_widen_the_cluster_interval_not_the_row_one() -> None:
    # 20 cases, each rep a copy of its case: 3 reps add no information. The row
    # bootstrap treats 60 rows as independent and shrinks its interval by about
    # sqrt(3); resampling cases gives the same interval as one rep per case.
    rng = np.random.default_rng(4)
    base = rng.integers(1, 6, size=20).astype(float)
    treat = np.where(rng.random(20) < 0.6, 0.0, base)
    one = cluster_bootstrap_reduction([[a] for a in base], [[x] for x in treat], seed=1)
    three = cluster_bootstrap_reduction([[a] * 3 for a in base], [[x] * 3 for x in treat], seed=1)
    rows = paired_bootstrap_reduction(
        _flat([[a] * 3 for a in base]), _flat([[x] * 3 for x in treat])
    )
    assert one.low is not None and one.high is not None
    assert three.low is not None and three.high is not None
    assert rows.low is not None and rows.high is not None
    assert (three.low, three.high) == pytest.approx((one.low, one.high))
    assert (three.n_cases, three.n_pairs) == (20, 60)
    row_width, cluster_width = rows.high - rows.low, three.high - three.low
    assert row_width < 0.7 * cluster_width


def test_point_estimate_is_the_ratio_of_sums_over_every_rep() -> None:
    baseline = [[2, 1, 3], [0, 4], [5]]
    treatment = [[0, 1, 1], [0, 2], [1]]
    result = cluster_bootstrap_reduction(baseline, treatment, resamples=500)
    assert result.estimate == pytest.approx(1 - 5 / 15)
    assert (result.n_cases, result.n_pairs) == (3, 6)


def test_single_case_is_inconclusive_with_a_degenerate_note() -> None:
    result = cluster_bootstrap_reduction([[3, 2, 4]], [[0, 0, 1]])
    assert result.degenerate and result.low == result.high == pytest.approx(1 - 1 / 9)
    assert result.note is not None and "only one case" in result.note
    decision = decide_acceptance(result, target=0.5)
    assert decision.verdict == "inconclusive"
    assert decision.reason == f"too few cases: 1 < {MIN_CASES}"


def test_three_cases_all_fixed_is_inconclusive_too_few_cases_and_never_wide() -> None:
    # The old report said "100% [100%, 100%] MET" here.
    result = cluster_bootstrap_reduction([[2], [1], [3]], [[0], [0], [0]])
    assert (result.estimate, result.low, result.high) == (1.0, 1.0, 1.0)
    assert result.note is not None
    assert "degenerate" in result.note and "same reduction (100%)" in result.note
    assert "wide" not in result.note and "narrow" not in result.note
    assert acceptance(result, 0.8) == "inconclusive"
    assert decide_acceptance(result, 0.8).reason == f"too few cases: 3 < {MIN_CASES}"


def test_a_zero_reduction_in_every_case_is_degenerate_not_wide() -> None:
    cases = [[n] for n in range(1, 13)]
    result = cluster_bootstrap_reduction(cases, cases)
    assert (result.estimate, result.low, result.high) == (0.0, 0.0, 0.0)
    assert result.note is not None and "every case has the same reduction (0%)" in result.note
    assert "wide" not in result.note
    assert decide_acceptance(result, 0.8).verdict == "inconclusive"


def test_enough_cases_with_a_clear_effect_are_met_and_say_why() -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(2, 6, size=(40, 3)).astype(float)
    treat = np.where(rng.random((40, 3)) < 0.97, 0.0, base)
    result = cluster_bootstrap_reduction(base.tolist(), treat.tolist())
    decision = decide_acceptance(result, target=0.8)
    assert decision.verdict == "met", result
    assert "at or above" in decision.reason


def test_same_seed_same_interval_and_another_seed_differs() -> None:
    rng = np.random.default_rng(2)
    base = rng.poisson(2.0, size=(15, 2)).tolist()
    treat = rng.poisson(1.0, size=(15, 2)).tolist()
    first = cluster_bootstrap_reduction(base, treat, resamples=2_000, seed=7)
    assert first == cluster_bootstrap_reduction(base, treat, resamples=2_000, seed=7)
    assert first != cluster_bootstrap_reduction(base, treat, resamples=2_000, seed=8)


def test_undefined_reductions_keep_the_case_count() -> None:
    result = cluster_bootstrap_reduction([[0, 0], [0]], [[1, 0], [2]])
    assert result.estimate is None and result.n_cases == 2 and result.n_pairs == 3
    assert decide_acceptance(result).reason.startswith("no interval")


@pytest.mark.parametrize(
    ("baseline", "treatment", "message"),
    [
        ([[1, 2]], [[1]], "case 0"),
        ([[1]], [[1], [2]], "same cases"),
        ([[1, -1]], [[0, 0]], "non-negative"),
        ([[]], [[]], "non-empty"),
    ],
)
def test_bad_inputs_name_the_case(
    baseline: list[list[float]], treatment: list[list[float]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        cluster_bootstrap_reduction(baseline, treatment)


def test_coverage_with_three_reps_of_heterogeneous_cases() -> None:
    # Case difficulty shared by its reps; the true reduction is exactly 0.6 (every
    # defect survives with probability 0.4). Fixed seeds: the count cannot flake.
    truth, covered, experiments = 0.6, 0, 200
    for experiment in range(experiments):
        rng = np.random.default_rng(50_000 + experiment)
        rates = rng.gamma(shape=1.0, scale=2.0, size=(40, 1)) * np.ones((1, 3))
        baseline = rng.poisson(rates)
        treatment = rng.binomial(baseline, 1.0 - truth * np.ones((40, 3)))
        result = cluster_bootstrap_reduction(
            baseline.tolist(), treatment.tolist(), resamples=1_000, seed=experiment
        )
        assert result.low is not None and result.high is not None
        covered += result.low <= truth <= result.high
    assert covered / experiments >= 0.92


def test_cluster_mean_matches_the_pooled_mean_and_resamples_cases() -> None:
    values = [[1, 2, 3], [4], [0, 0]]
    result = cluster_bootstrap_mean(values, resamples=2_000)
    assert result.mean == pytest.approx(10 / 6)
    assert (result.n_cases, result.n_values) == (3, 6)
    assert result.low is not None and result.high is not None
    assert 0.0 <= result.low < result.mean < result.high <= 4.0


def test_cluster_mean_of_identical_cases_is_degenerate_and_says_why() -> None:
    result = cluster_bootstrap_mean([[1, 3], [2, 2], [2]])
    assert result.low == result.high == 2.0
    assert result.note is not None and "every case has the same mean" in result.note
    single = cluster_bootstrap_mean([[1, 5]])
    assert single.note is not None and "only one case" in single.note


def test_acceptance_needs_min_cases_whatever_the_estimate() -> None:
    estimate = ReductionEstimate(0.95, 0.9, 0.99, 27, 1_000, 0, 0.95, None, n_cases=9)
    assert decide_acceptance(estimate).reason == "too few cases: 9 < 10"
    enough = ReductionEstimate(0.95, 0.9, 0.99, 30, 1_000, 0, 0.95, None, n_cases=10)
    assert acceptance(enough) == "met"


def test_clustered_mcnemar_counts_cases_not_reps() -> None:
    # Case 1: B passes all 3 reps, A none -> one improved case, not three.
    # Case 2: A passes 2 reps, B 1 -> one worsened case. Case 3: tie.
    baseline = [[False, False, False], [True, True, False], [True, False]]
    treatment = [[True, True, True], [True, False, False], [False, True]]
    result = clustered_mcnemar(baseline, treatment)
    assert (result.b, result.c, result.n_cases, result.n_pairs) == (1, 1, 3, 8)
    assert result.p_value == 1.0
    assert result.pass_rate_baseline == pytest.approx(3 / 8)
    assert result.pass_rate_treatment == pytest.approx(5 / 8)
    assert result.note is not None and "not independent" in result.note
    flat = mcnemar_exact(_flat_bool(baseline), _flat_bool(treatment))
    assert (flat.b, flat.c) == (2, 4)


def test_clustered_mcnemar_with_one_rep_is_mcnemar() -> None:
    a = [True, False, False, False, False, False, True, True, False, False]
    x = [False, True, True, True, True, True, True, True, False, False]
    clustered = clustered_mcnemar([[v] for v in a], [[v] for v in x])
    assert clustered == mcnemar_exact(a, x)


def _flat_bool(by_case: list[list[bool]]) -> list[bool]:
    return [value for reps in by_case for value in reps]
