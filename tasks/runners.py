"""Where the run-units tasks execute: threads of the flow's process, or a Dask or Ray cluster.

Every unit is independent and its inputs (``Case``, ``Unit``, ``RunConfig``) pickle,
so the same tasks run unchanged in other processes or on other machines. Each worker
process builds the model once (``critiquebench.pipeline.dependencies_for`` is cached
per process), which also means each process has its own rate limiter.
The Dask and Ray integrations are imported only when chosen.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from prefect.context import FlowRunContext
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from critiquebench.pipeline import RUNNERS, RunnerName

__all__ = ["RUNNERS", "RunnerName", "make_task_runner", "started"]


def make_task_runner(
    name: RunnerName, max_workers: int, dask_address: str | None = None
) -> TaskRunner[Any]:
    """A task runner that runs ``max_workers`` units at once.

    - ``threads``: a thread pool in the flow's process (the default);
    - ``dask``: the Dask scheduler at ``dask_address``, or else a temporary local
      cluster of ``max_workers`` single-threaded worker processes;
    - ``ray``: a temporary local Ray instance with ``max_workers`` CPUs, or the
      cluster named by the ``RAY_ADDRESS`` environment variable.
    """
    if dask_address and name != "dask":
        raise ValueError(f"dask_address needs task_runner='dask', not {name!r}")
    if name == "threads":
        return ThreadPoolTaskRunner(max_workers=max_workers)
    if name == "dask":
        from prefect_dask.task_runners import DaskTaskRunner

        if dask_address:
            return DaskTaskRunner(address=dask_address)
        cluster = {
            "n_workers": max_workers,
            "processes": True,
            "threads_per_worker": 1,
            "dashboard_address": None,  # no Bokeh dashboard (not installed anyway)
        }
        return DaskTaskRunner(cluster_kwargs=cluster)
    if name == "ray":
        from prefect_ray.task_runners import RayTaskRunner  # untyped

        address = os.environ.get("RAY_ADDRESS")
        local = {"num_cpus": max_workers, "include_dashboard": False}
        ray: TaskRunner[Any] = RayTaskRunner(address=address, init_kwargs={} if address else local)
        return ray
    raise ValueError(f"unknown task runner {name!r}; available: {', '.join(RUNNERS)}")


@contextmanager
def started(runner: TaskRunner[Any]) -> Iterator[TaskRunner[Any]]:
    """Start ``runner`` for the current flow run, and shut it down afterwards.

    Tasks in other processes take the flow's Prefect settings with them. Under the
    temporary API (no ``PREFECT_API_URL``) each worker process would then start a
    temporary server of its own (seconds each, one more process per worker), so the
    flow's temporary server is named explicitly (it is on 127.0.0.1: local workers only).
    """
    flow_run = FlowRunContext.get()
    local_only = isinstance(runner, ThreadPoolTaskRunner)
    if flow_run and not PREFECT_API_URL.value() and not local_only:
        pinned: Any = temporary_settings(updates={PREFECT_API_URL: str(flow_run.client.api_url)})
    else:
        pinned = nullcontext()
    with pinned, runner:
        yield runner
