"""Fix and break rates per round: what each fix round did to failing and passing answers.

A round ``r`` of a unit is a *fix round* when the fixer made the unit's attempt ``r``
(a call of role ``fixer`` at that iteration): arm A's single draft and the resampling
arm's fresh drafts are no fix rounds. Its input is attempt ``r - 1``, its output
attempt ``r``, both judged by the measurement judge on every check. An answer
*passes* when it has no measured defect of any kind (failed checks, lint, types:
``defects_total``), the definition every other statistic of the report uses.

- fix rate of round ``r``: of the fix rounds whose input failed, the share whose
  output passed;
- break rate of round ``r``: of the fix rounds whose input passed, the share whose
  output failed (a critic arm keeps fixing answers that pass; a test-fed arm stops
  at a green answer, so its break rate usually has no rounds to count).

The view ``fix_break`` gives the counts per run, arm and round for ad-hoc SQL; the
report reads the same query for one run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

FIX_BREAK_VIEW = """
WITH steps AS (
    SELECT a.run_id, a.arm, a.case_id, a.rep, a.iteration,
           coalesce(a.defects_total, a.defects) > 0 AS output_failing,
           lag(coalesce(a.defects_total, a.defects) > 0) OVER (
               PARTITION BY a.run_id, a.arm, a.case_id, a.rep ORDER BY a.iteration
           ) AS input_failing
    FROM attempts a
    JOIN cases c ON c.run_id = a.run_id AND c.arm = a.arm AND c.case_id = a.case_id
        AND c.rep = a.rep
    WHERE c.error IS NULL
), fixed_by AS (
    SELECT DISTINCT run_id, arm, case_id, rep, iteration FROM calls WHERE role = 'fixer'
)
SELECT s.run_id, s.arm, s.iteration AS round,
       count(*) FILTER (WHERE s.input_failing) AS failing,
       count(*) FILTER (WHERE s.input_failing AND NOT s.output_failing) AS fixed,
       count(*) FILTER (WHERE NOT s.input_failing) AS passing,
       count(*) FILTER (WHERE NOT s.input_failing AND s.output_failing) AS broken,
       fixed / nullif(failing, 0) AS fix_rate,
       broken / nullif(passing, 0) AS break_rate
FROM steps s
JOIN fixed_by f ON f.run_id = s.run_id AND f.arm = s.arm AND f.case_id = s.case_id
    AND f.rep = s.rep AND f.iteration = s.iteration
WHERE s.iteration >= 1 AND s.input_failing IS NOT NULL
GROUP BY s.run_id, s.arm, s.iteration
"""
"""One row per run, arm and fix round (the view ``fix_break``)."""

VIEWS = {"fix_break": FIX_BREAK_VIEW}
"""The views over ``cases``, ``attempts`` and ``calls`` defined here, by name."""

FIX_BREAK = f"""
SELECT arm, round, failing, fixed, passing, broken
FROM ({FIX_BREAK_VIEW}) WHERE run_id = $run_id ORDER BY arm, round
"""
"""The report's query: the view's rows of one run, in a complete order."""


@dataclass(frozen=True, kw_only=True)
class FixBreakRound:
    """What fix round ``round`` of one arm did, over the units that ran it."""

    arm: str
    round: int
    failing: int
    """Rounds whose input (attempt ``round - 1``) had a measured defect."""
    fixed: int
    """Of those, rounds whose output had none."""
    passing: int
    """Rounds whose input had no measured defect."""
    broken: int
    """Of those, rounds whose output had one."""

    @property
    def fix_rate(self) -> float | None:
        """Share of failing inputs the round fixed; None when no input failed."""
        return self.fixed / self.failing if self.failing else None

    @property
    def break_rate(self) -> float | None:
        """Share of passing inputs the round broke; None when no input passed."""
        return self.broken / self.passing if self.passing else None


def fix_break_rounds(rows: Sequence[Sequence[Any]]) -> tuple[FixBreakRound, ...]:
    """The report's rounds from the rows of :data:`FIX_BREAK`."""
    return tuple(
        FixBreakRound(
            arm=str(arm),
            round=int(round_),
            failing=int(failing),
            fixed=int(fixed),
            passing=int(passing),
            broken=int(broken),
        )
        for arm, round_, failing, fixed, passing, broken in rows
    )


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "0/0"


def fix_break_text(rounds: Sequence[FixBreakRound], arm: str) -> str | None:
    """One line for the terminal: each round's fixed and broken shares with counts;
    None when the arm has no fix round."""
    mine = [r for r in rounds if r.arm == arm]
    if not mine:
        return None
    parts = ", ".join(
        f"r{r.round} fixed {_share(r.fixed, r.failing)} broke {_share(r.broken, r.passing)}"
        for r in mine
    )
    return f"  fix rounds (pass = no measured defect of any kind): {parts}"


def fix_break_cells(rounds: Sequence[FixBreakRound], arm: str, round_: int) -> tuple[str, str]:
    """The round table's two cells for one arm and round: fixed and broken with counts
    (empty for round 0 and for rounds no fixer made)."""
    found = next((r for r in rounds if r.arm == arm and r.round == round_), None)
    if found is None:
        return "", ""
    return _share(found.fixed, found.failing), _share(found.broken, found.passing)
