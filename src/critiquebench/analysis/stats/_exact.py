"""The two exact distribution functions the statistics need, in plain Python.

Both were scipy's (``scipy.special.stdtrit`` and ``bdtr``); importing ``scipy.special``
costs ~0.45 CPU-s, a seventh of what ``critiquebench report`` of a 328-unit run takes
(~3.5 CPU-s), for two functions that have closed forms at the arguments used here: the
t distribution at an integer number of degrees of freedom and the binomial at p = 1/2.
``tests/unit/analysis/test_exact.py`` holds them to scipy's values.
"""

from __future__ import annotations

import math
from statistics import NormalDist

_NEWTON_STEPS = 60


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with ``df`` (a positive integer) degrees of freedom.

    The finite series of Abramowitz and Stegun 26.7.3-4 in theta = atan(t / sqrt(df)):
    no special function, exact up to rounding.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be a positive integer, not {df}")
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    series, term = 1.0, 1.0
    if df % 2:
        for j in range(1, (df - 3) // 2 + 1):
            term *= cos2 * (2 * j) / (2 * j + 1)
            series += term
        inner = theta if df == 1 else theta + math.sin(theta) * math.cos(theta) * series
        within = 2.0 / math.pi * inner  # P(|T| <= t), signed with t
    else:
        for j in range(1, (df - 2) // 2 + 1):
            term *= cos2 * (2 * j - 1) / (2 * j)
            series += term
        within = math.sin(theta) * series
    return 0.5 * (1.0 + within)


def t_density(t: float, df: int) -> float:
    """The density of Student's t with ``df`` degrees of freedom at ``t``."""
    log_scale = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_scale - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (0 < p < 1).

    Newton's method from the normal quantile, kept inside a bracket that every step
    narrows (a step that would leave it bisects instead), so the heavy tails of few
    degrees of freedom cannot throw it off.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, not {p}")
    if p == 0.5:
        return 0.0
    low, high = -1.0, 1.0
    while t_cdf(low, df) > p:
        low *= 2.0
    while t_cdf(high, df) < p:
        high *= 2.0
    guess = min(max(NormalDist().inv_cdf(p), low), high)
    for _ in range(_NEWTON_STEPS):
        error = t_cdf(guess, df) - p
        if error > 0:
            high = guess
        else:
            low = guess
        step = error / t_density(guess, df)
        following = guess - step
        if not low < following < high:
            following = 0.5 * (low + high)
        if abs(following - guess) <= 1e-15 * max(1.0, abs(guess)):
            return following
        guess = following
    return guess


def binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): exact in integers, rounded once.

    Summed from k down, where the terms shrink; the sum stops when a term falls below
    2**-64 of it (the tail left is then below float precision), so it sums a few
    hundred terms of n-bit integers, not k: 0.3 s at n = 100,000 (n is a run's
    discordant cases), 0.04 s at 20,000.
    """
    if n < 0 or k < 0:
        raise ValueError(f"k and n must be non-negative, not k={k}, n={n}")
    if k >= n:
        return 1.0
    if 2 * k >= n:  # the terms grow from k down to the mode: sum the other side instead
        return 1.0 - binomial_half_cdf(n - k - 1, n)
    term, total = math.comb(n, k), 0
    for i in range(k, -1, -1):
        total += term
        if term < total >> 64:
            break
        term = term * i // (n - i + 1)
    return total / (1 << n)
