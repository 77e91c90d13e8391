"""How a run's cost grows with its units: 1,000, 10,000 and 100,000 units of a
simulated model (HumanEval x arms A, B x reps), through the library loop.

For each size, in fresh processes and a fresh output folder (no call cache):

- run: ``start_run``, batches of units (``unit_batches``, each written by a
  ``BatchWriter``) on ``--workers`` threads as the flow runs them, ``compact_run``,
  ``finish_run``;
- the run's report: ``report`` once, as the flow's report child writes it when a run
  ends, rendering every unit's story (once per state of the results, see
  ``write_units_stories``);
- report, check, sql: the CLI commands a user runs next on the finished run
  (``sql`` with one query counting the cases).

Printed per size: units, wall seconds of each step (the compaction's apart), files
written under the run before the compaction and left after it, the run process's
resident memory after each tenth of its units (flat, or growing with them) and its
peak before the compaction apart, the peak memory
(``VmHWM``, see critiquebench.runtime.peak_memory) of every process, and the CPU
seconds of each (user + system, its children's included): on a shared machine the
wall time says more about the others' load than about the step.
``--output`` puts the runs on another store (e.g. ``s3://bucket/scale``); the local
default is a temporary folder removed at the end.

Run: .venv/bin/python bench/scale.py                    (1,000 and 10,000 units)
     .venv/bin/python bench/scale.py --sizes 1000 10000 100000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HUMANEVAL_CASES = 164
ARMS = ("A", "B")

RUN = r"""
import itertools, json, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from critiquebench.runtime.peak_memory import peak_rss_mib
from critiquebench.pipeline import (
    BatchWriter, RunConfig, batch_prefix, compact_run, finish_run, run_unit, start_run,
    unit_batches,
)
output, reps, workers, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
config = RunConfig.model_validate({
    "suite": "humaneval", "limit": cases, "arms": "A,B", "reps": reps,
    "model": "sim:fix=0.6,draft=0.5",
    "cache": False, "output": output, "run_id": "scale", "max_concurrency": workers,
})
started = time.perf_counter()
plan = start_run(config)

done = itertools.count(1)  # units run so far (next() is atomic under the GIL)
ran = [0]

def run_batch(numbered):
    index, batch = numbered
    with BatchWriter(config, batch_prefix(plan.invocation, index)) as writer:
        for case, unit in batch:
            run_unit(case, unit, config, writer)
            ran[0] = next(done)

