"""The statistics' own t quantile and binomial tail give scipy's values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy.special import bdtr, stdtr, stdtrit

from critiquebench.analysis.stats._exact import binomial_half_cdf, t_cdf, t_quantile

DEGREES = [1, 2, 3, 4, 5, 9, 10, 29, 30, 163, 164, 999, 5_000]
LEVELS = [1e-6, 0.0125, 0.025, 0.05, 0.3, 0.5, 0.7, 0.95, 0.975, 0.9875, 0.999999]


@pytest.mark.parametrize("df", DEGREES)
def test_the_t_distribution_is_scipys(df: int) -> None:
    # The series sums df/2 terms: at 5,000 degrees of freedom and p = 1e-6 its rounding
    # moves the quantile by ~1e-10 of itself; the intervals use p = 0.975.
    for p in LEVELS:
        assert t_quantile(p, df) == pytest.approx(float(stdtrit(df, p)), rel=1e-9, abs=1e-12)
    for t in (-40.0, -3.1, -1.0, 0.0, 0.2, 2.0, 12.5):
        assert t_cdf(t, df) == pytest.approx(float(stdtr(df, t)), rel=1e-11, abs=1e-13)


def test_the_binomial_tail_is_the_exact_fraction_rounded() -> None:
    # Exact to the last bit where scipy's bdtr is off by ~1e-11 (n = 20,000, k = 10,001).
    for n in (1, 2, 3, 7, 10, 31, 100, 1_000, 20_000):
        for k in {0, 1, n // 3, n // 2 - 1, n // 2, n // 2 + 1, n - 1, n}:
            if 0 <= k <= n:
                found = binomial_half_cdf(k, n)
                assert found == pytest.approx(float(bdtr(k, n, 0.5)), rel=1e-9)
                if n <= 1_000:  # the exact sum of 20,000 terms takes minutes
                    exact = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
                    assert found == pytest.approx(float(exact), rel=1e-15)
    # Dyadic values come out exactly: P(X <= 1) of 4 fair coins is 5/16.
    assert binomial_half_cdf(1, 4) == 5 / 16
    assert binomial_half_cdf(480, 1_000) == pytest.approx(
        sum(math.comb(1_000, k) for k in range(481)) / 2**1_000, rel=1e-15
    )


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_cdf(1.0, 0)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        t_quantile(1.0, 5)
    with pytest.raises(ValueError, match="non-negative"):
        binomial_half_cdf(-1, 5)
