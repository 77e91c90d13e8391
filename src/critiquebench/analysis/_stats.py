"""Paired statistics for arm-vs-baseline comparisons: bootstrap reduction and McNemar."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

# Below this many pairs the percentile interval is unreliable; say so rather than hide it.
_FEW_PAIRS = 10


@dataclass(frozen=True)
class ReductionEstimate:
    """Defect reduction of an arm vs the baseline, ``(mean_A - mean_X) / mean_A``.

    ``estimate``, ``low`` and ``high`` are None when the reduction is undefined
    (no pairs, or a baseline without defects); ``note`` then says why.
    ``resamples_dropped`` counts draws whose baseline mean was zero.
    """

    estimate: float | None
    low: float | None
    high: float | None
    n_pairs: int
    resamples_used: int
    resamples_dropped: int
    confidence: float
    note: str | None


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on paired pass/fail outcomes.

    ``b`` = baseline passed and treatment failed, ``c`` = baseline failed and
    treatment passed; ``pass_rate_difference`` is treatment minus baseline.
    """

    n_pairs: int
    b: int
    c: int
    p_value: float
    pass_rate_baseline: float
    pass_rate_treatment: float
    pass_rate_difference: float


def _paired(
    baseline: Sequence[float], treatment: Sequence[float]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a = np.asarray(baseline, dtype=np.float64)
    x = np.asarray(treatment, dtype=np.float64)
    if a.ndim != 1 or a.shape != x.shape:
        raise ValueError(f"need two flat sequences of equal length, got {a.shape} and {x.shape}")
    if not (np.isfinite(a).all() and np.isfinite(x).all()) or (a < 0).any() or (x < 0).any():
        raise ValueError("defect counts must be finite and non-negative")
    return a, x


def paired_bootstrap_reduction(
    baseline: Sequence[float],
    treatment: Sequence[float],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ReductionEstimate:
    """Reduction of mean defects vs the baseline, with a paired percentile bootstrap CI.

    ``baseline[i]`` and ``treatment[i]`` must be the same case and rep: pairs are
    resampled together, so the case-to-case spread, shared by both arms, cancels.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    a, x = _paired(baseline, treatment)
    n = a.size

    def undefined(reason: str) -> ReductionEstimate:
        return ReductionEstimate(None, None, None, n, 0, 0, confidence, reason)

    if n == 0:
        return undefined("no pairs")
    if a.sum() == 0:
        return undefined("the baseline has no defects: a reduction is undefined")

    estimate = float((a.mean() - x.mean()) / a.mean())
    # One (resamples, n) index matrix: every draw is a row, so no Python loop.
    index = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    sum_a = a[index].sum(axis=1)
    sum_x = x[index].sum(axis=1)
    # A draw of only defect-free baseline pairs has no reduction to measure; the
    # sums of counts make the ratio of means the ratio of sums (n cancels).
    keep = sum_a > 0
    dropped = int(resamples - keep.sum())
    reductions = (sum_a[keep] - sum_x[keep]) / sum_a[keep]

    notes: list[str] = []
    if n < _FEW_PAIRS:
        notes.append(f"fewer than {_FEW_PAIRS} pairs: the interval is wide")
    if dropped:
        notes.append(f"{dropped} of {resamples} resamples had no baseline defects and were dropped")
    low = high = None
    if reductions.size:
        tail = (1.0 - confidence) / 2.0
        low, high = (float(q) for q in np.quantile(reductions, [tail, 1.0 - tail]))
    else:
        notes.append("no resample had baseline defects: no interval")
    return ReductionEstimate(
        estimate=estimate,
        low=low,
        high=high,
        n_pairs=n,
        resamples_used=int(reductions.size),
        resamples_dropped=dropped,
        confidence=confidence,
        note="; ".join(notes) or None,
    )


def acceptance(
    estimate: ReductionEstimate, target: float = 0.80
) -> Literal["met", "not met", "inconclusive"]:
    """Judge a reduction against a target: the whole interval must be on one side of it."""
    if estimate.low is None or estimate.high is None:
        return "inconclusive"
    if estimate.low >= target:
        return "met"
    if estimate.high < target:
        return "not met"
    return "inconclusive"


def mcnemar_exact(
    baseline_passed: Sequence[bool], treatment_passed: Sequence[bool]
) -> McNemarResult:
    """Two-sided exact McNemar test (binomial on the discordant pairs) and pass rates.

    Raises ValueError on empty or unequal inputs: pass rates of no pairs mean nothing.
    """
    a = np.asarray(baseline_passed, dtype=bool)
    x = np.asarray(treatment_passed, dtype=bool)
    if a.ndim != 1 or a.shape != x.shape:
        raise ValueError(f"need two flat sequences of equal length, got {a.shape} and {x.shape}")
    if a.size == 0:
        raise ValueError("no pairs")
    b = int((a & ~x).sum())
    c = int((~a & x).sum())
    discordant = b + c
    # Integer arithmetic until the one division: exact for any number of pairs, where
    # 2.0 ** discordant would overflow a float past ~1,000. No discordant pair gives 1.
    tail = sum(math.comb(discordant, k) for k in range(min(b, c) + 1))
    p_value = min(1.0, 2 * tail / 2**discordant)
    rate_a, rate_x = float(a.mean()), float(x.mean())
    return McNemarResult(int(a.size), b, c, p_value, rate_a, rate_x, rate_x - rate_a)
