"""Small builders shared by tests."""

from __future__ import annotations

import json
from pathlib import Path

from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.suites import Case, Check, load_suite


def make_case(
    feedback: tuple[str, ...] = ("assert add(1, 2) == 3",),
    heldout: tuple[str, ...] = ("assert add(-1, 1) == 0", "assert add(0, 0) == 0"),
    *,
    case_id: str = "t/add",
    entry_point: str = "add",
) -> Case:
    """A case about an ``add`` function, with feedback and held-out checks."""
    checks = [Check(source=s, origin="feedback", line=n) for n, s in enumerate(feedback, 1)]
    checks += [Check(source=s, origin="heldout", line=n) for n, s in enumerate(heldout, 1)]
    return Case(
        id=case_id,
        prompt="Write a Python function `add(a, b)` that returns a + b.",
        entry_point=entry_point,
        checks=tuple(checks),
    )


def fenced(code: str) -> str:
    """A model-style reply holding ``code`` in a python block."""
    return f"Here you go:\n```python\n{code}\n```\nThis adds numbers."


GOOD_ADD = "def add(a, b):\n    return a + b"
WRONG_ADD = "def add(a, b):\n    return a - b"


def hollow_then_fixed_replay(folder: Path, limit: int) -> Path:
    """A replay file for ``basic``: first draft hollow, the fix is the reference solution."""
    lines = []
    for case in load_suite("basic", limit=limit):
        hollow = f"```python\ndef {case.entry_point}(*args):\n    return None\n```"
        fixed = f"```python\n{case.reference_solution}\n```"
        lines.append(json.dumps({"case_id": case.id, "answers": [hollow, fixed]}))
    path = folder / "replay.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_sim_matrix(tmp_path: Path, *arms: str, limit: int = 4) -> RunConfig:
    """Arm A and ``arms`` on the simulated model, run through the library path (no Prefect)."""
    config = RunConfig(
        suite="basic", limit=limit, arms=("A", *arms), model="sim:fix=0.9,draft=0.9",
        cache=False, output=tmp_path / "runs", run_id="sim",
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    end = finish_run(plan, failed=0)
    assert end.status == "completed", end
    return config
