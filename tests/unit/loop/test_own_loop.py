"""Bring your own loop: a user's function (here a compiled LangGraph graph) runs as an arm,
named by reference or by an entry point, and is judged, stored and reported like ours."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from critiquebench.analysis import write_reports
from critiquebench.cli import app
from critiquebench.judges import PythonJudge
from critiquebench.loop import (
    ENTRY_POINT_GROUP,
    LoopDependencies,
    RecordingProvider,
    available_arms,
)
from critiquebench.models import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelProvider,
    ScriptedProvider,
)
from critiquebench.pipeline import RunConfig, Unit, execute_unit
from critiquebench.quality import check_run
from critiquebench.suites import Case
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case, run_sim_matrix

CASE = make_case()
LOOPS = "tests.unit.loop.own_loops"


def test_a_langgraph_loop_runs_as_an_arm_through_the_pipeline(tmp_path: Path) -> None:
    config = run_sim_matrix(tmp_path, f"mine={LOOPS}:draft_and_recheck")
    run_dir = config.output / config.run_id
    db = duckdb.connect()
    rows = db.execute(
        f"SELECT count(*), min(attempts), max(attempts), min(loops), any_value(halt_reason) "
        f"FROM '{run_dir}/cases/*.parquet' WHERE arm = 'mine'"
    ).fetchone()
    assert rows == (4, 2, 2, 1, "own_loop")
    roles = db.execute(
        f"SELECT role, count(*) FROM '{run_dir}/calls/*.parquet' WHERE arm = 'mine' "
        "GROUP BY role ORDER BY role"
    ).fetchall()
    assert roles == [("actor", 4), ("fixer", 4)]
    judged = db.execute(
        f"SELECT count(*) FROM '{run_dir}/attempts/*.parquet' WHERE arm = 'mine'"
    ).fetchone()
    assert judged == (8,)  # both attempts of every unit were judged

    quality = check_run(config.output, config.run_id)
    assert quality.passed, quality.markdown()
    report = write_reports(config.output, config.run_id).report
    mine = next(arm for arm in report.arms if arm.arm == "mine")
    assert mine.n == 4 and mine.mean_calls == 2.0 and mine.halts == {"own_loop": 4}


def _unit(judge: PythonJudge, arm: str, answers: list[str], tmp_path: Path) -> dict[str, object]:
    config = RunConfig(arms=("A", arm), output=tmp_path, run_id="own")
    deps = LoopDependencies(ScriptedProvider([fenced(a) for a in answers]), judge)
    rows = execute_unit(CASE, Unit(CASE.id, config.arm_names[1], 0), deps, config)
    return {"case": rows.case, "calls": rows.calls, "attempts": rows.attempts}


def test_the_answer_is_the_loops_last_attempt_not_the_best_one(
    judge: PythonJudge, tmp_path: Path
) -> None:
    rows = _unit(judge, f"{LOOPS}:draft_and_recheck", [GOOD_ADD, WRONG_ADD], tmp_path)
    case = rows["case"]
    assert isinstance(case, dict)
    assert case["arm"] == f"{LOOPS}:draft_and_recheck"  # no NAME=: the reference names it
    assert case["defects_initial"] == 0 and case["defects_final"] > 0
    assert case["final_iteration"] == 1 and case["error"] is None


@pytest.mark.parametrize(
    ("loop", "error"),
    [
        ("returns_a_number", "infrastructure: arm bad: TypeError: returned int; an arm's loop "
         "returns a list of attempts (code strings, first draft first)"),
        ("raises", "infrastructure: arm bad: KeyError: 'drafts'"),
    ],
)  # fmt: skip
def test_a_loop_that_fails_leaves_an_infrastructure_error_never_defects(
    judge: PythonJudge, loop: str, error: str, tmp_path: Path
) -> None:
    rows = _unit(judge, f"bad={LOOPS}:{loop}", [GOOD_ADD], tmp_path)
    case = rows["case"]
    assert isinstance(case, dict)
    assert case["error"] == error and case["passed"] is False and case["halt_reason"] == "error"
    assert len(rows["calls"]) == (1 if loop == "returns_a_number" else 0)  # calls still recorded


def _install_entry_point(site: Path, name: str, target: str) -> None:
    info = site / "myloops-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myloops\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{name} = {target}\n")


def test_an_installed_entry_point_names_an_arm(
    judge: PythonJudge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match="unknown arm 'recheck'"):
        RunConfig(arms=("A", "recheck"))
    _install_entry_point(tmp_path / "site", "recheck", f"{LOOPS}:draft_and_recheck")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert "recheck" in available_arms()
    rows = _unit(judge, "recheck", [WRONG_ADD, GOOD_ADD], tmp_path / "out")
    case = rows["case"]
    assert isinstance(case, dict)
    assert case["arm"] == "recheck" and case["passed"] is True and case["halt_reason"] == "own_loop"


def test_a_broken_entry_point_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_entry_point(tmp_path / "site", "broken", "no_such_module_xyz:run")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    config = RunConfig(arms=("A", "broken"))
    with pytest.raises(ValueError, match=r"entry point 'broken' .* cannot be loaded"):
        config.arm_specs()


def test_cli_refuses_a_bad_reference_before_prefect_starts(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "--arms", "A,no_such_pkg.loops:run", "--model", "sim:", "--output", str(tmp_path)],
    )
    assert result.exit_code == 2, result.output
    assert "module 'no_such_pkg.loops' cannot be imported" in result.output
    assert not any(tmp_path.iterdir())  # refused before any work


def test_the_readme_loop_runs_as_an_arm_by_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = Path(__file__).resolve().parents[3] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.DOTALL)
    code = next(block for block in blocks if "def my_loop" in block)
    module = types.ModuleType("readme_loops")
    exec(compile(code, str(readme), "exec"), module.__dict__)  # as if saved as a module
    monkeypatch.setitem(sys.modules, "readme_loops", module)
    config = run_sim_matrix(tmp_path, "mine=readme_loops:my_loop", limit=2)
    report = write_reports(config.output, config.run_id).report
    assert [arm.arm for arm in report.arms] == ["A", "mine"]
    assert report.arms[1].halts == {"own_loop": 2} and report.arms[1].mean_calls == 2.0


class ContextRecorder(ScriptedProvider):
    """A scripted model that keeps the context of every call."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answers)
        self.contexts: list[CallContext | None] = []

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, object] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        self.contexts.append(context)
        return super().complete(messages, params, schema, context)


