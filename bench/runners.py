"""Per-task overhead of the task runners of ab-matrix: threads vs a Dask LocalCluster
(and a local Ray instance), with 2 workers, under one temporary Prefect API.

Two workloads of 40 tasks each: an empty task that takes a unit's inputs (what the
runner itself costs per task), and real units of 20 `basic` cases x arms A, B on the
replay model (one answer per unit, judged in a child process). The runner's start-up
(cluster, worker imports, first model build) is timed apart, with one warm-up unit
per worker; the per-task numbers are steady-state wall time / 40.

Run: .venv/bin/python bench/runners.py [threads dask ray]   (default: threads dask;
a local Ray instance keeps a token in ~/.ray/auth_token and session files in /tmp/ray)
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from critiquebench.runtime.prefect_env import configure_prefect_environment

WORKERS = 2
CASES = 20  # x arms A, B = 40 units


def main(names: list[str]) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="cb-bench-runners-"))
    try:
        _bench(names, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _bench(names: list[str], scratch: Path) -> None:
    configure_prefect_environment(scratch / "prefect")
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # the in-process scheduler
    # Prefect reads its environment at import, so everything using it comes after.
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE
    from prefect.futures import wait

    from critiquebench.pipeline import RunConfig, expand_matrix, run_unit
    from critiquebench.suites import Case, load_suite
    from tasks.run_unit import run_unit_task
    from tasks.runners import RunnerName, make_task_runner, started

    @task(name="empty", cache_policy=NO_CACHE, persist_result=False)
    def empty_task(case: Case, unit: Any, config: RunConfig) -> None:
        return None

    cases = load_suite("basic", limit=CASES)
    replay = scratch / "replay.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"case_id": c.id, "answers": [f"```python\n{c.reference_solution}\n```"]})
            + "\n"
            for c in cases
        )
    )
    config = RunConfig(
        limit=CASES,
        model=f"replay:{replay}",
        max_concurrency=WORKERS,
        output=scratch / "runs",
        cache=False,
        run_id="bench",
    )
    work = expand_matrix(cases, config)

    started_at = time.perf_counter()
    for case, unit in work:
        run_unit(case, unit, config)
    direct = (time.perf_counter() - started_at) / len(work)
    print(f"{len(work)} units, {WORKERS} workers; run_unit alone, sequential: {direct:.3f} s/unit")

    @flow(name="bench-runners", validate_parameters=False)  # RunnerName is a local import
    def measure(name: RunnerName) -> dict[str, float]:
        times: dict[str, float] = {}
        clock = time.perf_counter()
        with started(make_task_runner(name, WORKERS)) as runner:
            warm_up = [
                runner.submit(run_unit_task, {"case": c, "unit": u, "config": config})
                for c, u in work[:WORKERS]
            ]
            wait(warm_up)
            times["start"] = time.perf_counter() - clock
            for label, fn in (("empty", empty_task), ("unit", run_unit_task)):
                clock = time.perf_counter()
                futures = [
                    runner.submit(fn, {"case": c, "unit": u, "config": config}) for c, u in work
                ]
                for future in futures:
                    future.result()
                times[label] = (time.perf_counter() - clock) / len(work)
        return times

    results = {name: measure(name) for name in names}
    header = f"{'runner':8s} {'start-up s':>10s} {'empty s/task':>13s} {'unit s/unit':>12s}"
    print(header)
    for name, times in results.items():
        print(f"{name:8s} {times['start']:10.1f} {times['empty']:13.3f} {times['unit']:12.3f}")
    base = results.get("threads")
    for name, times in results.items():
        if base and name != "threads":
            print(
                f"{name} / threads: empty task {times['empty'] / base['empty']:.2f}x, "
                f"unit {times['unit'] / base['unit']:.2f}x"
            )


if __name__ == "__main__":  # Dask and Ray start worker processes that import this file
    main(sys.argv[1:] or ["threads", "dask"])
