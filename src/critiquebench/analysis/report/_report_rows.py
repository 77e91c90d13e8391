"""Query rows of the run report turned into its typed parts (no statistics here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from critiquebench.analysis.report._curve import iteration_curve, pass_rate_vs_tokens
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


def curves(rows: Rows) -> dict[str, ArmCurves]:
    latest: dict[str, ByCase] = {}
    kept: dict[str, ByCase] = {}
    tokens: dict[str, list[list[float]]] = {}
    for arm, _case_id, _rep, defects, kept_defects, spent in rows:
        latest.setdefault(arm, []).append([int(d) for d in defects])
        kept.setdefault(arm, []).append([int(d) for d in kept_defects])
        tokens.setdefault(arm, []).append([float(t) for t in spent])
    return {
        arm: ArmCurves(
            kept=iteration_curve(kept[arm]),
            latest=iteration_curve(latest[arm]),
            pass_vs_tokens=pass_rate_vs_tokens(kept[arm], tokens[arm]),
        )
        for arm in sorted(latest)
    }


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
