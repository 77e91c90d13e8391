"""How well an arm's critic told wrong answers from right ones.

A critic arm (C, D, E, a user's loop with a critic) asks its critic about every
attempt; the judge then measures the same attempt. Against the judge's count:

- *recall* = first drafts with a measured defect that the critic flagged (its verdict
  was not ``pass``) / first drafts with a measured defect;
- *false-alarm rate* = first drafts without a measured defect that it flagged / first
  drafts without one.

First drafts only: a unit has exactly one, so the units are the independent draws a
Wilson interval assumes (the later rounds of a unit depend on its first and on the
critic's own earlier verdicts). Units with an infrastructure error and attempts the
judge could not judge are left out, as everywhere. The sim model plants both rates
(``sim:recall=q,false_alarm=f``), so a run of it checks these numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from critiquebench.analysis.views._canary import CONFIDENCE, wilson_interval

CRITIC_ACCURACY_VIEW = """
SELECT run_id, arm,
       count(*) FILTER (WHERE defective) AS wrong_drafts,
       count(*) FILTER (WHERE defective AND flagged) AS caught,
       count(*) FILTER (WHERE NOT defective) AS right_drafts,
       count(*) FILTER (WHERE NOT defective AND flagged) AS false_alarms
FROM (
    SELECT a.run_id, a.arm,
           coalesce(a.defects_total, a.defects) > 0 AS defective,
           a.critic_verdict <> 'pass' AS flagged
    FROM attempts a
    JOIN cases c USING (run_id, case_id, arm, rep)
    WHERE a.iteration = 0 AND a.critic_verdict IS NOT NULL
      AND a.judge_infrastructure_error IS NULL AND c.error IS NULL
)
GROUP BY run_id, arm
"""
"""One row per run and critic arm: first drafts wrong and right, and those flagged."""

VIEWS = {"critic_accuracy": CRITIC_ACCURACY_VIEW}
"""The views defined here, by name."""

CRITIC_ACCURACY = f"""
SELECT arm, wrong_drafts, caught, right_drafts, false_alarms
FROM ({CRITIC_ACCURACY_VIEW}) WHERE run_id = $run_id ORDER BY arm
"""
"""The report's query: the view's rows of one run."""


@dataclass(frozen=True, kw_only=True)
class CriticAccuracy:
    """An arm's critic against the judge on first drafts, with Wilson intervals."""

    arm: str
    wrong_drafts: int
    """First drafts with a measured defect the critic reviewed."""
    caught: int
    """Of those, drafts the critic flagged."""
    right_drafts: int
    """First drafts without a measured defect the critic reviewed."""
    false_alarms: int
    """Of those, drafts the critic flagged."""
    recall_low: float
    recall_high: float
    false_alarm_low: float
    false_alarm_high: float

    @property
    def recall(self) -> float | None:
        """``caught / wrong_drafts``; None without a wrong draft."""
        return self.caught / self.wrong_drafts if self.wrong_drafts else None

    @property
    def false_alarm_rate(self) -> float | None:
        """``false_alarms / right_drafts``; None without a right draft."""
        return self.false_alarms / self.right_drafts if self.right_drafts else None


def critic_accuracy(rows: Sequence[tuple[Any, ...]]) -> tuple[CriticAccuracy, ...]:
    """The :data:`CRITIC_ACCURACY` rows as rates with their intervals."""
    result = []
    for arm, wrong_drafts, caught, right_drafts, false_alarms in rows:
        recall_low, recall_high = wilson_interval(int(caught), int(wrong_drafts))
        alarm_low, alarm_high = wilson_interval(int(false_alarms), int(right_drafts))
        result.append(
            CriticAccuracy(
                arm=str(arm),
                wrong_drafts=int(wrong_drafts),
                caught=int(caught),
                right_drafts=int(right_drafts),
                false_alarms=int(false_alarms),
                recall_low=recall_low,
                recall_high=recall_high,
                false_alarm_low=alarm_low,
                false_alarm_high=alarm_high,
            )
        )
    return tuple(result)


def critic_accuracy_text(rates: Sequence[CriticAccuracy]) -> str | None:
    """One line per the run: each critic arm's recall and false-alarm rate on first
    drafts, with counts and intervals; None without a critic arm."""
    if not rates:
        return None

    def share(hits: int, of: int, low: float, high: float) -> str:
        if not of:
            return "n/a (0 drafts)"
        return f"{hits}/{of} ({hits / of:.0%}, {CONFIDENCE:.0%} CI {low:.0%} to {high:.0%})"

    parts = [
        f"arm {r.arm} recall {share(r.caught, r.wrong_drafts, r.recall_low, r.recall_high)}, "
        "false alarms "
        + share(r.false_alarms, r.right_drafts, r.false_alarm_low, r.false_alarm_high)
        for r in rates
    ]
    return "critic vs judge on first drafts: " + "; ".join(parts)
