"""Infrastructure failures end to end: CLI -> Prefect flow -> Parquet -> check -> rerun."""

from __future__ import annotations

import dataclasses
import json
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


def _latest_artifact(key: str) -> tuple[str, str]:
    """The description and data of the newest Prefect artifact with ``key``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactCollectionFilter,
        ArtifactCollectionFilterKey,
    )

    with get_client(sync_client=True) as client:
        found = client.read_latest_artifacts(
            artifact_filter=ArtifactCollectionFilter(key=ArtifactCollectionFilterKey(any_=[key]))
        )
    assert len(found) == 1, found
    return found[0].description or "", str(found[0].data)


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
    printed = " ".join(first.output.split())
    assert "2 of 4 units did not finish" in printed
    assert "--run-id inc-1" in printed
    # No verdict while units are not measured, in the terminal and in report.json.
    assert "is INCONCLUSIVE: 2 units not measured" in printed
    assert "sensitivity, counting every unit not measured as a failure of its arm (A 1, B 1)" in (
        printed
    )
    assert f"{broken} rep 0: infrastructure: judge: sandbox did not start" in printed
    written = json.loads((output / "inc-1" / "report.json").read_text(encoding="utf-8"))
    b = next(arm for arm in written["arms"] if arm["arm"] == "B")
    assert (b["verdict"], b["verdict_reason"]) == ("inconclusive", "2 units not measured")
    assert {s["arm"]: (s["errors"], s["missing"], s["n"]) for s in written["sensitivity"]} == {
        "A": (1, 0, 2),
        "B": (1, 0, 2),
    }
    description, markdown = _latest_artifact("report-inc-1")  # what the Prefect UI shows
    assert description == "critiquebench report (inconclusive: 2 units not measured)"
    assert "is INCONCLUSIVE: 2 units not measured" in markdown
    assert "sensitivity, counting every unit not measured" in markdown

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
    checked = " ".join(check.output.split())
    assert "Verdict: inconclusive: 2 units not measured" in checked
    assert "arm B: sensitivity, counting every unit not measured" in checked

    judged.clear()
    _use_judge(monkeypatch, _judge_factory(None, judged))
    try:
        second = runner.invoke(app, command)
    finally:
        dependencies_for.cache_clear()
    assert second.exit_code == 0, second.output
    assert set(judged) == {broken}  # only the two failed units ran again
    assert "not measured" not in second.output and "sensitivity" not in second.output
    rerun = json.loads((output / "inc-1" / "report.json").read_text(encoding="utf-8"))
    assert rerun["sensitivity"] == [] and rerun["missing_units"] == []
    assert _latest_artifact("report-inc-1")[0] == "critiquebench report"

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
