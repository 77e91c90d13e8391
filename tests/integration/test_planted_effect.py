"""A planted 3-round effect is measured in full with retry limit 3 (no silent stagnation cut)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from critiquebench.analysis import connect
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.suites import load_suite

LIMIT = 3


def _three_round_replay(path: Path) -> Path:
    """Three different hollow answers (equal failures), then the fix in round 3."""
    lines = []
    for case in load_suite("basic", limit=LIMIT):
        hollow = [
            f"```python\ndef {case.entry_point}(*{name}):\n    return None\n```"
            for name in ("args", "values", "params")
        ]
        fixed = f"```python\n{case.reference_solution}\n```"
        lines.append(json.dumps({"case_id": case.id, "answers": [*hollow, fixed]}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(tmp_path: Path, run_id: str, patience: int | None) -> list[tuple[str, str, int]]:
    replay = _three_round_replay(tmp_path / "replay.jsonl")
    config = RunConfig(
        suite="basic",
        limit=LIMIT,
        arms=("A", "B"),
        retry_limit=3,
        stagnation_patience=patience,
        model=f"replay:{replay}",
        output=tmp_path / "runs",
        run_id=run_id,
    )
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    db = connect(config.output)
    patience_row = db.execute("SELECT stagnation_patience FROM runs").fetchone()
    assert patience_row == (patience,)
    rows = db.execute(
        "SELECT halt_reason, passed::VARCHAR, final_iteration FROM cases WHERE arm = 'B'"
    ).fetchall()
    return [(str(h), str(p), int(i)) for h, p, i in rows]


def test_default_patience_reaches_the_fix_in_the_last_allowed_round(tmp_path: Path) -> None:
    assert _run(tmp_path, "planted-1", None) == [("visible_clean", "true", 3)] * LIMIT


@pytest.mark.parametrize("patience", [1, 2])
def test_a_shorter_patience_stops_early_and_says_so(tmp_path: Path, patience: int) -> None:
    rows = _run(tmp_path, f"planted-p{patience}", patience)
    assert {halt for halt, _, _ in rows} == {"stagnation"}
    assert {passed for _, passed, _ in rows} == {"false"}
