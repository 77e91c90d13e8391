"""Time of the case bootstrap at report scale: 10,000 resamples of 1,000 cases x 3 reps.

Run: .venv/bin/python bench/bootstrap.py
"""

from __future__ import annotations

import time

import numpy as np

from critiquebench.analysis import cluster_bootstrap_reduction


def main() -> None:
    rng = np.random.default_rng(0)
    rates = rng.gamma(2.0, 1.0, size=(1_000, 1)) * np.ones((1, 3))
    baseline = rng.poisson(rates)
    treatment = rng.binomial(baseline, 0.4)
    started = time.perf_counter()
    result = cluster_bootstrap_reduction(baseline.tolist(), treatment.tolist(), resamples=10_000)
    elapsed = time.perf_counter() - started
    print(
        f"case bootstrap, {result.n_cases} cases ({result.n_pairs} pairs) x "
        f"{result.resamples_used} resamples: "
        f"{elapsed:.3f} s (reduction {result.estimate:.3f}, "
        f"95% CI {result.low:.3f} to {result.high:.3f})"
    )


if __name__ == "__main__":
    main()
