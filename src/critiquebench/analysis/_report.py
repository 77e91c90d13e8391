"""The per-run report: DuckDB SQL over the Parquet tables plus paired statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import duckdb

from critiquebench.analysis._cost import CallCost, PriceTable, cost_summary
from critiquebench.analysis._curve import IterationCurve, iteration_curve
from critiquebench.analysis._stats import (
    McNemarResult,
    ReductionEstimate,
    acceptance,
    cluster_bootstrap_reduction,
    clustered_mcnemar,
)

_PER_ARM_SQL = """
SELECT
    arm,
    count(*) AS n,
    avg(defects_initial) AS mean_defects_initial,
    avg(defects_final) AS mean_defects,
    avg(CASE WHEN passed THEN 1.0 ELSE 0.0 END) AS pass_rate,
    median(latency_s) AS p50_latency_s,
    quantile_cont(latency_s, 0.9) AS p90_latency_s,
    avg(tokens_in) AS mean_tokens_in,
    avg(tokens_out) AS mean_tokens_out,
    avg(calls) AS mean_calls,
    avg(loops) AS mean_loops,
    count(*) FILTER (WHERE escalated) AS escalated,
    count(*) FILTER (WHERE error IS NOT NULL) AS errors,
    sum(verifier_errors) AS verifier_errors,
    sum(findings_killed) AS findings_killed
FROM cases WHERE run_id = $run_id GROUP BY arm ORDER BY arm
"""

_HALTS_SQL = """
SELECT arm, halt_reason, count(*) FROM cases WHERE run_id = $run_id
GROUP BY arm, halt_reason ORDER BY arm, count(*) DESC, halt_reason
"""

# Pairs share case and rep; the case is the unit of resampling, its reps move together.
# A unit with an infrastructure error measured nothing, so its pair is left out.
_PAIRS_SQL = """
SELECT case_id, a.defects_final, x.defects_final, a.passed, x.passed
FROM cases a JOIN cases x USING (run_id, case_id, rep)
WHERE run_id = $run_id AND a.arm = 'A' AND x.arm = $arm
  AND a.error IS NULL AND x.error IS NULL
