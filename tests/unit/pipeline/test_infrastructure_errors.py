"""Infrastructure failures stop a unit with an error and are never counted as defects."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from critiquebench.critics import Critic
from critiquebench.judges import JudgeResult, PythonJudge
from critiquebench.loop import LoopDependencies, LoopSettings, run_loop
from critiquebench.models import ReplayProvider, ScriptedProvider
from critiquebench.pipeline import ResultStore, RunConfig, Unit, execute_unit
from critiquebench.pipeline._compaction import supersede
from critiquebench.suites import Case
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case

CASE = make_case()
NO_ANSWERS = "scripted provider has no answers left"


class FlakyJudge:
    """The real judge, except that attempt number ``broken`` reports the sandbox down."""

    def __init__(self, inner: PythonJudge, broken: int) -> None:
        self.broken, self.calls, self.inner = broken, 0, inner

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        result = self.inner(case, artifact)
        self.calls += 1
        if self.calls - 1 == self.broken:
            return dataclasses.replace(result, infrastructure_error="sandbox did not start")
        return result


@pytest.mark.parametrize("arm", ["A", "B", "C"])
def test_judge_infrastructure_error_stops_the_unit_in_every_arm(
    judge: PythonJudge, arm: str
) -> None:
    provider = ScriptedProvider([fenced(WRONG_ADD), fenced(GOOD_ADD), "{}", "{}"])
    flaky = FlakyJudge(judge, broken=0)
    settings = LoopSettings(arm=arm)  # type: ignore[arg-type]
    critic = Critic(provider, settings.critic) if arm == "C" else None
    outcome = run_loop(CASE, LoopDependencies(provider, flaky, critic), settings)
    assert outcome.halt == "error"
    assert outcome.error == "infrastructure: judge: sandbox did not start"
    assert flaky.calls == 1 and len(provider.requests) == 1  # no critique, no fix round


def test_judge_infrastructure_error_in_a_later_round_stops_there(judge: PythonJudge) -> None:
    provider = ScriptedProvider([fenced(WRONG_ADD), fenced(GOOD_ADD)])
    outcome = run_loop(
        CASE, LoopDependencies(provider, FlakyJudge(judge, broken=1)), LoopSettings()
    )
    assert outcome.halt == "error" and outcome.error is not None
    assert outcome.error.startswith("infrastructure: judge:")
    assert len(outcome.attempts) == 2


def _config(tmp_path: Path) -> RunConfig:
    return RunConfig(suite="basic", model="local", output=tmp_path, run_id="r1")


def test_error_unit_rows_carry_the_error_and_never_pass(judge: PythonJudge, tmp_path: Path) -> None:
    deps = LoopDependencies(ScriptedProvider([]), judge)
    rows = execute_unit(CASE, Unit(CASE.id, "B", 0), deps, _config(tmp_path))
    assert rows.case["error"] == f"provider: actor call failed: {NO_ANSWERS}"
    assert rows.case["passed"] is False and rows.case["halt_reason"] == "error"
    assert rows.attempts == [] and len(rows.calls) == 1


def test_measured_units_have_no_error(judge: PythonJudge, tmp_path: Path) -> None:
    deps = LoopDependencies(ScriptedProvider([fenced(WRONG_ADD)]), judge)
    rows = execute_unit(CASE, Unit(CASE.id, "A", 0), deps, _config(tmp_path))
    assert rows.case["error"] is None and rows.case["defects_final"] == 2


def test_error_rows_are_not_finished_and_a_rerun_supersedes_them(
    judge: PythonJudge, tmp_path: Path
) -> None:
    config, store = _config(tmp_path), ResultStore(tmp_path)
    unit = Unit(CASE.id, "B", 0)
    failing = LoopDependencies(ScriptedProvider([]), judge)
    store.write_unit("r1", unit, execute_unit(CASE, unit, failing, config))
    assert store.finished_units("r1") == set()
    assert store.unit_errors("r1") == {unit.key: f"provider: actor call failed: {NO_ANSWERS}"}
    # What a start does before it retries the unit (start_run): set its rows aside.
    supersede(store, "r1", frozenset({unit.key}))
    assert store.unit_errors("r1") == {}
    working = LoopDependencies(ScriptedProvider([fenced(GOOD_ADD)]), judge)
    store.write_unit("r1", unit, execute_unit(CASE, unit, working, config))
    assert store.finished_units("r1") == {unit.key}
    live = pq.read_table(tmp_path / "r1" / "cases").to_pylist()
    assert [(row["error"], row["passed"]) for row in live] == [(None, True)]
    # The error row is kept, outside the folders the views read.
    archived = list((tmp_path / "r1" / "superseded" / unit.key).glob("*/cases.parquet"))
    assert len(archived) == 1
    assert pq.read_table(archived[0]).column("error").to_pylist()[0].startswith("provider:")
    assert (archived[0].parent / "calls.parquet").exists()
    assert pq.read_table(archived[0].parent / "attempts.parquet").num_rows == 0


def test_a_missing_replay_answer_at_run_time_is_a_provider_error(
    judge: PythonJudge, tmp_path: Path
) -> None:
    replay = tmp_path / "replay.jsonl"
    replay.write_text('{"case_id": "other", "answers": ["x"]}\n')
    deps = LoopDependencies(ReplayProvider(replay), judge)
    outcome = run_loop(CASE, deps, LoopSettings(), rep=1)
    assert outcome.halt == "error" and outcome.attempts == ()
    assert outcome.error == (
        f"provider: actor call failed: {replay}: no answers for case 't/add' (rep 1)"
    )
