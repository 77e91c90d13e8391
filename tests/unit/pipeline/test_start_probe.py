"""Starting a run probes the sandbox with the run's own judge, not a second one, also
after a head start (``warm_start``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import PythonJudge, is_full_sandbox
from critiquebench.pipeline import RunConfig, dependencies_for, start_run, warm_start
from tests.helpers import hollow_then_fixed_replay


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[PythonJudge]:
    """Every PythonJudge built while the test runs, in order."""
    built: list[PythonJudge] = []
    init = PythonJudge.__init__

    def counted(self: PythonJudge, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(PythonJudge, "__init__", counted)
    return built


def test_start_run_probes_with_the_judge_the_units_use(
    tmp_path: Path, made: list[PythonJudge]
) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=1)
    config = RunConfig(
        suite="basic", limit=1, model=f"replay:{replay}", output=tmp_path / "runs", run_id="p"
    )
    dependencies_for.cache_clear()
    plan = start_run(config)
    # One judge, started by the probe and then shared by the units of this process.
    assert len(made) == 1
    assert dependencies_for(config.provider_settings()).judge.get("python") is made[0]
    assert is_full_sandbox(plan.sandbox) or plan.sandbox.startswith("FALLBACK")
    dependencies_for.cache_clear()


def test_a_head_start_and_the_start_after_it_share_one_judge(
    tmp_path: Path, made: list[PythonJudge]
) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=1)
    config = RunConfig(
        suite="basic", limit=1, model=f"replay:{replay}", output=tmp_path / "runs", run_id="h"
    )
    dependencies_for.cache_clear()
    ahead = warm_start(config)
    plan = start_run(config)  # while the head start may still be building or probing
    # The head start probed with the judge the start then found: one judge, one probe's
    # worth of children, and both describe the same fences.
    assert len(made) == 1
    assert ahead.result() == plan.sandbox
    assert dependencies_for(config.provider_settings()).judge.get("python") is made[0]
    dependencies_for.cache_clear()
