"""A cluster run end to end: Dask workers in processes of their own, with their own
home and temporary folders, that share nothing with the flow but an S3-compatible
store (moto on 127.0.0.1), give the rows of a run on local threads, and pay for each
distinct model call once across all of them."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from upath import UPath

from critiquebench.analysis import connect
from critiquebench.models import SharedCallCache
from critiquebench.pipeline import RunConfig
from tests.integration.lazy_flow import run_ab_matrix
from tests.s3_server import S3Server, s3_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.own_process,
    pytest.mark.usefixtures("prefect_harness"),
]

OUTCOME_SQL = """
    SELECT case_id, arm, rep, defects_initial, defects_final, halt_reason, passed, loops,
           calls, tokens_in, tokens_out
    FROM cases ORDER BY case_id, arm, rep
"""
MODEL = "sim:fix=0.6,draft=0.4,latency=0.3"


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _scheduler_address(info: Path, scheduler: subprocess.Popen[bytes]) -> str:
    """The address the scheduler bound, from the file it writes once it listens."""
    deadline = time.monotonic() + 180
    while True:
        with contextlib.suppress(FileNotFoundError, ValueError):  # not (all) written yet
            return str(json.loads(info.read_text())["address"])
        if scheduler.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the Dask scheduler did not start (exit {scheduler.poll()})")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with s3_server() as running:
        running.make_bucket("cluster")
        yield running


def _own_environment(server: S3Server, home: Path, api_url: str) -> dict[str, str]:
    """A worker's environment: its own home and temp folder; the store and the API."""
    (home / "tmp").mkdir(parents=True)
    keep = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}
    return {
        **keep,
        **server.environment(),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "PREFECT_HOME": str(home / "prefect"),
        "PREFECT_API_URL": api_url,
        "PYTHONPATH": os.pathsep.join(sys.path),
    }


@pytest.fixture()
def workers(server: S3Server, tmp_path: Path, prefect_api_url: str) -> Iterator[str]:
    """A scheduler and two worker processes (no nanny), each with its own folders.

    The scheduler picks its own port and writes the address it bound to a file: a port
    chosen free beforehand could be taken by another process before the scheduler binds
    it, and the workers and the flow would then reach whatever listens there."""
    from distributed import Client

    info = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    started = [
        subprocess.Popen(
            [*dask, "--host", "127.0.0.1", "--port", "0", "--scheduler-file", str(info),
             "--dashboard-address", ":0"],
            env=_own_environment(server, tmp_path / "scheduler", prefect_api_url),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
    ]  # fmt: skip
    try:
        address = _scheduler_address(info, started[0])
        for index in range(2):
            started.append(
                subprocess.Popen(
                    [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads",
                     "1", "--no-nanny", "--no-dashboard", "--name", f"w{index}"],
                    env=_own_environment(server, tmp_path / f"worker-{index}", prefect_api_url),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent,
                )
            )  # fmt: skip
        with Client(address, timeout=120, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=180)
        yield address
    finally:
        for process in started:
            process.kill()
            process.wait(timeout=30)


def _config(output: str | Path, cache: str | Path, run_id: str, **execution: Any) -> RunConfig:
    return RunConfig.model_validate(
        {
            "suite": "basic", "limit": 3, "reps": 2, "arms": "A,B", "model": MODEL,
            "max_concurrency": 2, "output": output, "cache_dir": cache, "run_id": run_id,
            **execution,
        }
    )  # fmt: skip


def _run_or_explain(config: RunConfig) -> dict[str, Any]:
    """The flow's outcome; an incomplete run fails the test with each unit's error, which
    the flow's message alone (a count) does not say."""
    from critiquebench.pipeline import RunIncomplete

    try:
        return run_ab_matrix(config)
    except RunIncomplete as incomplete:
        errors = connect(config.output, [config.run_id]).execute(
            "SELECT case_id, arm, rep, error FROM cases WHERE error IS NOT NULL ORDER BY ALL"
        )
        listed = "\n".join(" ".join(map(str, row)) for row in errors.fetchall())
        pytest.fail(f"{incomplete}\nunits' errors:\n{listed}")


def test_share_nothing_workers_on_s3_match_a_local_thread_run(
    server: S3Server, workers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from distributed import Client

    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    local = _run_or_explain(_config(tmp_path / "runs", tmp_path / "cache", "threads-1"))
    remote = _run_or_explain(
        _config(
            "s3://cluster/runs", "s3://cluster/cache", "cluster-1",
            task_runner="dask", dask_address=workers,
        )
    )  # fmt: skip
    assert local["status"] == remote["status"] == "completed"
    with Client(workers, set_as_default=False) as client:
        worker_pids = set(client.run(os.getpid).values())
    assert set(remote["worker_pids"]) <= worker_pids and len(remote["worker_pids"]) == 2
    assert not (tmp_path / "s3:").exists()

    rows = connect("s3://cluster/runs", ["cluster-1"]).execute(OUTCOME_SQL).fetchall()
    assert len(rows) == 12
    assert rows == connect(tmp_path / "runs", ["threads-1"]).execute(OUTCOME_SQL).fetchall()

    # One model call per distinct cache key across both workers: every call paid for
    # is one entry of the shared cache, and arms A and B share their first drafts.
    calls = connect("s3://cluster/runs", ["cluster-1"]).execute(
        "SELECT count(*) FILTER (WHERE NOT cached), count(*) FROM calls"
    )
    paid, total = calls.fetchone() or (0, 0)
    assert paid == len(SharedCallCache(UPath("s3://cluster/cache")))
    assert paid < total
    runs = connect("s3://cluster/runs", ["cluster-1"]).execute("SELECT status, quality FROM runs")
    assert runs.fetchall() == [("completed", "passed")]
    assert UPath("s3://cluster/runs/cluster-1/report.json").exists()
