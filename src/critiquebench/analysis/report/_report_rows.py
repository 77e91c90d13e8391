"""Query rows of the run report turned into its typed parts (no statistics here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from critiquebench.analysis.report._curve import (
    ArmRounds,
    carried,
    carried_curve,
    carried_points,
)
from critiquebench.analysis.report._report_types import (
    ArmCurves,
    EscalatedUnit,
    FailedUnit,
    FailureKindCount,
    Regression,
    RunMeta,
)
from critiquebench.judges import DEFECT_GROUPS
from critiquebench.pipeline import Unit

Rows = list[tuple[Any, ...]]
ByCase = list[list[int]]


@dataclass(frozen=True)
class Paired:
    """Arm A and arm X on the same cases, one inner list per case, reps in rep order."""

    baseline: ByCase
    treatment: ByCase
    baseline_passed: list[list[bool]]
    treatment_passed: list[list[bool]]


def defects_by_case(rows: Rows) -> dict[str, ByCase]:
    by_arm: dict[str, ByCase] = {}
    for arm, _case_id, defects in rows:
        by_arm.setdefault(arm, []).append([int(d) for d in defects])
    return by_arm


def pairs_by_case(rows: Rows) -> dict[str, Paired]:
    by_arm: dict[str, Paired] = {}
    for arm, _case_id, base, treat, base_passed, treat_passed in rows:
        paired = by_arm.setdefault(arm, Paired([], [], [], []))
        paired.baseline.append([int(d) for d in base])
        paired.treatment.append([int(d) for d in treat])
        paired.baseline_passed.append([bool(p) for p in base_passed])
        paired.treatment_passed.append([bool(p) for p in treat_passed])
    return by_arm


def arm_rounds(data: pa.Table) -> dict[str, ArmRounds]:
    """The rows of the rounds query (``_report_sql.ROUNDS``: arm, case, rep, defects
    per attempt, kept defects per round, tokens per round, ordered by arm, case, rep)
    as each arm's flat arrays, in the order of the rows."""
    if data.num_rows == 0:
        return {}
    data = data.combine_chunks()
    arms = data.column(0).chunk(0).dictionary_encode()
    cases = data.column(1).chunk(0).dictionary_encode()
    arm_codes = arms.indices.to_numpy(zero_copy_only=False)
    case_codes = cases.indices.to_numpy(zero_copy_only=False)
    lists = [data.column(index).chunk(0) for index in (3, 4, 5)]
    lengths = pc.list_value_length(lists[0]).to_numpy(zero_copy_only=False).astype(np.int64)
    # Whole numbers all (the tokens a sum DuckDB hands over as a decimal): as integers
    # first, then floats, as the rows' Python ints became floats one by one.
    latest, kept, tokens = (
        pc.cast(pc.list_flatten(values), pa.int64()).to_numpy().astype(np.float64)
        for values in lists
    )
    ends = np.cumsum(lengths)
    # A new arm or a new case starts where the code changes from the row before.
    arm_starts = np.flatnonzero(np.diff(arm_codes, prepend=-1))
    case_starts = np.flatnonzero(np.diff(case_codes, prepend=-1) | np.diff(arm_codes, prepend=-1))
    result: dict[str, ArmRounds] = {}
    for start, stop in zip(arm_starts, [*arm_starts[1:], data.num_rows], strict=True):
        first = int(ends[start - 1]) if start else 0
        last = int(ends[stop - 1])
        mine = case_starts[(case_starts >= start) & (case_starts < stop)]
        result[str(arms.dictionary[int(arm_codes[start])])] = ArmRounds(
            lengths=lengths[start:stop],
            latest=latest[first:last],
            kept=kept[first:last],
            tokens=tokens[first:last],
            case_sizes=np.diff(np.append(mine, stop)).astype(np.int64),
        )
    return result