def rss_mib():
    for line in open("/proc/self/status", encoding="ascii"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")

# The resident memory after each tenth of the units: flat, or growing with them.
trace, finished = [], threading.Event()

def sample():
    step, mark = max(1, plan.planned // 10), 1
    while not finished.wait(0.5):
        if ran[0] >= mark * step:
            trace.append((ran[0], round(rss_mib())))
            mark = ran[0] // step + 1

sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
# As the flow does: batches of units (one task each), then one compaction.
with ThreadPoolExecutor(workers) as pool:
    list(pool.map(run_batch, enumerate(unit_batches(plan.work, workers))))
finished.set()
sampler.join()
units_s = time.perf_counter() - started
units_mib = peak_rss_mib()
run_dir = config.output / "scale"
written = sum(1 for path in run_dir.rglob("*") if path.is_file())
compacting = time.perf_counter()
compact_run(config.output, "scale")
compact_s = time.perf_counter() - compacting
end = finish_run(plan, failed=0)
print(json.dumps({"units": plan.planned, "status": end.status, "units_s": units_s,
                  "compact_s": compact_s, "written": written,
                  "wall_s": time.perf_counter() - started, "peak_mib": peak_rss_mib(),
                  "units_mib": units_mib, "trace": trace}))
"""

CLI = r"""
import atexit, json, sys
from critiquebench.runtime.peak_memory import peak_rss_mib
atexit.register(lambda: print("PEAK " + json.dumps(peak_rss_mib()), file=sys.stderr))
from critiquebench.cli import app
app(sys.argv[1:])
"""


def _python(code: str, *args: str) -> tuple[float, float, str, str]:
    """Run ``code`` in a fresh interpreter: its wall and CPU seconds (user + system of
    it and every child it waited for), stdout and stderr."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):  # check/report exit 1 on a failed gate, still measured
        raise RuntimeError(f"{args}: exit {done.returncode}\n{done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout, done.stderr


def _peak(stderr: str) -> float:
    lines = [line for line in stderr.splitlines() if line.startswith("PEAK ")]
    return float(json.loads(lines[-1][5:])) if lines else float("nan")


def _files(output: str) -> int:
    from upath import UPath

    root = UPath(output) if "://" in output else Path(output)
    run = root / "scale"
    return sum(1 for path in run.rglob("*") if path.is_file())


def measure(size: int, output: str, workers: int, cases: int) -> dict[str, Any]:
    """Run ``size`` units (rounded up to whole reps of ``cases`` cases x arms) into
    ``output`` and time the readers."""
    reps = math.ceil(size / (cases * len(ARMS)))
    _, run_cpu, out, _ = _python(RUN, output, str(reps), str(workers), str(cases))
    run = json.loads(out.strip().splitlines()[-1])
    found: dict[str, Any] = {
        "run_cpu": run_cpu,
        "units": run["units"], "run_s": run["wall_s"], "run_mib": run["peak_mib"],
        "units_mib": run["units_mib"], "trace": run["trace"],
        "compact_s": run["compact_s"], "written": run["written"], "files": _files(output),
    }  # fmt: skip
    commands = {
        "first_report": ["report", "scale", "--output", output],
        "report": ["report", "scale", "--output", output],
        "check": ["check", "scale", "--output", output],
        "sql": ["sql", "SELECT count(*) FROM cases", "--output", output, "--run", "scale"],
    }
    for name, args in commands.items():
        wall, cpu, _, err = _python(CLI, *args)
        found[f"{name}_s"] = wall
        found[f"{name}_cpu"] = cpu
        found[f"{name}_mib"] = _peak(err)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cases", type=int, default=HUMANEVAL_CASES, help="HumanEval cases")
    parser.add_argument("--output", help="store of the runs (default: a temporary folder)")
    options = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.1f} on {os.cpu_count()} cores")
    header = (
        "units | files written / left | run s (compaction s) | run's report s | report s "
        "| check s | sql s | peak MiB run/run's report/report/check/sql "
        "| CPU s run/run's report/report/check/sql"
    )
    print(header)
    for size in options.sizes:
        with tempfile.TemporaryDirectory(prefix="cb-scale-") as folder:
            output = options.output or str(Path(folder) / "runs")
            if options.output:
                output = f"{options.output.rstrip('/')}/{size}"
            m = measure(size, output, options.workers, options.cases)
        print(
            f"{m['units']:,.0f} | {m['written']:,.0f} / {m['files']:,.0f} | {m['run_s']:.1f} "
            f"({m['compact_s']:.1f}) | {m['first_report_s']:.1f} | {m['report_s']:.1f} | "
            f"{m['check_s']:.1f} | {m['sql_s']:.1f} | {m['run_mib']:.0f}/"
            f"{m['first_report_mib']:.0f}/{m['report_mib']:.0f}/{m['check_mib']:.0f}/"
            f"{m['sql_mib']:.0f} | {m['run_cpu']:.1f}/{m['first_report_cpu']:.1f}/"
            f"{m['report_cpu']:.1f}/{m['check_cpu']:.1f}/{m['sql_cpu']:.1f}",
            flush=True,
        )
        trace = ", ".join(f"{units:,}: {mib}" for units, mib in m["trace"])
        print(f"  run's RSS MiB by units run: {trace}; peak {m['units_mib']:.0f} before the "
              f"compaction, {m['run_mib']:.0f} after", flush=True)  # fmt: skip
        print(json.dumps(m), flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
