"""Choosing the task runner of the ab-matrix flow (tasks/runners.py); nothing is started.

Prefect and its runners are imported inside the tests: Prefect reads its settings at
import, and the test environment (conftest's prefect_home fixture) is set only once
tests run, after collection.
"""

from __future__ import annotations

from typing import Any

import pytest


def make_task_runner(*args: Any) -> Any:
    from tasks.runners import make_task_runner as make

    return make(*args)


def test_threads_by_default_width_is_max_concurrency() -> None:
    from prefect.task_runners import ThreadPoolTaskRunner

    assert make_task_runner("threads", 3) == ThreadPoolTaskRunner(max_workers=3)


def test_dask_starts_a_local_cluster_of_single_threaded_processes() -> None:
    from prefect_dask.task_runners import DaskTaskRunner

    runner = make_task_runner("dask", 4)
    assert isinstance(runner, DaskTaskRunner) and runner.address is None
    assert runner.cluster_kwargs == {
        "n_workers": 4,
        "processes": True,
        "threads_per_worker": 1,
        "dashboard_address": None,
    }


def test_dask_address_connects_to_an_existing_scheduler() -> None:
    from prefect_dask.task_runners import DaskTaskRunner

    runner = make_task_runner("dask", 4, "tcp://scheduler:8786")
    assert isinstance(runner, DaskTaskRunner)
    assert runner.address == "tcp://scheduler:8786" and runner.cluster_kwargs == {}


def test_ray_is_local_unless_ray_address_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect_ray.task_runners import RayTaskRunner

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    local = make_task_runner("ray", 2)
    assert isinstance(local, RayTaskRunner) and local.address is None
    assert local.init_kwargs["num_cpus"] == 2
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    remote = make_task_runner("ray", 2)
    assert remote.address == "ray://head:10001" and "num_cpus" not in remote.init_kwargs


def test_a_dask_address_needs_the_dask_runner_and_names_are_checked() -> None:
    with pytest.raises(ValueError, match="dask_address needs task_runner='dask'"):
        make_task_runner("threads", 2, "tcp://scheduler:8786")
    with pytest.raises(ValueError, match="available: threads, dask, ray"):
        make_task_runner("spark", 2)
