"""HumanEval end to end: its references pass, and a perfect fixer reaches 100% on feedback only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.judges import PythonJudge
from critiquebench.loop import LoopDependencies, LoopSettings, build_graph, run_loop
from critiquebench.models import ReplayProvider
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
