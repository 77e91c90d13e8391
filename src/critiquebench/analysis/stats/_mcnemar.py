"""Exact McNemar test on paired pass/fail outcomes, flat or clustered by case."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from critiquebench.analysis.stats._exact import binomial_half_cdf


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on paired pass/fail outcomes.

    ``b`` = baseline better (passed where the treatment failed), ``c`` = treatment
    better; ``pass_rate_difference`` is treatment minus baseline. For the flat test
    ``b`` and ``c`` count (case, rep) pairs; for :func:`clustered_mcnemar` they count
    cases, and ``note`` says so.
    """

    n_pairs: int
    b: int
    c: int
    p_value: float
    pass_rate_baseline: float
    pass_rate_treatment: float
    pass_rate_difference: float
    n_cases: int
    note: str | None = None


def _two_sided_sign_test(b: int, c: int) -> float:
    """Exact two-sided sign test on b against c discordant pairs (1 when there are none)."""
    return min(1.0, 2.0 * binomial_half_cdf(min(b, c), b + c))


def mcnemar_exact(
    baseline_passed: Sequence[bool], treatment_passed: Sequence[bool]
) -> McNemarResult:
    """Two-sided exact McNemar test (binomial on the discordant pairs) and pass rates.

    Valid only when the pairs are independent, i.e. one rep per case; with reps use
    :func:`clustered_mcnemar`. Raises ValueError on empty or unequal inputs.
    """
    a = np.asarray(baseline_passed, dtype=bool)
    x = np.asarray(treatment_passed, dtype=bool)
    if a.ndim != 1 or a.shape != x.shape:
        raise ValueError(f"need two flat sequences of equal length, got {a.shape} and {x.shape}")
    if a.size == 0:
        raise ValueError("no pairs")
    b = int((a & ~x).sum())
    c = int((~a & x).sum())
    rate_a, rate_x = float(a.mean()), float(x.mean())
    n = int(a.size)
    return McNemarResult(n, b, c, _two_sided_sign_test(b, c), rate_a, rate_x, rate_x - rate_a, n)


def clustered_mcnemar(
    baseline_by_case: Sequence[Sequence[bool]], treatment_by_case: Sequence[Sequence[bool]]
) -> McNemarResult:
    """Exact McNemar test with the case, not the (case, rep) pair, as the unit.

    A case's reps share its difficulty, so they are not independent pairs and
    counting them as such makes p far too small. Here each case is one sign: ``c``
    counts cases where the treatment passed more of the case's reps than the
    baseline, ``b`` the reverse, ties are concordant; the exact binomial test on
    ``b`` and ``c`` is then valid because cases are independent. With one rep per
    case this is exactly :func:`mcnemar_exact`. Pass rates are over all pairs.
    """
    if len(baseline_by_case) != len(treatment_by_case):
        raise ValueError(
            f"need the same cases in both arms, got {len(baseline_by_case)} and "
            f"{len(treatment_by_case)}"
        )
    if not baseline_by_case:
        raise ValueError("no pairs")
    b = c = 0
    flat_a: list[bool] = []
    flat_x: list[bool] = []
    for index, (reps_a, reps_x) in enumerate(zip(baseline_by_case, treatment_by_case, strict=True)):
        if len(reps_a) != len(reps_x) or not reps_a:
            raise ValueError(
                f"case {index}: need the same non-zero number of reps in both arms, got "
                f"{len(reps_a)} and {len(reps_x)}"
            )
        passed_a, passed_x = sum(map(bool, reps_a)), sum(map(bool, reps_x))
        b += passed_a > passed_x
        c += passed_x > passed_a
        flat_a.extend(map(bool, reps_a))
        flat_x.extend(map(bool, reps_x))
    rate_a = sum(flat_a) / len(flat_a)
    rate_x = sum(flat_x) / len(flat_x)
    note = None
    if len(flat_a) > len(baseline_by_case):
        note = (
            "reps > 1: b and c count cases (more reps passed in one arm), not pairs, "
            "because the reps of a case are not independent"
        )
    return McNemarResult(
        n_pairs=len(flat_a),
        b=b,
        c=c,
        p_value=_two_sided_sign_test(b, c),
        pass_rate_baseline=rate_a,
        pass_rate_treatment=rate_x,
        pass_rate_difference=rate_x - rate_a,
        n_cases=len(baseline_by_case),
        note=note,
    )
