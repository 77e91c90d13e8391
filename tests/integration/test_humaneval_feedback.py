"""HumanEval end to end: its references pass, a perfect fixer reaches 100% on feedback only,
and a replay of the canonical solutions scores no defect of any kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.analysis import write_reports
from critiquebench.cli import app
from critiquebench.judges import PythonJudge
from critiquebench.loop import LoopDependencies, LoopSettings, build_graph, run_loop
from critiquebench.models import ReplayProvider
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.suites import load_suite


def test_bundled_humaneval_validates_clean_with_its_references() -> None:
    # The proof that every canonical solution passes every check: validate-suite judges
    # each with the Python judge (two at a time) and counts ``JudgeResult.passed``.
    result = CliRunner().invoke(app, ["validate-suite", "humaneval"])
    assert result.exit_code == 0, result.output
    assert "humaneval: 164 valid case(s), 0 error(s), 0 warning(s)" in result.output
    assert "164 of 164 reference solution(s) pass their own checks" in result.output
    # Loops and set-up statements are decided in the trusted parent (69 ran inside before).
    assert "0 of 1361 check(s) run inside the sandbox" in result.output


def _wrong_then_right(folder: Path) -> Path:
    """Answer 0: a wrong draft with the right name; answer 1: the canonical solution."""
    lines = []
    for case in load_suite("humaneval"):
        wrong = f"```python\ndef {case.entry_point}(*a, **k):\n    return None\n```"
        right = f"```python\n{case.reference_solution}\n```"
        lines.append(json.dumps({"case_id": case.id, "answers": [wrong, right]}))
    path = folder / "replay.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_perfect_fixer_passes_every_case_seeing_only_feedback(tmp_path: Path) -> None:
    # Tests only: 12 canonical solutions carry lint or type findings, which a loop with
    # static checks would (rightly) go on fixing; this test is about the test feedback.
    deps = LoopDependencies(
        provider=ReplayProvider(_wrong_then_right(tmp_path)), judge=PythonJudge(static=None)
    )
    settings = LoopSettings(arm="B", feedback="visible", token_budget=None)
    graph = build_graph(deps, settings)
    not_fixed = []
    for case in load_suite("humaneval"):
        outcome = run_loop(case, deps, settings, graph=graph)
        # The wrong draft must be caught by feedback alone, then fixed in one round.
        if not outcome.final.result.passed or len(outcome.attempts) != 2:
            not_fixed.append((case.id, outcome.halt, len(outcome.attempts)))
    assert not_fixed == []


def _canonical(folder: Path) -> Path:
    """One answer per case: its canonical solution, as a model would reply."""
    lines = [
        json.dumps({"case_id": case.id, "answers": [f"```python\n{case.reference_solution}\n```"]})
        for case in load_suite("humaneval")
    ]
    path = folder / "canonical.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_replay_of_the_canonical_solutions_scores_no_defect_of_any_kind(tmp_path: Path) -> None:
    # Through the run and the report, with the full judge (tests, lint, types): before the
    # static rule set was calibrated, 12 of the 164 canonical answers carried 15 findings.
    config = RunConfig(
        suite="humaneval",
        arms=("A",),
        model=f"replay:{_canonical(tmp_path)}",
        output=tmp_path / "runs",
        run_id="canonical",
    )
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    report = write_reports(config.output, "canonical").report
    (a,) = report.arms
    assert (a.n, a.mean_defects, a.pass_rate, a.tests_pass_rate) == (164, 0.0, 1.0, 1.0)
    assert a.defects_by_group == {"tests": 0.0, "lint": 0.0, "types": 0.0}
    assert a.halts == {"single_draft": 164} and report.unmeasured == 0
