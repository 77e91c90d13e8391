"""The per-arm report, computed by DuckDB SQL over the Parquet tables."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
from rich.table import Table

_PER_ARM_SQL = """
WITH per_arm AS (
    SELECT
        arm,
        count(*) AS n,
        avg(defects_initial) AS mean_defects_initial,
        avg(defects_final) AS mean_defects,
        avg(CASE WHEN passed THEN 1.0 ELSE 0.0 END) AS pass_rate,
        median(latency_s) AS median_latency_s,
        avg(tokens_in) AS mean_tokens_in,
        avg(tokens_out) AS mean_tokens_out,
        avg(loops) AS mean_loops,
        sum(CASE WHEN escalated THEN 1 ELSE 0 END) AS escalated,
        sum(CASE WHEN error IS NOT NULL THEN 1 ELSE 0 END) AS errors
    FROM cases
    WHERE run_id = $run_id
    GROUP BY arm
),
halts AS (
    SELECT arm, string_agg(halt_reason || '=' || n, ', ' ORDER BY n DESC, halt_reason) AS halts
    FROM (
        SELECT arm, halt_reason, count(*) AS n FROM cases
        WHERE run_id = $run_id GROUP BY arm, halt_reason
    )
    GROUP BY arm
),
baseline AS (SELECT mean_defects AS base FROM per_arm WHERE arm = 'A')
SELECT
    per_arm.*,
    CASE WHEN baseline.base > 0 THEN (baseline.base - per_arm.mean_defects) / baseline.base END
        AS reduction_vs_a,
    halts.halts
FROM per_arm
JOIN halts USING (arm)
LEFT JOIN baseline ON true
ORDER BY arm
"""


@dataclass(frozen=True)
class ArmSummary:
    """The headline numbers of one arm of a run."""

    arm: str
    n: int
    mean_defects_initial: float
    mean_defects: float
    pass_rate: float
    median_latency_s: float
    mean_tokens_in: float
    mean_tokens_out: float
    mean_loops: float
    escalated: int
    errors: int
    reduction_vs_a: float | None
    halts: str


def arm_summaries(connection: duckdb.DuckDBPyConnection, run_id: str) -> list[ArmSummary]:
    """Per-arm numbers of one run, from the ``cases`` view."""
    rows = connection.execute(_PER_ARM_SQL, {"run_id": run_id}).fetchall()
    return [
        ArmSummary(
            arm=row[0],
            n=int(row[1]),
            mean_defects_initial=float(row[2]),
            mean_defects=float(row[3]),
            pass_rate=float(row[4]),
            median_latency_s=float(row[5]),
            mean_tokens_in=float(row[6]),
            mean_tokens_out=float(row[7]),
            mean_loops=float(row[8]),
            escalated=int(row[9]),
            errors=int(row[10]),
            reduction_vs_a=None if row[11] is None else float(row[11]),
            halts=str(row[12]),
        )
        for row in rows
    ]


def summary_table(run_id: str, summaries: list[ArmSummary]) -> Table:
    """A compact terminal table of the per-arm numbers (halt reasons in the caption)."""
    table = Table(title=f"critiquebench run {run_id}", title_justify="left")
    headers = (
        "arm",
        "n",
        "defects@0",
        "defects",
        "reduction",
        "pass",
        "p50 s",
        "tok in",
        "tok out",
        "loops",
        "escal.",
    )
    for header in headers:
        table.add_column(header, justify="left" if header == "arm" else "right")
    for s in summaries:
        if s.arm == "A":
            reduction = "baseline"
        elif s.reduction_vs_a is None:
            reduction = "n/a"
        else:
            reduction = f"{s.reduction_vs_a:.0%}"
        table.add_row(
            s.arm,
            str(s.n),
            f"{s.mean_defects_initial:.2f}",
            f"{s.mean_defects:.2f}",
            reduction,
            f"{s.pass_rate:.0%}",
            f"{s.median_latency_s:.1f}",
            f"{s.mean_tokens_in:.0f}",
            f"{s.mean_tokens_out:.0f}",
            f"{s.mean_loops:.2f}",
            str(s.escalated),
        )
    table.caption = "\n".join(f"halts {s.arm}: {s.halts}" for s in summaries)
    table.caption_justify = "left"
    return table
