"""Power by simulation: how many cases and reps make a verdict likely.

Uses the generative model of the ``sim:`` provider (``models/_sim.py``) directly,
without the loop or the judge: defect counts per (case, rep) are drawn, then the
same cluster bootstrap and acceptance rule as a real report decide.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from rich.table import Table

from critiquebench.analysis.stats._stats import (
    MIN_CASES,
    cluster_bootstrap_reduction,
    decide_acceptance,
)
from critiquebench.models import SimParams, shift_probability, true_reduction

# Cases tried by min_cases_for_power, smallest first.
CASE_GRID = (10, 15, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640)


@dataclass(frozen=True)
class PowerResult:
    """Verdict shares over simulated experiments of one design."""

    n_cases: int
    reps: int
    truth: float
    target: float
    experiments: int
    met: float
    not_met: float
    inconclusive: float


def simulate_defects(
    params: SimParams,
    n_cases: int,
    reps: int,
    retry_limit: int,
    rng: np.random.Generator,
    defects_per_bug: int = 5,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Kept defects of arms A and B, shape (n_cases, reps), under the sim's model."""
    case = rng.normal(0.0, params.het, (n_cases, 1))
    effect = case + rng.normal(0.0, params.noise, (n_cases, reps))
    buggy = rng.random((n_cases, reps)) < shift_probability(params.draft, effect)
    stays = (
        rng.random((n_cases, reps)) < (1.0 - shift_probability(params.fix, -effect)) ** retry_limit
    )
    baseline = np.where(buggy, float(defects_per_bug), 0.0)
    return baseline, np.where(buggy & stays, float(defects_per_bug), 0.0)


def params_for_effect(effect: float, retry_limit: int, base: SimParams | None = None) -> SimParams:
    """``base`` with the fix probability that plants ``effect`` as the true reduction."""
    base = base or SimParams()
    if retry_limit < 1:
        raise ValueError("with no fix round every arm equals A: the reduction is 0")
    low, high = 0.0, 1.0
    if not true_reduction(dataclasses.replace(base, fix=0.0), retry_limit) <= effect <= 1.0:
        raise ValueError(f"effect must be in [0, 1], got {effect}")
    for _ in range(60):  # bisection: the reduction rises with the fix probability
        middle = (low + high) / 2
        if true_reduction(dataclasses.replace(base, fix=middle), retry_limit) < effect:
            low = middle
        else:
            high = middle
    return dataclasses.replace(base, fix=(low + high) / 2)


def estimate_power(
    params: SimParams,
    *,
    target: float,
    n_cases: int,
    reps: int,
    retry_limit: int,
    experiments: int = 200,
    resamples: int = 1_000,
    seed: int = 0,
) -> PowerResult:
    """Share of simulated experiments whose verdict is met / not met / inconclusive."""
    if experiments < 1 or n_cases < 1 or reps < 1:
        raise ValueError("experiments, n_cases and reps must be at least 1")
    truth = true_reduction(params, retry_limit)
    if n_cases < MIN_CASES:
        # The acceptance rule calls a run with fewer cases inconclusive whatever its
        # counts, so no experiment needs drawing. Measured gain: the design note a `run`
        # of 2 cases works out before its first unit took 0.10 CPU-s, 0.002 with this.
        return PowerResult(
            n_cases=n_cases, reps=reps, truth=truth, target=target, experiments=experiments,
            met=0.0, not_met=0.0, inconclusive=1.0,
        )  # fmt: skip
    rng = np.random.default_rng(seed)
    verdicts: Counter[str] = Counter()
    for experiment in range(experiments):
        baseline, treatment = simulate_defects(params, n_cases, reps, retry_limit, rng)
        estimate = cluster_bootstrap_reduction(
            baseline.tolist(), treatment.tolist(), resamples=resamples, seed=experiment
        )
        verdicts[decide_acceptance(estimate, target).verdict] += 1
    return PowerResult(
        n_cases=n_cases,
        reps=reps,
        truth=truth,
        target=target,
        experiments=experiments,
        met=verdicts["met"] / experiments,
        not_met=verdicts["not met"] / experiments,
        inconclusive=verdicts["inconclusive"] / experiments,
    )


def min_cases_for_power(
    params: SimParams,
    *,
    target: float,
    reps: int,
    retry_limit: int,
    power: float = 0.80,
    experiments: int = 200,
    seed: int = 0,
) -> tuple[int | None, list[PowerResult]]:
    """The fewest cases of :data:`CASE_GRID` (>= MIN_CASES) that reach the right verdict
    (met when the truth is at or above the target, else not met) with probability
    ``power``, and every design tried; None when even the largest falls short."""
    verdict = "met" if true_reduction(params, retry_limit) >= target else "not met"
    tried: list[PowerResult] = []
    for n_cases in (n for n in CASE_GRID if n >= MIN_CASES):
        result = estimate_power(
            params, target=target, n_cases=n_cases, reps=reps, retry_limit=retry_limit,
            experiments=experiments, seed=seed,
        )  # fmt: skip
        tried.append(result)
        share = {"met": result.met, "not met": result.not_met}[verdict]
        if share >= power:
            return n_cases, tried
    return None, tried


def power_table(results: list[PowerResult]) -> Table:
    """One row per design: the chance of each verdict."""
    table = Table(title="verdict probabilities by design (simulated)", title_justify="left")
    for header in ("cases", "reps", "truth", "target", "met", "not met", "inconclusive", "K"):
        table.add_column(header, justify="right")
    for r in results:
        table.add_row(
            str(r.n_cases), str(r.reps), f"{r.truth:.3f}", f"{r.target:.0%}", f"{r.met:.0%}",
            f"{r.not_met:.0%}", f"{r.inconclusive:.0%}", str(r.experiments),
        )  # fmt: skip
    return table
