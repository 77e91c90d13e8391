"""A start of a run begun ahead (``begin_run``) plans what ``start_run`` alone plans,
runs the preflight checks once, and is taken only by the start it was made for."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from critiquebench.pipeline import (
    ResultStore,
    RunConfig,
    begin_run,
    dependencies_for,
    finish_run,
    run_unit,
    start_run,
    tally_ahead,
    tally_units,
)
from critiquebench.pipeline import _head_start as head_start_module
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
    preflight = head_start_module.preflight

    def counted(config: RunConfig) -> Any:
        calls.append(config.run_id)
        return preflight(config)

    monkeypatch.setattr(head_start_module, "preflight", counted)
    return calls


def _resumable(tmp_path: Path) -> RunConfig:
    """A run whose first start finished one unit, recorded one with an error, left the rest."""
    config = _config(tmp_path, "resumed")
    first = start_run(config)
    run_unit(*first.work[0], config)
    case, unit = first.work[1]
    store = ResultStore(config.output)
    run_unit(case, unit, config)
    errored = store.table_dir(config.run_id, "cases") / f"{unit.key}.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(errored)
    column = table.schema.get_field_index("error")
    table = table.set_column(column, "error", pa.array(["sandbox down"], pa.string()))
    pq.write_table(table, errored)
    finish_run(first, failed=0)
    return config


def test_a_head_start_plans_what_start_run_alone_plans(tmp_path: Path) -> None:
    config = _resumable(tmp_path)
    alone = start_run(config)
    ahead = start_run(config, begin_run(config))
    for field in ("work", "planned", "skipped", "retried", "keys", "sandbox"):
        assert getattr(ahead, field) == getattr(alone, field), field
    assert (alone.planned, alone.skipped, alone.retried, len(alone.work)) == (8, 1, 1, 7)


def test_an_offered_head_start_is_taken_once_by_its_own_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counted_preflights(monkeypatch)
    config = _config(tmp_path, "offered")
    head = begin_run(config)
    assert calls == ["offered"]
    other = config.model_copy(update={"run_id": "other"})
    with head.offered():
        start_run(other)  # another run's start does not take it: its own preflight runs
        assert calls == ["offered", "other"]
        # The flow gets its configuration back from its parameters: an equal copy.
        plan = start_run(RunConfig.model_validate(config.model_dump()))
        assert calls == ["offered", "other"]  # taken: no second preflight
        start_run(config)  # one head start serves one start
        assert calls == ["offered", "other", "offered"]
    assert plan.planned == 8 and ResultStore(config.output).run_rows("offered")


def test_the_cases_given_stand_for_the_preflight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counted_preflights(monkeypatch)
    config = _config(tmp_path, "given")
    cases = head_start_module.preflight(config)
    plan = start_run(config, begin_run(config, cases))
    assert calls == ["given"] and plan.planned == 8


def test_the_slow_part_runs_on_its_own_thread_and_its_error_surfaces_in_start_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, "broken")
    release, threads = threading.Event(), []

    def blocked(settings: Any) -> Any:
        threads.append(threading.current_thread().name)
        release.wait(30)
        raise RuntimeError("the model file is unreadable")

    monkeypatch.setattr("critiquebench.pipeline._run.dependencies_for", blocked)
    head = begin_run(config)  # returns while the preparation waits
    release.set()
    with pytest.raises(RuntimeError, match="unreadable"):
        start_run(config, head)
    assert threads == ["run-head-start"]
    assert not ResultStore(config.output).table_dir("broken", "runs").exists()


def test_a_head_start_of_another_run_is_refused(tmp_path: Path) -> None:
    config = _config(tmp_path, "mine")
    head = begin_run(config)
    with pytest.raises(ValueError, match="another run's"):
        start_run(config.model_copy(update={"run_id": "yours"}), head)
    head.result()  # let its probe end before the judge is cleared


def test_the_tally_counted_ahead_is_the_one_finish_run_counts(tmp_path: Path) -> None:
    config = _resumable(tmp_path)
    plan = start_run(config)
    run_unit(*plan.work[1], config)  # not the errored unit (work[0]); five stay without rows
    counted = tally_ahead(plan).result()
    assert counted == tally_units(plan)
    assert (counted.errored, counted.missing) == (1, 5)
    end = finish_run(plan, failed=0, tally=counted)
    assert (end.status, end.errored, end.missing) == ("incomplete", 1, 5)
    assert end == finish_run(plan, failed=0)
