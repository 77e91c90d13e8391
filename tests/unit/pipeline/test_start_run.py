"""``start_run`` given the cases its caller's preflight found runs no preflight of its
own; ``finish_run`` counts the units by their rows."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from critiquebench.pipeline import (
    ResultStore,
    RunConfig,
    Unit,
    dependencies_for,
    execute_unit,
    finish_run,
    run_unit,
    start_run,
    tally_units,
)
from critiquebench.pipeline import _run as run_module
from critiquebench.suites import Case
from tests.helpers import hollow_then_fixed_replay


@pytest.fixture(autouse=True)
def fresh_dependencies() -> Iterator[None]:
    """Each test builds its own model and judge (they are cached per process)."""
    dependencies_for.cache_clear()
    yield
    dependencies_for.cache_clear()


def _config(tmp_path: Path, run_id: str, limit: int = 2) -> RunConfig:
    replay = hollow_then_fixed_replay(tmp_path, limit=limit)
    return RunConfig(
        suite="basic", limit=limit, reps=2, model=f"replay:{replay}", cache=False,
        output=tmp_path / "runs", run_id=run_id,
    )  # fmt: skip


def _counted_preflights(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    preflight = run_module.preflight

    def counted(config: RunConfig) -> Any:
        calls.append(config.run_id)
        return preflight(config)

    monkeypatch.setattr(run_module, "preflight", counted)
    return calls


def _resumable(tmp_path: Path) -> RunConfig:
    """A run whose first start finished one unit, recorded one with an error, left the rest."""
    config = _config(tmp_path, "resumed")
    first = start_run(config)
    run_unit(*first.work[0], config)
    _write_errored(config, *first.work[1])
    finish_run(first, failed=0)
    return config


def _write_errored(config: RunConfig, case: Case, unit: Unit) -> None:
    """Run ``unit`` and write its rows as if its sandbox had failed."""
    rows = execute_unit(case, unit, dependencies_for(config.provider_settings()), config)
    rows = dataclasses.replace(rows, case={**rows.case, "error": "sandbox down"})
    ResultStore(config.output).write_unit(config.run_id, unit, rows)


def test_the_cases_given_stand_for_the_preflight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counted_preflights(monkeypatch)
    config = _config(tmp_path, "given")
    cases = run_module.preflight(config)
    plan = start_run(config, cases)
    assert calls == ["given"] and plan.planned == 8
    start_run(config)  # without them, its own preflight runs
    assert calls == ["given", "given"]


def test_a_resumed_start_plans_only_what_is_left(tmp_path: Path) -> None:
    plan = start_run(_resumable(tmp_path))
    assert (plan.planned, plan.skipped, plan.retried, len(plan.work)) == (8, 1, 1, 7)


def test_finish_run_counts_the_errored_and_missing_units(tmp_path: Path) -> None:
    config = _resumable(tmp_path)
    plan = start_run(config)
    # The unit the first start recorded with an error (work[0]) was set aside to be
    # retried, so only the finished unit has rows now.
    assert len(ResultStore(config.output).unit_errors(config.run_id)) == 1
    run_unit(*plan.work[1], config)
    _write_errored(config, *plan.work[2])  # five stay without rows, work[0] among them
    counted = tally_units(plan)
    assert (counted.errored, counted.missing) == (1, 5)
    end = finish_run(plan, failed=0)
    assert (end.status, end.errored, end.missing) == ("incomplete", 1, 5)