def curves(rounds: dict[str, ArmRounds]) -> dict[str, ArmCurves]:
    """Each arm's iteration curves and pass rate against tokens, arms by name."""
    found = {}
    for arm in sorted(rounds):
        units = rounds[arm]
        kept = carried(units.kept, units.lengths)
        found[arm] = ArmCurves(
            kept=carried_curve(kept, units.lengths),
            latest=carried_curve(carried(units.latest, units.lengths), units.lengths),
            pass_vs_tokens=carried_points(
                (kept == 0).astype(np.float64), carried(units.tokens, units.lengths)
            ),
        )
    return found


def meta(rows: Rows) -> RunMeta | None:
    if not rows:
        return None
    (suite, model, arms, reps, retry_limit, feedback, case_limit, token_budget, policy, status,
     invocations, planned, landed, started, finished, sandbox) = rows[0]  # fmt: skip
    return RunMeta(
        suite=suite,
        model=model,
        arms=arms,
        reps=int(reps),
        retry_limit=int(retry_limit),
        feedback=feedback,
        case_limit=None if case_limit is None else int(case_limit),
        token_budget=None if token_budget is None else int(token_budget),
        verifier_policy=policy,
        status=status,
        invocations=int(invocations),
        units_planned=int(planned),
        units_landed=int(landed),
        started_at=started,
        finished_at=finished,
        sandbox=sandbox or "",
    )


def escalations(rows: Rows) -> tuple[EscalatedUnit, ...]:
    # The store names an escalation record by its unit key, and writes one per escalated unit.
    return tuple(
        EscalatedUnit(
            case_id=case_id,
            arm=arm,
            rep=int(rep),
            halt_reason=halt,
            defects_final=int(defects),
            record=f"escalations/{Unit(case_id, arm, int(rep)).key}.md",
        )
        for case_id, arm, rep, halt, defects in rows
    )


def failed_units(rows: Rows) -> tuple[FailedUnit, ...]:
    return tuple(
        FailedUnit(case_id=case_id, arm=arm, rep=int(rep), error=str(error))
        for case_id, arm, rep, error in rows
    )


def failure_kinds(rows: Rows) -> tuple[FailureKindCount, ...]:
    return tuple(
        FailureKindCount(
            suite=suite,
            arm=arm,
            kind=kind,
            count=int(n),
            first_draft=int(first),
            units=int(units),
            fixed=int(fixed),
        )
        for suite, arm, kind, n, first, units, fixed in rows
    )


def regressions(rows: Rows) -> tuple[Regression, ...]:
    return tuple(
        Regression(
            case_id=case_id,
            arm=arm,
            rep=int(rep),
            iteration=int(iteration),
            previous=int(previous),
            defects=int(defects),
        )
        for case_id, arm, rep, iteration, previous, defects in rows
    )


@dataclass(frozen=True)
class GroupMeans:
    """Per arm, mean defects of each defect group present in the run, in display order."""

    groups: tuple[str, ...]
    initial: dict[str, dict[str, float]]
    kept: dict[str, dict[str, float]]


def group_means(rows: Rows) -> GroupMeans:
    """``(arm, group, mean first draft, mean kept)`` rows, groups in ``DEFECT_GROUPS``
    order (a group a package's judge invents comes after them, by name)."""
    present = {group for _, group, _, _ in rows}
    order = {group: index for index, group in enumerate(DEFECT_GROUPS)}
    groups = tuple(sorted(present, key=lambda g: (order.get(g, len(order)), g)))
    initial: dict[str, dict[str, float]] = {}
    kept: dict[str, dict[str, float]] = {}
    for arm, group, first, final in rows:
        initial.setdefault(arm, {})[group] = float(first)
        kept.setdefault(arm, {})[group] = float(final)
    return GroupMeans(
        groups=groups,
        initial={arm: {g: means[g] for g in groups} for arm, means in initial.items()},
        kept={arm: {g: means[g] for g in groups} for arm, means in kept.items()},
    )