ORDER BY case_id, rep
"""

_CALLS_SQL = """
SELECT arm, model, original_tokens_in, original_tokens_out, cached
FROM calls WHERE run_id = $run_id
"""

_ATTEMPTS_SQL = """
SELECT arm, list(defects ORDER BY iteration) FROM attempts WHERE run_id = $run_id
GROUP BY arm, case_id, rep ORDER BY arm
"""


@dataclass(frozen=True)
class ArmSummary:
    """The headline numbers of one arm of a run."""

    arm: str
    n: int
    mean_defects_initial: float
    mean_defects: float
    pass_rate: float
    p50_latency_s: float
    p90_latency_s: float
    mean_tokens_in: float
    mean_tokens_out: float
    mean_calls: float
    mean_loops: float
    escalated: int
    errors: int
    verifier_errors: int
    findings_killed: int = 0
    halts: dict[str, int] = field(default_factory=dict)
    reduction: ReductionEstimate | None = None
    verdict: str | None = None
    mcnemar: McNemarResult | None = None
    cost_run: float = 0.0
    cost_experiment: float = 0.0
    cost_per_defect_removed: float | None = None

    @property
    def reduction_vs_a(self) -> float | None:
        """The point estimate of the defect reduction vs arm A."""
        return self.reduction.estimate if self.reduction else None


@dataclass(frozen=True)
class RunReport:
    """Everything the terminal, Markdown and HTML reports show for one run."""

    run_id: str
    target: float
    arms: list[ArmSummary]
    curves: dict[str, IterationCurve]
    unknown_models: tuple[str, ...] = ()


def arm_summaries(
    connection: duckdb.DuckDBPyConnection,
    run_id: str,
    *,
    prices: PriceTable | None = None,
    target: float = 0.80,
    resamples: int = 10_000,
) -> list[ArmSummary]:
    """Per-arm numbers of one run, with paired statistics against arm A."""
    return build_report(connection, run_id, prices=prices, target=target, resamples=resamples).arms


def build_report(
    connection: duckdb.DuckDBPyConnection,
    run_id: str,
    *,
    prices: PriceTable | None = None,
    target: float = 0.80,
    resamples: int = 10_000,
) -> RunReport:
    """Compute the whole report of one run from the DuckDB views."""
    params = {"run_id": run_id}
    halts: dict[str, dict[str, int]] = {}
    for arm, reason, count in connection.execute(_HALTS_SQL, params).fetchall():
        halts.setdefault(arm, {})[reason] = int(count)
    priced = _priced_calls(connection, run_id, prices or PriceTable({}))
    costs = {arm: cost_summary(calls) for arm, calls in priced.items()}
    cursor = connection.execute(_PER_ARM_SQL, params)
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    base_defects = next((float(row["mean_defects"]) for row in rows if row["arm"] == "A"), None)
    base_cost = costs["A"].experiment_cost if "A" in costs else 0.0
    arms: list[ArmSummary] = []
    for row in rows:
        arm, n = str(row["arm"]), int(row["n"])
        cost = costs.get(arm)
        per_defect = None
        if base_defects is not None and arm != "A" and cost is not None:
            removed = (base_defects - float(row["mean_defects"])) * n
            per_defect = (cost.experiment_cost - base_cost) / removed if removed > 0 else None
        arms.append(
            ArmSummary(
                arm=arm,
                n=n,
                mean_defects_initial=float(row["mean_defects_initial"]),
                mean_defects=float(row["mean_defects"]),
                pass_rate=float(row["pass_rate"]),
                p50_latency_s=float(row["p50_latency_s"]),
                p90_latency_s=float(row["p90_latency_s"]),
                mean_tokens_in=float(row["mean_tokens_in"]),
                mean_tokens_out=float(row["mean_tokens_out"]),
                mean_calls=float(row["mean_calls"]),
                mean_loops=float(row["mean_loops"]),
                escalated=int(row["escalated"] or 0),
                errors=int(row["errors"] or 0),
                verifier_errors=int(row["verifier_errors"] or 0),
                findings_killed=int(row["findings_killed"] or 0),
                halts=halts.get(arm, {}),
                cost_run=cost.run_cost if cost else 0.0,
                cost_experiment=cost.experiment_cost if cost else 0.0,
                cost_per_defect_removed=per_defect,
                **_versus_baseline(connection, run_id, arm, target, resamples),
            )
        )
    unknown = cost_summary([call for calls in priced.values() for call in calls]).unknown_models
    return RunReport(run_id, target, arms, _curves(connection, run_id), unknown)


def _versus_baseline(
    connection: duckdb.DuckDBPyConnection, run_id: str, arm: str, target: float, resamples: int
) -> dict[str, Any]:
    """Reduction with its CI, acceptance verdict and McNemar test; empty for arm A."""
    if arm == "A":
        return {}
    pairs = connection.execute(_PAIRS_SQL, {"run_id": run_id, "arm": arm}).fetchall()
    if not pairs:
        return {}
    cases = [list(rows) for _, rows in groupby(pairs, key=lambda row: row[0])]

    def column(index: int) -> list[list[Any]]:
        return [[row[index] for row in rows] for rows in cases]

    estimate = cluster_bootstrap_reduction(column(1), column(2), resamples=resamples)
    return {
        "reduction": estimate,
        "verdict": acceptance(estimate, target),
        "mcnemar": clustered_mcnemar(column(3), column(4)),
    }


def _priced_calls(
    connection: duckdb.DuckDBPyConnection, run_id: str, prices: PriceTable
) -> dict[str, list[CallCost]]:
    # Cached calls are priced at their original tokens: what the call would have cost.
    by_arm: dict[str, list[CallCost]] = {}
    for arm, model, tokens_in, tokens_out, cached in connection.execute(
        _CALLS_SQL, {"run_id": run_id}
    ).fetchall():
        by_arm.setdefault(arm, []).append(
            CallCost.priced(model, int(tokens_in), int(tokens_out), bool(cached), prices)
        )
    return by_arm


def _curves(connection: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, IterationCurve]:
    units: dict[str, list[list[int]]] = {}
    for arm, defects in connection.execute(_ATTEMPTS_SQL, {"run_id": run_id}).fetchall():
        units.setdefault(arm, []).append([int(d) for d in defects])
    return {arm: iteration_curve(values) for arm, values in units.items()}
