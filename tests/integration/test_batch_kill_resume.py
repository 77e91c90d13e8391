"""A run writing batches of units, killed mid-run, resumes losing only the units of the
batch it was in (not yet written), never half a batch, and repeating nothing written."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from critiquebench.analysis import connect
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from tests.helpers import written_identities, written_units

pytestmark = pytest.mark.slow

BATCH = 4
SETTINGS = {
    "suite": "basic", "limit": 6, "arms": "A,B", "reps": 2, "cache": False,
    "model": "sim:fix=0.6,draft=0.5,latency=0.2", "run_id": "killed",
}  # fmt: skip

RUNNER = f"""
import sys
from critiquebench.pipeline import (
    BatchWriter, RunConfig, batch_prefix, run_unit, start_run, unit_batches,
)
config = RunConfig.model_validate({{**{SETTINGS!r}, "output": sys.argv[1]}})
plan = start_run(config)
for index, batch in enumerate(unit_batches(plan.work, 1, max_batch={BATCH})):
    with BatchWriter(config, batch_prefix(plan.invocation, index)) as writer:
        for case, unit in batch:
            run_unit(case, unit, config, writer)
"""


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def test_a_killed_batch_run_loses_only_the_batch_in_flight(tmp_path: Path) -> None:
    output = tmp_path / "runs"
    run_dir = output / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    first = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(output)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_die_with_parent,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while written_units(run_dir) < 2 * BATCH:
            assert first.poll() is None, first.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "no two batches landed before the deadline"
            time.sleep(0.05)
    finally:
        first.kill()
        first.wait()
    landed = written_identities(run_dir)
    assert len(landed) % BATCH == 0 and 2 * BATCH <= len(landed) < 24  # whole batches only

    config = RunConfig.model_validate({**SETTINGS, "output": output})
    plan = start_run(config)
    assert plan.skipped == len(landed) and len(plan.work) == 24 - len(landed)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    assert finish_run(plan, failed=0).status == "completed"
    assert landed <= written_identities(run_dir)
    counted = connect(output, ["killed"]).execute(
        "SELECT count(*), count(DISTINCT (case_id, arm, rep)) FROM cases"
    )
    assert counted.fetchone() == (24, 24)
    attempts = connect(output, ["killed"]).execute(
        "SELECT count(DISTINCT (case_id, arm, rep)) FROM attempts"
    )
    assert attempts.fetchone() == (24,)
