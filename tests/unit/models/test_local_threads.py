"""The embedded model leaves a core to the work beside it."""

from __future__ import annotations

import os

import pytest

from critiquebench.models._local import default_threads


@pytest.mark.parametrize(("usable", "threads"), [(1, 1), (2, 1), (8, 7)])
def test_the_model_takes_every_usable_core_but_one(
    monkeypatch: pytest.MonkeyPatch, usable: int, threads: int
) -> None:
    # The process's affinity, not the machine's core count: a container or a taskset
    # may allow fewer cores than the machine has.
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(usable)))
    assert default_threads() == threads
