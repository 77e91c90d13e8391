"""Each loop against resampling at the loop's own tokens (arm R, matched per unit).

R draws fresh drafts and stops only when one is clean on the feedback checks (or at
its caps), so what R would have returned with a budget of ``T`` tokens is exactly
the best of its draws whose running tokens fit in ``T`` (``loop/_resample.py``).
For a loop X and each (case, rep) both measured, R is cut at X's tokens on that
same unit, at least its first draft (which is X's first draft, at the same
cost): the pair compares the loop with more samples at the loop's price, unit by
unit. R never spends more than X there, so a loop that beats R beats it fairly.

The reduction of X against R is ``(sum_R@X - sum_X) / sum_R@X`` with the same case
bootstrap as the reduction against A; pass rates (no measured defect of any kind)
get case-bootstrap intervals. A unit where X spent more than R drew in all (R hit
its caps without a clean draft) gives R less than X's tokens: counted in ``short``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from critiquebench.analysis.stats import (
    MeanEstimate,
    ReductionEstimate,
    cluster_bootstrap_mean,
    cluster_bootstrap_reduction,
)
from critiquebench.loop import RESAMPLE

# Per loop unit, R's draws of the same (case, rep) cut at the loop's tokens. The draft R
# keeps is chosen as R chooses it (fewest visible defects, the latest on ties).
MATCHED = f"""
WITH valid AS (
    SELECT *, coalesce(defects_total_final, defects_final) AS measured_final
    FROM cases WHERE run_id = $run_id AND error IS NULL
), spent AS (
    SELECT arm, case_id, rep, iteration,
           sum(experiment_tokens_in + experiment_tokens_out) AS tokens
    FROM calls WHERE run_id = $run_id AND arm = '{RESAMPLE}'
    GROUP BY arm, case_id, rep, iteration
), draws AS (
    SELECT a.case_id, a.rep, a.iteration, coalesce(a.defects_total, a.defects) AS defects,
           a.defects_feedback::BIGINT * 1000000 - a.iteration AS rank,
           sum(coalesce(s.tokens, 0)) OVER (
               PARTITION BY a.case_id, a.rep ORDER BY a.iteration
               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
           ) AS tokens,
           v.halt_reason = 'visible_clean' AS clean
    FROM attempts a
    JOIN valid v USING (arm, case_id, rep)
    LEFT JOIN spent s USING (arm, case_id, rep, iteration)
    WHERE a.run_id = $run_id AND a.arm = '{RESAMPLE}'
), loops AS (
    SELECT arm, case_id, rep, measured_final AS defects, tokens_in + tokens_out AS tokens
    FROM valid WHERE arm <> '{RESAMPLE}'
), cut AS (
    SELECT x.arm, x.case_id, x.rep, x.defects, x.tokens,
           arg_min(d.defects, d.rank) FILTER (WHERE d.tokens <= x.tokens OR d.iteration = 0)
               AS r_defects,
           max(d.tokens) FILTER (WHERE d.tokens <= x.tokens OR d.iteration = 0) AS r_tokens,
           max(d.tokens) < x.tokens AND NOT bool_or(d.clean) AS short
    FROM loops x JOIN draws d USING (case_id, rep)
    GROUP BY x.arm, x.case_id, x.rep, x.defects, x.tokens
)
SELECT arm, case_id, list(r_defects ORDER BY rep), list(defects ORDER BY rep),
       list(r_tokens ORDER BY rep), list(tokens ORDER BY rep), list(short ORDER BY rep)
FROM cut GROUP BY arm, case_id ORDER BY arm, case_id
"""
"""Per loop arm and case, the reps' (R at the loop's tokens, loop) defects and tokens."""


@dataclass(frozen=True, kw_only=True)
class ResampleComparison:
    """Loop ``arm`` against R cut at the loop's tokens, over their measured pairs."""

    arm: str
    n_pairs: int
    n_cases: int
    reduction: ReductionEstimate
    """Defect reduction of the loop against R at its tokens (R is the baseline)."""
    mean_defects: float
    mean_defects_resample: float
    pass_rate: MeanEstimate
    """The loop's share of answers with no measured defect of any kind."""
    pass_rate_resample: MeanEstimate
    """R's share, at the loop's tokens on each unit."""
    mean_tokens: float
    mean_tokens_resample: float
    """Tokens R spent within the loop's (at most the loop's, but its first draft)."""
    short: int
    """Pairs where the loop spent more than R drew in all: R was cut by its own caps."""


