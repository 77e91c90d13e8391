"""Runs written row by row with numbers chosen by the test, so every answer is known.

The rows go through the real store and the real table schemas; columns a test does
not set get a neutral value of their type.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from critiquebench.judges import FAILURE_KINDS, STATIC_KINDS
from critiquebench.loop import RENAMED_HALTS
from critiquebench.pipeline import TABLES, ResultStore, Unit, UnitRows

STARTED = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
FINISHED = dt.datetime(2026, 1, 2, 3, 9, 5, tzinfo=dt.UTC)
MODEL = "fake:priced"
KINDS = frozenset(FAILURE_KINDS)


@dataclass(frozen=True)
class Call:
    """A model call: the attempt it belongs to, its original tokens, and whether it was a hit."""

    iteration: int
    tokens_in: int
    tokens_out: int
    cached: bool = False


@dataclass(frozen=True)
class FakeUnit:
    """One unit: defects of each attempt (all checks, and those visible to the loop)."""

    case_id: str
    arm: str
    rep: int = 0
    defects: tuple[int, ...] = (0,)
    visible: tuple[int, ...] | None = None
    calls: tuple[Call, ...] = ()
    error: str | None = None
    latency_s: float = 1.0
    kinds: tuple[str, ...] = ("assertion",)
    halt: str | None = None  # default: single_draft (A), visible_clean if clean, else retry_limit
    judge: str = "python"
    judge_data: dict[str, Any] | None = None
    artifacts: tuple[str, ...] = ()
    """Each attempt's artifact (default: empty)."""
    kind_counts: tuple[dict[str, int], ...] = ()
    """Each attempt's defects by kind (default: ``defects`` of the kinds in ``kinds``);
    their sum must be the attempt's ``defects``."""
    checks: int = 0
    """The case's number of checks (``cases.checks_total``)."""
    roles: tuple[str, ...] = ()
    """Each call's role (default: actor for iteration 0, fixer after)."""
    raw: tuple[int, ...] = ()
    """Each attempt's defects before the per-kind bound (``defects_total_raw``); with
    it, ``defects`` are the bounded totals. Default: no raw column, as before schema v6."""

    @property
    def kept(self) -> int:
        """The attempt the loop keeps: fewest visible defects, the latest on ties."""
        visible = self.visible or self.defects
        best = 0
        for index in range(1, len(visible)):
            if visible[index] <= visible[best]:
                best = index
        return best


def _neutral(column_type: pa.DataType) -> Any:
    if pa.types.is_string(column_type):
        return ""
    if pa.types.is_boolean(column_type):
        return False
    if pa.types.is_floating(column_type):
        return 0.0
    if pa.types.is_timestamp(column_type):
        return STARTED
    return 0


def _row(table: str, values: dict[str, Any]) -> dict[str, Any]:
    unknown = set(values) - {column.name for column in TABLES[table]}
    assert not unknown, f"not columns of {table}: {unknown}"
    return {
        column.name: values.get(column.name, None if column.nullable else _neutral(column.type))
        for column in TABLES[table]
    }


def _by_kind(unit: FakeUnit, iteration: int) -> dict[str, Any]:
    """The per-kind columns of one attempt, when the test gives its kinds' counts."""
    if not unit.kind_counts:
        return {}
    counts = unit.kind_counts[iteration]
    assert sum(counts.values()) == unit.defects[iteration], (unit.case_id, counts)
    failing = {kind: n for kind, n in counts.items() if kind not in STATIC_KINDS}
    return {
        "defects": sum(failing.values()),
        "defects_total": unit.defects[iteration],
        **{f"defects_{kind}": n for kind, n in counts.items()},
        "failures": json.dumps([{"kind": kind} for kind, n in failing.items() for _ in range(n)]),
    }


def _raw(unit: FakeUnit, iteration: int) -> dict[str, Any]:
    """An attempt's bounded and raw totals, when the test gives raw counts."""
    if not unit.raw:
        return {}
    bounded, raw = unit.defects[iteration], unit.raw[iteration]
    lowered = {"lint": raw} if raw > bounded else {}  # which kind does not matter here
    return {
        "defects_total": bounded,
        "defects_total_raw": raw,
        "defects_raw_by_kind": json.dumps(lowered),
    }


def _raw_final(unit: FakeUnit) -> dict[str, Any]:
    """``cases``' bounded and raw totals of the first draft and the answer kept."""
    if not unit.raw:
        return {}
    first, kept = _raw(unit, 0), _raw(unit, unit.kept)
    return {
        "defects_total_initial": first["defects_total"],
        "defects_total_final": kept["defects_total"],
        "defects_total_initial_raw": first["defects_total_raw"],
        "defects_total_final_raw": kept["defects_total_raw"],
        "final_raw_by_kind": kept["defects_raw_by_kind"],
    }


