"""The ab-matrix flow on Dask worker processes gives the same rows as on threads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from critiquebench.analysis import connect
from critiquebench.pipeline import RunConfig, dependencies_for
from critiquebench.runtime.prefect_server import deliver_queued_records
from tests.integration.lazy_flow import run_ab_matrix
from tests.integration.replay_run import write_replay_file
from tests.prefect_state import DATABASE, seed_home

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]

OUTCOME_SQL = """
    SELECT case_id, arm, rep, defects_initial, defects_final, halt_reason, passed, loops
    FROM cases WHERE run_id = ? ORDER BY case_id, arm, rep
"""


def _config(tmp_path: Path, run_id: str, limit: int, **execution: Any) -> RunConfig:
    replay = write_replay_file(tmp_path / f"replay-{limit}.jsonl", limit=limit)
    return RunConfig(
        suite="basic",
        limit=limit,
        arms=("A", "B"),
        model=f"replay:{replay}",
        max_concurrency=2,
        output=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        run_id=run_id,
        **execution,
    )


def _run_on(cluster: Any, tmp_path: Path, run_id: str, limit: int) -> dict[str, Any]:
    """The flow's run of ``limit`` cases on the already running ``cluster``."""
    config = _config(
        tmp_path, run_id, limit=limit, task_runner="dask", dask_address=cluster.scheduler_address
    )
    return run_ab_matrix(config)


def _outcomes(output: Path, run_id: str) -> list[tuple[Any, ...]]:
    return connect(output).execute(OUTCOME_SQL, [run_id]).fetchall()


def _provider_lookups() -> tuple[int, int]:
    """Run inside a Dask worker: (providers built, providers reused) in this process."""
    info = dependencies_for.cache_info()
    return info.misses, info.hits


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A local two-process Dask cluster, as a scheduler already running elsewhere.

    A test that uses it reads what its own run changed (the providers built and reused
    in each worker before and after), not the workers' totals.
    """
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as running:
        yield running


def test_units_run_in_dask_worker_processes_and_match_threads(tmp_path: Path) -> None:
    threads = run_ab_matrix(_config(tmp_path, "threads-1", limit=3))
    dask = run_ab_matrix(_config(tmp_path, "dask-1", limit=3, task_runner="dask"))
    assert threads["worker_pids"] == [os.getpid()]
    assert dask["worker_pids"] and os.getpid() not in dask["worker_pids"]
    assert len(dask["worker_pids"]) <= 2  # n_workers = max_concurrency
    rows = _outcomes(tmp_path / "runs", "dask-1")
    assert len(rows) == 6
    assert {row[5] for row in rows} >= {"single_draft", "visible_clean"}  # the replay varies
    assert rows == _outcomes(tmp_path / "runs", "threads-1")
    runs = connect(tmp_path / "runs").execute(
        "SELECT run_id, status, quality FROM runs ORDER BY run_id"
    )
    assert runs.fetchall() == [
        ("dask-1", "completed", "passed"),
        ("threads-1", "completed", "passed"),
    ]


def test_on_an_existing_cluster_under_the_temporary_api(
    tmp_path: Path, cluster: Any, prefect_home: Path, migrated_prefect_state: Path | None
) -> None:
    """Workers build the model once each, and report to the flow's temporary server.

    One run proves both (alone it took 17.5 s, the temporary server's start included).
    It is the first run on the module's cluster, so its workers have run no flow yet.
    """
    import psutil
    from distributed import Client
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        before = client.run(_provider_lookups)
    # No API URL: the flow starts a temporary server, as `critiquebench run` does. Unless
    # the flow names it, each worker process starts a temporary server (a child) of its own.
    # Its database is the session's home's, migrated already, as on a user's second run.
    if not (prefect_home / DATABASE).exists():
        seed_home(prefect_home, migrated_prefect_state)
    try:
        with temporary_settings(restore_defaults={PREFECT_API_URL}):
            result = _run_on(cluster, tmp_path, "dask-address-1", limit=4)
    finally:
        # Prefect keeps the server it started for the rest of this process's life (an
        # idle server costs ~1 CPU-s a minute): stop it once this run's records reached it.
        deliver_queued_records(timeout_s=30)
        SubprocessASGIServer().stop()
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        pids = client.run(os.getpid)
        lookups = client.run(_provider_lookups)
    assert set(result["worker_pids"]) <= set(pids.values())
    ran_units = {address for address, pid in pids.items() if pid in result["worker_pids"]}
    assert ran_units and os.getpid() not in result["worker_pids"]
    changed = {
        address: (built - before[address][0], reused - before[address][1])
        for address, (built, reused) in lookups.items()
    }
    for address, (built, _reused) in changed.items():
        assert built == (1 if address in ran_units else 0), (before, lookups)
    assert sum(built + reused for built, reused in changed.values()) == 8  # one per unit
    assert len(_outcomes(tmp_path / "runs", "dask-address-1")) == 8
    # Workers do have children: the judge's warm sandbox workers. None may be a server.
    servers = {
        pid: [
            child.pid for child in psutil.Process(pid).children(recursive=True) if _is_server(child)
        ]
        for pid in pids.values()
    }
    assert servers == {pid: [] for pid in pids.values()}


def _is_server(process: Any) -> bool:
    import psutil

    try:
        command = " ".join(process.cmdline())
    except psutil.Error:
        return False
    # By what it runs: other children (the mypy daemon's keeper) may carry a path
    # under the test's Prefect home in their command lines.
    return "uvicorn" in command or "prefect.server" in command


def test_an_address_without_the_dask_runner_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dask_address needs task_runner 'dask'"):
        _config(tmp_path, "refused-1", limit=1, dask_address="tcp://127.0.0.1:1")
