"""The units of a run that were not measured, and the matrix with them counted as failures.

A unit is not measured when its row records an infrastructure error or when the run
planned it and it has no row. Which planned units lack rows is found from the newest
``runs`` row (its arms and reps) and the cases the run has rows for; a planned unit of
a case with no row at all cannot be named, only counted (``units_planned`` minus the
units the matrix of known cases accounts for).

The filled matrix scores every unit not measured as a failure of its arm (not
passed, with the defects ``FAILURE_RULE`` gives); ``_report.py`` runs the same case
bootstrap over it as over the measured units.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from critiquebench.analysis.report._report_types import MissingUnit, RunMeta

Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class ArmMatrix:
    """One arm over every planned (case, rep): per case (in case order) its reps'
    defects and passes, units not measured scored as failures."""

    defects: list[list[int]]
    passed: list[list[bool]]
    errors: int
    """Units of the arm with an infrastructure error."""
    missing: int
    """Planned units of the arm without rows, named or of cases without any row."""


@dataclass(frozen=True)
class Unmeasured:
    """The units not measured beyond ``failed_units``, and the filled matrix per arm."""

    missing: tuple[MissingUnit, ...]
    unnamed: int
    arms: dict[str, ArmMatrix]


@dataclass(frozen=True)
class _Landed:
    excluded: bool
    defects: int
    passed: bool


def fill_matrix(
    units: Rows, failure_defects: Callable[[], Rows], meta: RunMeta | None
) -> Unmeasured:
    """The planned matrix from the ``UNITS`` rows and the run's settings; every unit
    without a measurement scored as a failure from the ``FAILURE_DEFECTS`` rows, which
    are asked for only when some unit is not measured.

    A planned unit is missing only while the run has fewer units with rows than its
    newest runs row planned; it is named when its case has rows in some arm or rep.
    """
    landed = {
        (str(arm), str(case), int(rep)): _Landed(bool(excluded), int(defects), bool(passed))
        for arm, case, rep, excluded, defects, passed in units
    }
    arm_names = _planned_arms(meta, landed)
    cases = sorted({case for _, case, _ in landed})
    reps = max([meta.reps if meta else 1, *(rep + 1 for _, _, rep in landed)])
    planned = {(arm, case, rep) for arm in arm_names for case in cases for rep in range(reps)}
    # The runs row counts the matrix; when every unit it planned has rows, none is missing.
    short = meta is not None and len(landed) < meta.units_planned
    missing = tuple(
        MissingUnit(case_id=case, arm=arm, rep=rep)
        for case, arm, rep in sorted((c, a, r) for a, c, r in planned - set(landed))
        if short
    )
    unnamed = max(0, (meta.units_planned if meta else 0) - len(landed) - len(missing))
    complete = not missing and not unnamed and not any(o.excluded for o in landed.values())
    score = {} if complete else {str(c): int(defects) for c, defects in failure_defects()}
    # A case without rows lacks them in every arm and rep: round up to whole cases.
    unnamed_cases = math.ceil(unnamed / (len(arm_names) * reps)) if arm_names else 0
    worst = max(score.values(), default=1)
    arms: dict[str, ArmMatrix] = {}
    for arm in arm_names:
        defects: list[list[int]] = []
        passes: list[list[bool]] = []
        for case in cases:
            outcomes = [landed.get((arm, case, rep)) for rep in range(reps)]
            defects.append(
                [o.defects if o and not o.excluded else score.get(case, 1) for o in outcomes]
            )
            passes.append([bool(o and not o.excluded and o.passed) for o in outcomes])
        defects += [[worst] * reps for _ in range(unnamed_cases)]
        passes += [[False] * reps for _ in range(unnamed_cases)]
        errors = sum(1 for (a, _, _), o in landed.items() if a == arm and o.excluded)
        named = sum(1 for unit in missing if unit.arm == arm)
        arms[arm] = ArmMatrix(defects, passes, errors, named + unnamed_cases * reps)
    return Unmeasured(missing=missing, unnamed=unnamed, arms=arms)


def _planned_arms(meta: RunMeta | None, landed: dict[tuple[str, str, int], _Landed]) -> list[str]:
    """The arms of the newest start, then any other arm with rows, in name order."""
    named = [arm for arm in (meta.arms.split(",") if meta and meta.arms else []) if arm]
    return sorted(set(named) | {arm for arm, _, _ in landed})