def test_calls_of_an_own_loop_belong_to_the_unit_and_keep_their_roles() -> None:
    def loop(case: Case, provider: ModelProvider) -> list[str]:
        first = provider.complete([Message("user", case.prompt)], GenerationParams()).text
        review = CallContext(case_id="whatever", attempt=0, rep=9, role="critic")
        provider.complete([Message("user", "review")], GenerationParams(), context=review)
        return [first]

    model = ContextRecorder([fenced(GOOD_ADD), "NO_DEFECTS"])
    recording = RecordingProvider(model, CASE, rep=2)
    assert loop(CASE, recording) == [fenced(GOOD_ADD)]
    contexts = [(c.case_id, c.rep, c.attempt, c.role) for c in model.contexts if c]
    assert contexts == [(CASE.id, 2, 0, "actor"), (CASE.id, 2, 0, "critic")]
    assert [(call.iteration, call.role) for call in recording.calls] == [
        (0, "actor"),
        (0, "critic"),
    ]
    assert all(call.tokens_in > 0 and call.original_tokens_in is None for call in recording.calls)


@pytest.mark.parametrize(
    ("feedback", "shown"), [("visible", "feedback"), ("all", "feedback,heldout,heldout")]
)
def test_a_loop_sees_neither_the_reference_nor_checks_a_fixer_could_not(
    judge: PythonJudge, feedback: str, shown: str, tmp_path: Path
) -> None:
    case = CASE.model_copy(update={"reference_solution": GOOD_ADD})
    arm = f"{LOOPS}:answers_from_what_it_sees"
    config = RunConfig(arms=("A", arm), output=tmp_path, run_id="own", feedback=feedback)
    deps = LoopDependencies(ScriptedProvider([]), judge)
    rows = execute_unit(case, Unit(case.id, config.arm_names[1], 0), deps, config)
    (attempt,) = rows.attempts
    assert repr(shown) in str(attempt["artifact"])  # not the reference solution
    # Judged on the whole case all the same: every check, held-out ones included.
    assert rows.case["defects_final"] == len(case.checks)
