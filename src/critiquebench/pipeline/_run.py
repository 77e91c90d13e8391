"""Starting, running and finishing a run, independent of Prefect."""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
import platform
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from critiquebench.judges import PythonJudge, probe_sandbox
from critiquebench.loop import LoopDependencies
from critiquebench.models import (
    CachingProvider,
    CallCache,
    LimitedProvider,
    ModelProvider,
    RateLimiter,
    provider_from_spec,
)
from critiquebench.pipeline._config import ProviderSettings, RunConfig
from critiquebench.pipeline._schema import SCHEMA_VERSION
from critiquebench.pipeline._store import ResultStore
from critiquebench.pipeline._units import Unit, execute_unit, expand_matrix
from critiquebench.suites import Case, load_suite

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPlan:
    """What a start of a run will do: the units still missing, and bookkeeping."""

    config: RunConfig
    invocation: str
    started_at: dt.datetime
    work: list[tuple[Case, Unit]]
    planned: int
    skipped: int
    sandbox: str


@functools.cache
def dependencies_for(settings: ProviderSettings) -> LoopDependencies:
    """The model and judge of a run, created once per process and then shared.

    Memoising here is what makes the local model load once per worker process and
    gives every task of a run in that process the same rate limiter and cache.
    """
    provider: ModelProvider = LimitedProvider(
        provider_from_spec(settings.spec), RateLimiter(settings.limits)
    )
    if settings.cache_path is not None:
        # The cache sits outside the limiter: a hit spends no slot and no quota.
        provider = CachingProvider(provider, CallCache(settings.cache_path))
    return LoopDependencies(provider=provider, judge=PythonJudge())


def _versions() -> str:
    names = ("critiquebench", "prefect", "langgraph", "duckdb", "pyarrow", "llama_cpp_python")
    found: dict[str, str] = {"python": platform.python_version()}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return json.dumps(found, sort_keys=True)


def _run_row(
    plan: RunPlan,
    status: str,
    failed: int,
    finished: dt.datetime | None,
    quality: str | None = None,
) -> dict[str, Any]:
    config = plan.config
    return {
        "run_id": config.run_id,
        "schema_version": SCHEMA_VERSION,
        "invocation_started_at": plan.started_at,
        "finished_at": finished,
        "status": status,
        "suite": config.suite,
        "case_limit": config.limit,
        "arms": ",".join(config.arms),
        "reps": config.reps,
        "retry_limit": config.retry_limit,
        "feedback": config.feedback,
        "token_budget": config.token_budget,
        "model": config.model,
        "verifier_policy": config.verifier_policy,
        "reviewers": config.reviewers,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "max_concurrency": config.max_concurrency,
        "units_planned": plan.planned,
        "units_skipped": plan.skipped,
        "units_failed": failed,
        "quality": quality,
        "sandbox": plan.sandbox,
        "versions": _versions(),
    }


def start_run(config: RunConfig) -> RunPlan:
    """Load the suite, check the model spec, and list the units not yet written.

    Starting again with the same ``run_id`` resumes: finished units are skipped.
    """
    cases = load_suite(config.suite, config.limit)
    dependencies_for(config.provider_settings())  # fail here, before any unit, on a bad model spec
    store = ResultStore(config.output)
    done = store.finished_units(config.run_id)
    matrix = expand_matrix(cases, config)
    work = [(case, unit) for case, unit in matrix if unit.key not in done]
    started = dt.datetime.now(dt.UTC)
    plan = RunPlan(
        config=config,
        invocation=started.strftime("%Y%m%dT%H%M%S%fZ"),
        started_at=started,
        work=work,
        planned=len(matrix),
        skipped=len(matrix) - len(work),
        sandbox=probe_sandbox(),
    )
    if "unavailable" in plan.sandbox or "could not" in plan.sandbox:
        _log.warning("sandbox is weaker than configured: %s", plan.sandbox)
    store.write_run_row(config.run_id, plan.invocation, _run_row(plan, "running", 0, None))
    return plan


def run_unit(case: Case, unit: Unit, config: RunConfig) -> Unit:
    """Run one unit and write its rows at once, so a crash loses only units in flight."""
    rows = execute_unit(case, unit, dependencies_for(config.provider_settings()), config)
    ResultStore(config.output).write_unit(config.run_id, unit, rows)
    return unit


def finish_run(plan: RunPlan, failed: int, quality: str | None = None) -> None:
    """Record how this start of the run ended, and the data-quality outcome if checked."""
    status = "failed" if failed or quality == "failed" else "completed"
    row = _run_row(plan, status, failed, dt.datetime.now(dt.UTC), quality)
    ResultStore(plan.config.output).write_run_row(plan.config.run_id, plan.invocation, row)
