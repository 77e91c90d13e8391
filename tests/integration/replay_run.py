"""A small real run built from a replay file, with no model server and no Prefect.

The answers are scripted so the run has something to show: first drafts that
pass, fixes after one and two rounds, and units that escalate.
"""

from __future__ import annotations

import json
from pathlib import Path

from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.suites import load_suite


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def write_replay_file(path: Path, limit: int) -> Path:
    """One line per case of ``basic``; the answer script cycles through five patterns."""
    lines = []
    for index, case in enumerate(load_suite("basic", limit=limit)):
        hollow = _fenced(f"def {case.entry_point}(*args):\n    return None")
        zero = _fenced(f"def {case.entry_point}(*args):\n    return 0")
        fixed = _fenced(case.reference_solution or "")
        patterns = [
            [fixed],  # right first time
            [hollow, fixed],  # fixed in round 1
            [hollow, zero, fixed],  # fixed in round 2
            [hollow],  # the same answer again: no_progress, escalated
            [zero, hollow, zero],  # back to an earlier answer: loop_detected, escalated
        ]
        answers = patterns[index % len(patterns)]
        lines.append(json.dumps({"case_id": case.id, "answers": answers}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_replay_run(
    output: Path, run_id: str, *, limit: int = 5, reps: int = 2, arms: str = "A,B"
) -> RunConfig:
    """Run ``arms`` over the first ``limit`` cases into ``output/run_id``."""
    replay = write_replay_file(output.parent / f"{run_id}-replay.jsonl", limit)
    config = RunConfig.model_validate(
        {
            "suite": "basic",
            "limit": limit,
            "reps": reps,
            "arms": arms,
            "model": f"replay:{replay}",
            "output": output,
            "run_id": run_id,
        }
    )
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    return config
