"""Units of one arm share one compiled loop graph, with the same outcomes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from critiquebench import loop
from critiquebench.judges import PythonJudge
from critiquebench.loop import LoopDependencies, build_graph
from critiquebench.models import ScriptedProvider
from critiquebench.pipeline import RunConfig, Unit, _units, execute_unit
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case

CASE = make_case()
_TIMING = {"latency_s", "wall_s", "judge_latency_s", "finished_at", "model_latency_s"}


def _measured(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in _TIMING} for row in rows]


def _run_three(judge: PythonJudge, tmp_path: Path) -> list[tuple[Any, ...]]:
    provider = ScriptedProvider([fenced(WRONG_ADD), fenced(GOOD_ADD)] * 3)
    deps = LoopDependencies(provider, judge)
    config = RunConfig(arms=("A", "B"), output=tmp_path, run_id="g")
    found = []
    for rep in range(3):
        rows = execute_unit(CASE, Unit(CASE.id, "B", rep), deps, config)
        found.append((_measured([rows.case]), _measured(rows.attempts), _measured(rows.calls)))
    return found


def test_units_of_an_arm_compile_its_graph_once_with_the_same_rows(
    judge: PythonJudge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[str] = []

    def counted(deps: LoopDependencies, settings: Any) -> Any:
        builds.append(settings.spec.name)
        return build_graph(deps, settings)

    # _units imports build_graph when it compiles (LangGraph is not loaded with _units).
    monkeypatch.setattr(loop, "build_graph", counted)
    _units._compiled.cache_clear()
    shared = _run_three(judge, tmp_path / "shared")
    assert builds == ["B"]  # one compile for three units of arm B
    # The same units, each on a graph of its own, give the same rows.
    monkeypatch.setattr(_units, "_compiled", lambda deps, spec: None)
    assert _run_three(judge, tmp_path / "fresh") == shared
    assert [case[0]["halt_reason"] for case, _, _ in shared] == ["visible_clean"] * 3
