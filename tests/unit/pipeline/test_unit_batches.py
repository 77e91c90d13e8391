"""Units are orchestrated in batches: every unit once, in order, workers kept busy."""

from __future__ import annotations

import pytest

from critiquebench.pipeline import RunConfig, Unit, batch_label, expand_matrix, unit_batches
from critiquebench.suites import load_suite


def _work(cases: int, reps: int = 3) -> list[tuple[object, Unit]]:
    config = RunConfig.model_validate({"suite": "basic", "reps": reps, "arms": "A,B"})
    return list(expand_matrix(load_suite("basic", limit=cases), config))


@pytest.mark.parametrize(("cases", "workers"), [(1, 1), (2, 2), (5, 2), (10, 1), (10, 4)])
def test_every_unit_lands_in_exactly_one_batch_in_order(cases: int, workers: int) -> None:
    work = _work(cases)
    batches = unit_batches(work, workers)
    assert [item for batch in batches for item in batch] == work
    assert all(batch for batch in batches)


def test_a_small_run_keeps_one_unit_per_task() -> None:
    work = _work(2, reps=1)  # 4 units
    assert [len(batch) for batch in unit_batches(work, 2)] == [1, 1, 1, 1]


def test_a_big_run_is_batched_but_leaves_every_worker_several_batches() -> None:
    work = [(None, Unit(f"case-{n}", "A", 0)) for n in range(984)]
    batches = unit_batches(work, 2)
    assert max(len(batch) for batch in batches) == 16
    assert len(batches) >= 4 * 2
    assert len(unit_batches(work[:40], 2)) == 8


def test_a_batch_is_named_after_its_units() -> None:
    one = [(None, Unit("HumanEval/3", "B", 2))]
    assert batch_label(one) == "HumanEval/3 arm B rep 2"
    three = [(None, Unit(f"c{n}", "A", 0)) for n in range(3)]
    assert batch_label(three) == "c0 arm A rep 0 .. c2 arm A rep 0 (3 units)"
