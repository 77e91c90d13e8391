"""Infrastructure failures end to end: CLI -> Prefect flow -> Parquet -> check -> rerun."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.analysis import connect
from critiquebench.cli import app
from critiquebench.judges import JudgeResult, PythonJudge
from critiquebench.pipeline import dependencies_for
from critiquebench.suites import Case, load_suite
from tests.helpers import hollow_then_fixed_replay

pytestmark = pytest.mark.usefixtures("prefect_harness")
runner = CliRunner()


def _judge_factory(broken_case: str | None, judged: list[str]) -> Callable[[], object]:
    """A PythonJudge whose sandbox "does not start" for one case; records what it judged."""

    def make() -> Callable[[Case, str], JudgeResult]:
        inner = PythonJudge()

        def judge(case: Case, artifact: str) -> JudgeResult:
            judged.append(case.id)
            result = inner(case, artifact)
            if case.id == broken_case:
                return dataclasses.replace(result, infrastructure_error="sandbox did not start")
            return result

        return judge

    return make


def _use_judge(monkeypatch: pytest.MonkeyPatch, factory: Callable[[], object]) -> None:
    # The judge is built once per process with the provider: rebuild it with ours.
    dependencies_for.cache_clear()
    monkeypatch.setattr("critiquebench.pipeline._run.python_judge", factory)


def test_infrastructure_errors_leave_the_run_incomplete_until_a_rerun_retries_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = load_suite("basic", limit=2)  # a sound case beside the broken one
    broken = cases[1].id
    replay = hollow_then_fixed_replay(tmp_path, limit=2)
    output = tmp_path / "runs"
    command = [
        "run", "--suite", "basic", "--limit", "2", "--model", f"replay:{replay}",
        "--output", str(output), "--run-id", "inc-1", "--prices", str(tmp_path / "none.json"),
    ]  # fmt: skip
    judged: list[str] = []
    _use_judge(monkeypatch, _judge_factory(broken, judged))
    try:
        first = runner.invoke(app, command)
    finally:
        dependencies_for.cache_clear()
    assert first.exit_code == 3, first.output
    assert "2 of 4 units did not finish" in first.output.replace("\n", " ")
    assert "--run-id inc-1" in first.output.replace("\n", " ")

    db = connect(output)
    assert db.execute("SELECT status, units_errored FROM runs").fetchall() == [("incomplete", 2)]
    errors = db.execute("SELECT arm, error, passed FROM cases WHERE error IS NOT NULL ORDER BY arm")
    # Excluded only because the control (the case's reference) failed too on this case.
    error = (
        "infrastructure: judge: sandbox did not start; the control (the case's reference "
        "solution) failed too: sandbox did not start"
    )
    assert errors.fetchall() == [("A", error, False), ("B", error, False)]
    check = runner.invoke(app, ["check", "inc-1", "--output", str(output)])
    assert check.exit_code == 1 and "sandbox did not start" in check.output

    judged.clear()
    _use_judge(monkeypatch, _judge_factory(None, judged))
    try:
        second = runner.invoke(app, command)
    finally:
        dependencies_for.cache_clear()
    assert second.exit_code == 0, second.output
    assert set(judged) == {broken}  # only the two failed units ran again

    db = connect(output)
    runs = db.execute(
        "SELECT status, units_skipped, units_retried, units_errored FROM runs "
        "ORDER BY invocation_started_at"
    ).fetchall()
    assert runs == [("incomplete", 0, 0, 2), ("completed", 2, 2, 0)]
    assert db.execute(
        "SELECT count(*), count(DISTINCT (case_id, arm, rep)), count(error) FROM cases"
    ).fetchone() == (4, 4, 0)
    assert db.execute("SELECT bool_and(passed) FROM cases WHERE arm = 'B'").fetchone() == (True,)
    superseded = sorted((output / "inc-1" / "superseded").glob("*/*/cases.parquet"))
    assert len(superseded) == 2  # the error rows are kept, outside the tables
    assert runner.invoke(app, ["check", "inc-1", "--output", str(output)]).exit_code == 0
