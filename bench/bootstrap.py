"""Time of the paired bootstrap at report scale: 10,000 resamples of 1,000 pairs.

Run: .venv/bin/python bench/bootstrap.py
"""

from __future__ import annotations

import time

import numpy as np

from critiquebench.analysis._stats import paired_bootstrap_reduction


def main() -> None:
    rng = np.random.default_rng(0)
    baseline = rng.poisson(rng.gamma(2.0, 1.0, size=1_000))
    treatment = rng.binomial(baseline, 0.4)
    started = time.perf_counter()
    result = paired_bootstrap_reduction(baseline.tolist(), treatment.tolist(), resamples=10_000)
    elapsed = time.perf_counter() - started
    print(
        f"paired bootstrap, {result.n_pairs} pairs x {result.resamples_used} resamples: "
        f"{elapsed:.3f} s (reduction {result.estimate:.3f}, "
        f"95% CI {result.low:.3f} to {result.high:.3f})"
    )


if __name__ == "__main__":
    main()
