"""Cost-matched curves: pass rate and mean defects against tokens spent, every arm.

Olausson et al. (ICLR 2024) compare repair with sampling by plotting the pass rate
against the tokens spent; this is that plot for a run. Each point is one round of
an arm (a loop's fix round, or a fresh draft of the resampling arm R) at the mean
tokens its units had spent by then, with the pass rate (no measured defect of any
kind) and the mean defects of the answer kept then, each with a case-bootstrap
interval. A unit that stopped earlier keeps its last answer and its last spend, so
every point of an arm averages the same units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from critiquebench.analysis.report._curve import ArmRounds, carried
from critiquebench.analysis.stats import MeanEstimate, cluster_bootstrap_mean


@dataclass(frozen=True, kw_only=True)
class CostPoint:
    """Arm ``arm`` after round ``round``: what it had spent and what it kept."""

    arm: str
    round: int
    mean_tokens: float
    pass_rate: MeanEstimate
    mean_defects: MeanEstimate


def cost_curve(
    rounds: Mapping[str, ArmRounds], *, resamples: int, seed: int, confidence: float
) -> tuple[CostPoint, ...]:
    """The points of every arm's units round by round (the report's rounds query,
    ``_report_sql.ROUNDS``, as ``ArmRounds``), by arm and round."""
    points: list[CostPoint] = []
    for arm, units in sorted(rounds.items()):
        kept_matrix = carried(units.kept, units.lengths)
        tokens_matrix = carried(units.tokens, units.lengths)
        sizes = units.case_sizes.tolist()
        for r in range(kept_matrix.shape[1]):
            defects = kept_matrix[:, r].tolist()
            by_case, passed, start = [], [], 0
            for size in sizes:
                chunk = defects[start : start + size]
                by_case.append(chunk)
                passed.append([1.0 if d == 0 else 0.0 for d in chunk])
                start += size
            points.append(
                CostPoint(
                    arm=arm,
                    round=r,
                    mean_tokens=float(tokens_matrix[:, r].mean()),
                    pass_rate=cluster_bootstrap_mean(
                        passed, resamples=resamples, seed=seed, confidence=confidence
                    ),
                    mean_defects=cluster_bootstrap_mean(
                        by_case, resamples=resamples, seed=seed, confidence=confidence
                    ),
                )
            )
    return tuple(points)


def cost_curve_line(points: Sequence[CostPoint], arm: str) -> str | None:
    """The terminal's line of one arm: pass rate with its interval at each round's tokens."""
    mine = [p for p in points if p.arm == arm]
    if len(mine) < 2:
        return None

    def rate(p: CostPoint) -> str:
        e = p.pass_rate
        if e.mean is None or e.low is None or e.high is None:
            return "n/a"
        return f"{e.mean:.0%} [{e.low:.0%}, {e.high:.0%}]"

    return "  pass rate vs tokens (95% CI): " + ", ".join(
        f"r{p.round} {rate(p)} @ {p.mean_tokens:,.0f}" for p in mine
    )
