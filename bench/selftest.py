"""Does the report's 95% CI cover a planted effect? End to end, and at scale.

1. End to end: K seeded experiments of the `sim:` model through the real loop,
   judge, Parquet and report (the `critiquebench selftest` path), reps 1 and 3.
2. Statistics only: thousands of experiments drawn from the same model, the
   case-clustered bootstrap against the old row bootstrap, by number of cases;
   this is the evidence behind MIN_CASES.

Run: .venv/bin/python bench/selftest.py [K]   (K end-to-end experiments, default 20)
"""

from __future__ import annotations

import sys
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from critiquebench.analysis import (
    DEFAULT_PARAMS,
    MIN_CASES,
    SelftestSettings,
    cluster_bootstrap_reduction,
    decide_acceptance,
    paired_bootstrap_reduction,
    run_selftest,
    selftest_table,
    simulate_defects,
    simulate_selftest,
)
from critiquebench.models import true_reduction

RETRY_LIMIT = 2
STAT_EXPERIMENTS = 1_000


def by_cases() -> Table:
    """Coverage of the cluster and the row bootstrap as the number of cases grows."""
    truth = true_reduction(DEFAULT_PARAMS, RETRY_LIMIT)
    table = Table(title=f"statistics only, {STAT_EXPERIMENTS} experiments each, truth {truth:.3f}")
    for header in ("cases", "reps", "cluster coverage", "row coverage", "degenerate",
                   "verdict at 80%: met/not/inc."):  # fmt: skip
        table.add_column(header, justify="right")
    for n_cases in (5, 8, MIN_CASES, 20, 44, 100):
        for reps in (1, 3):
            rng = np.random.default_rng(n_cases * 10 + reps)
            hits = {"cluster": 0, "rows": 0}
            degenerate = 0
            verdicts = {"met": 0, "not met": 0, "inconclusive": 0}
            for index in range(STAT_EXPERIMENTS):
                a, x = simulate_defects(DEFAULT_PARAMS, n_cases, reps, RETRY_LIMIT, rng)
                if a.sum() == 0:
                    verdicts["inconclusive"] += 1
                    continue
                cluster = cluster_bootstrap_reduction(
                    a.tolist(), x.tolist(), resamples=1_000, seed=index
                )
                rows = paired_bootstrap_reduction(
                    a.ravel().tolist(), x.ravel().tolist(), resamples=1_000, seed=index
                )
                for name, estimate in (("cluster", cluster), ("rows", rows)):
                    low, high = estimate.low, estimate.high
                    hits[name] += low is not None and high is not None and low <= truth <= high
                degenerate += cluster.degenerate
                verdicts[decide_acceptance(cluster, 0.8).verdict] += 1
            share = "/".join(f"{verdicts[v] / STAT_EXPERIMENTS:.0%}" for v in verdicts)
            table.add_row(
                str(n_cases), str(reps), f"{hits['cluster'] / STAT_EXPERIMENTS:.1%}",
                f"{hits['rows'] / STAT_EXPERIMENTS:.1%}",
                f"{degenerate / STAT_EXPERIMENTS:.1%}", share,
            )  # fmt: skip
    return table


def main() -> None:
    experiments = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    console = Console(width=200)
    results = []
    for reps in (1, 3):
        started = time.perf_counter()
        settings = SelftestSettings(experiments=experiments, reps=reps, retry_limit=RETRY_LIMIT)
        results.append(run_selftest(settings))
        elapsed = time.perf_counter() - started
        console.print(f"end to end, reps {reps}: {experiments} experiments in {elapsed:.0f} s")
        bulk = SelftestSettings(
            experiments=5_000, reps=reps, retry_limit=RETRY_LIMIT, resamples=1_000
        )
        results.append(simulate_selftest(bulk, n_cases=44))
    console.print(selftest_table(results))
    started = time.perf_counter()
    console.print(by_cases())
    console.print(f"statistics-only table in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