def _final_kinds(attempt: dict[str, Any]) -> dict[str, Any]:
    """``cases.final_<kind>`` from the kept attempt's ``defects_<kind>``."""
    kinds = {key.removeprefix("defects_"): n for key, n in attempt.items()}
    return {f"final_{kind}": n for kind, n in kinds.items() if kind in KINDS}


def _unit_rows(run_id: str, unit: FakeUnit) -> UnitRows:
    identity = {"run_id": run_id, "case_id": unit.case_id, "arm": unit.arm, "rep": unit.rep}
    visible = unit.visible or unit.defects
    artifacts = unit.artifacts or ("",) * len(unit.defects)
    attempts = [
        _row(
            "attempts",
            {
                **identity,
                "iteration": i,
                "defects": d,
                "defects_feedback": visible[i],
                "failures": json.dumps([{"kind": kind} for kind in unit.kinds for _ in range(d)]),
                "artifact": artifacts[i],
                **_raw(unit, i),
                **_by_kind(unit, i),
            },
        )
        for i, d in enumerate(unit.defects)
    ]
    calls = [
        _row(
            "calls",
            {
                **identity,
                "call_index": index,
                "iteration": call.iteration,
                "role": unit.roles[index]
                if unit.roles
                else ("actor" if call.iteration == 0 else "fixer"),
                "model": MODEL,
                "paid_tokens_in": 0 if call.cached else call.tokens_in,
                "paid_tokens_out": 0 if call.cached else call.tokens_out,
                "cached": call.cached,
                "experiment_tokens_in": call.tokens_in,
                "experiment_tokens_out": call.tokens_out,
            },
        )
        for index, call in enumerate(unit.calls)
    ]
    final = unit.defects[unit.kept]
    first, kept = _by_kind(unit, 0), _by_kind(unit, unit.kept)
    single = unit.arm == "A"
    halt = unit.halt or (
        "single_draft" if single else ("visible_clean" if final == 0 else "retry_limit")
    )
    escalated = halt not in ("single_draft", "visible_clean", "critic_ok", *RENAMED_HALTS)
    case = _row(
        "cases",
        {
            **identity,
            "suite": "synthetic",
            "judge": unit.judge,
            "judge_data": json.dumps(unit.judge_data or {}, sort_keys=True),
            "model": MODEL,
            "defects_initial": first.get("defects", unit.defects[0]),
            "defects_final": kept.get("defects", final),
            "defects_total_initial": first.get("defects_total"),
            "defects_total_final": kept.get("defects_total"),
            **_final_kinds(kept),
            **_raw_final(unit),
            "final_artifact": artifacts[unit.kept],
            "passed": final == 0 and unit.error is None,
            "tests_passed": kept.get("defects", final) == 0 and unit.error is None,
            "loops": len(unit.defects) - 1,
            "attempts": len(unit.defects),
            "final_iteration": unit.kept,
            "halt_reason": halt,
            "escalated": escalated,
            "latency_s": unit.latency_s,
            "tokens_in": sum(c.tokens_in for c in unit.calls),
            "tokens_out": sum(c.tokens_out for c in unit.calls),
            "calls": len(unit.calls),
            "cached_calls": sum(1 for c in unit.calls if c.cached),
            "error": unit.error,
            "checks_total": unit.checks,
            "finished_at": FINISHED,
        },
    )
    record = f"# {unit.case_id}\n" if escalated else None
    return UnitRows(case=case, attempts=attempts, calls=calls, escalation_record=record)


def write_run(
    output: Path,
    run_id: str,
    units: list[FakeUnit],
    *,
    reps: int = 1,
    retry_limit: int = 3,
    sandbox: str = "bubblewrap sandbox: (synthetic)",
    model: str = MODEL,
    planned: int | None = None,
    arms: str | None = None,
) -> Path:
    """Write ``units`` as run ``run_id`` under ``output``; return the run folder.

    ``planned``: the matrix's units (default: as many as ``units``; more plans units
    that never wrote rows). ``arms``: the run's arms (default: those of ``units``).
    """
    store = ResultStore(output)
    arms = arms or ",".join(sorted({unit.arm for unit in units}))
    run = {
        "run_id": run_id,
        "invocation_started_at": STARTED,
        "finished_at": FINISHED,
        "status": "completed",
        "suite": "synthetic",
        "arms": arms,
        "reps": reps,
        "retry_limit": retry_limit,
        "feedback": "visible",
        "model": model,
        "verifier_policy": "fail_open",
        "units_planned": len(units) if planned is None else planned,
        "sandbox": sandbox,
    }
    store.write_run_row(run_id, "start-1", _row("runs", run))
    for unit in units:
        rows = _unit_rows(run_id, unit)
        store.write_unit(run_id, Unit(unit.case_id, unit.arm, unit.rep), rows)
    return store.run_dir(run_id)


def rows_of(run_id: str, unit: FakeUnit) -> UnitRows:
    """The table rows ``write_run`` writes for ``unit``."""
    return _unit_rows(run_id, unit)