def resample_comparisons(
    rows: Sequence[Sequence[Any]], *, resamples: int, seed: int, confidence: float
) -> tuple[ResampleComparison, ...]:
    """The comparisons from the rows of :data:`MATCHED`, one per loop arm, arm A too
    (A spends one draft, so R at A's tokens is A's own draft: a check, 0%)."""
    by_arm: dict[str, list[Sequence[Any]]] = {}
    for row in rows:
        by_arm.setdefault(str(row[0]), []).append(row)
    result = []
    for arm, cases in sorted(by_arm.items()):
        r_defects = [[int(d) for d in case[2]] for case in cases]
        x_defects = [[int(d) for d in case[3]] for case in cases]
        r_tokens = [float(t) for case in cases for t in case[4]]
        x_tokens = [float(t) for case in cases for t in case[5]]
        n = len(x_tokens)

        def passes(by_case: list[list[int]]) -> MeanEstimate:
            flags = [[1.0 if d == 0 else 0.0 for d in reps] for reps in by_case]
            return cluster_bootstrap_mean(
                flags, resamples=resamples, seed=seed, confidence=confidence
            )

        result.append(
            ResampleComparison(
                arm=arm,
                n_pairs=n,
                n_cases=len(cases),
                reduction=cluster_bootstrap_reduction(
                    r_defects, x_defects, resamples=resamples, seed=seed, confidence=confidence
                ),
                mean_defects=sum(map(sum, x_defects)) / n,
                mean_defects_resample=sum(map(sum, r_defects)) / n,
                pass_rate=passes(x_defects),
                pass_rate_resample=passes(r_defects),
                mean_tokens=sum(x_tokens) / n,
                mean_tokens_resample=sum(r_tokens) / n,
                short=sum(bool(s) for case in cases for s in case[6]),
            )
        )
    return tuple(result)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _interval(estimate: MeanEstimate) -> str:
    if estimate.low is None or estimate.high is None:
        return _pct(estimate.mean)
    return f"{_pct(estimate.mean)} [{_pct(estimate.low)}, {_pct(estimate.high)}]"


def reduction_against_text(reduction: ReductionEstimate) -> str:
    """``35% [10%, 55%]``, or ``n/a (why)`` when undefined."""
    if reduction.estimate is None:
        return f"n/a ({reduction.note})" if reduction.note else "n/a"
    if reduction.low is None or reduction.high is None:
        return _pct(reduction.estimate)
    return f"{_pct(reduction.estimate)} [{_pct(reduction.low)}, {_pct(reduction.high)}]"


def resample_lines(comparisons: Sequence[ResampleComparison]) -> list[str]:
    """The terminal's lines: each loop's reduction against R at its tokens, and what R
    reaches at those tokens."""
    lines = []
    for c in comparisons:
        if c.arm == "A":
            continue  # R at A's tokens is A's draft: nothing to say
        lines.append(
            f"arm {c.arm} vs {RESAMPLE} at {c.arm}'s tokens: defect reduction "
            f"{reduction_against_text(c.reduction)} over {c.n_pairs} pairs ({c.n_cases} cases)"
        )
        short = f"; {c.short} pair(s) where {RESAMPLE} ran out first" if c.short else ""
        lines.append(
            f"  at the tokens {c.arm} spends ({c.mean_tokens:,.0f} per unit), {RESAMPLE} reaches "
            f"pass rate {_interval(c.pass_rate_resample)} and {c.mean_defects_resample:.2f} "
            f"mean defects ({c.mean_tokens_resample:,.0f} tokens); {c.arm}: pass rate "
            f"{_interval(c.pass_rate)}, {c.mean_defects:.2f} mean defects{short}"
        )
    return lines
