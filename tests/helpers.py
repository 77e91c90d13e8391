"""Small builders shared by tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from critiquebench.pipeline import (
    UNIT_TABLES,
    RunConfig,
    Unit,
    finish_run,
    live_files,
    run_unit,
    start_run,
)
from critiquebench.pipeline._layout import units_in
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


def unit_rows(run_dir: Path, unit: Unit, table: str) -> list[dict[str, Any]]:
    """The rows of ``table`` that belong to ``unit``, whichever file of the run holds them."""
    import pyarrow.parquet as pq

    return [
        row
        for path in live_files(run_dir, (table,))[table]
        for row in pq.read_table(path).to_pylist()
        if (row["case_id"], row["arm"], row["rep"]) == (unit.case_id, unit.arm, unit.rep)
    ]


def set_case_columns(run_dir: Path, unit: Unit, **values: Any) -> None:
    """Change columns of ``unit``'s cases row in place, in whichever file holds it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in live_files(run_dir, ("cases",))["cases"]:
        assert isinstance(path, Path)
        rows = pq.read_table(path).to_pylist()
        matches = [
            (r["case_id"], r["arm"], r["rep"]) == (unit.case_id, unit.arm, unit.rep) for r in rows
        ]
        if any(matches):
            changed = [{**r, **values} if hit else r for r, hit in zip(rows, matches, strict=True)]
            schema = pq.read_schema(path)
            pq.write_table(pa.Table.from_pylist(changed, schema=schema), path)


def written_units(run_dir: Path) -> int:
    """Units with a cases row in the run, counted from the file names (no file read)."""
    return sum(units_in(path.name) for path in live_files(run_dir, ("cases",))["cases"])


def written_identities(run_dir: Path) -> set[tuple[str, str, int]]:
    """(case_id, arm, rep) of every unit with a cases row in the run."""
    import pyarrow.parquet as pq

    return {
        (row["case_id"], row["arm"], row["rep"])
        for path in live_files(run_dir, ("cases",))["cases"]
        for row in pq.read_table(path, columns=["case_id", "arm", "rep"]).to_pylist()
    }


def drop_unit(run_dir: Path, unit: Unit) -> None:
    """Rewrite the run's files without ``unit``'s rows: as if its batch never landed."""
    import pyarrow.parquet as pq

    identity = (unit.case_id, unit.arm, unit.rep)
    for paths in live_files(run_dir, UNIT_TABLES).values():
        for path in paths:
            assert isinstance(path, Path)
            data = pq.read_table(path)
            columns = (data.column(name).to_pylist() for name in ("case_id", "arm", "rep"))
            rows = zip(*columns, strict=True)
            keep = [row != identity for row in rows]
            if not all(keep):
                pq.write_table(data.filter(keep), path)
