"""The self-contained HTML report of one run: per-arm table, verdict, charts, escalations."""

from __future__ import annotations

import html
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

import duckdb

from critiquebench.analysis import _charts
from critiquebench.analysis._cost import CallCost, CostSummary, PriceTable, cost_summary
from critiquebench.analysis._curve import iteration_curve
from critiquebench.analysis._stats import (
    ReductionEstimate,
    cluster_bootstrap_mean,
    cluster_bootstrap_reduction,
    decide_acceptance,
)
from critiquebench.analysis._views import connect
from critiquebench.pipeline import ResultStore, Unit

_ARMS_SQL = """
SELECT arm, count(*), avg(defects_final), avg(CASE WHEN passed THEN 1.0 ELSE 0.0 END),
       quantile_cont(latency_s, 0.5), quantile_cont(latency_s, 0.9), avg(tokens_in), avg(tokens_out)
FROM cases WHERE run_id = $run_id GROUP BY arm ORDER BY arm
"""
# Pairs are the same case and rep in both arms; cases are resampled, reps move with them.
# Units with an infrastructure error measured nothing and are left out.
_PAIRS_SQL = """
SELECT a.case_id, a.defects_final, x.defects_final FROM cases a
JOIN cases x ON a.run_id = x.run_id AND a.case_id = x.case_id AND a.rep = x.rep
WHERE a.run_id = $run_id AND a.arm = 'A' AND x.arm = $arm
  AND a.error IS NULL AND x.error IS NULL ORDER BY a.case_id, a.rep
"""
_DEFECTS_SQL = """
SELECT case_id, defects_final FROM cases
WHERE run_id = $run_id AND arm = $arm AND error IS NULL ORDER BY case_id, rep
"""
_CALLS_SQL = "SELECT arm, model, tokens_in, tokens_out, cached FROM calls WHERE run_id = $run_id"
_CURVE_SQL = """
SELECT arm, list(defects ORDER BY iteration) FROM attempts WHERE run_id = $run_id
GROUP BY arm, case_id, rep ORDER BY arm
"""
_HALTS_SQL = "SELECT arm, halt_reason, count(*) FROM cases WHERE run_id = $run_id GROUP BY ALL"
_ESCALATED_SQL = """
SELECT case_id, arm, rep, halt_reason, defects_final FROM cases
WHERE run_id = $run_id AND escalated ORDER BY case_id, arm, rep
"""
_RUN_SQL = """
SELECT suite, model, arms, reps, retry_limit, feedback FROM runs
WHERE run_id = $run_id ORDER BY invocation_started_at DESC LIMIT 1
"""
_META = "suite {}, model {}, arms {}, reps {}, retry limit {}, feedback {}"
_HEADERS = ("arm", "n", "mean defects", "95% CI", "reduction vs A", "reduction 95% CI", "pass",
            "p50 s", "p90 s", "tokens in", "tokens out", "cost/unit", "cost total")  # fmt: skip


@dataclass(frozen=True)
class _Arm:
    name: str
    n: int
    mean: float
    ci: tuple[float, float]
    pass_rate: float
    latency_s: tuple[float, float]  # p50, p90
    tokens: tuple[float, float]  # mean in, mean out
    cost: CostSummary
    reduction: ReductionEstimate | None  # None for the baseline

    @property
    def cost_per_unit(self) -> float:
        return self.cost.experiment_cost / self.n


def _clustered(
    db: duckdb.DuckDBPyConnection, run_id: str, arm: str, versus_a: bool
) -> tuple[tuple[float, float], ReductionEstimate | None]:
    """The arm's mean-defects CI and its reduction vs A, both resampling cases."""
    params = {"run_id": run_id, "arm": arm}
    rows = db.execute(_DEFECTS_SQL, params).fetchall()
    mean = cluster_bootstrap_mean(
        [[r[1] for r in group] for _, group in groupby(rows, key=lambda r: r[0])]
    )
    ci = (mean.low, mean.high) if mean.low is not None and mean.high is not None else (0.0, 0.0)
    if not versus_a:
        return ci, None
    pairs = [list(g) for _, g in groupby(db.execute(_PAIRS_SQL, params).fetchall(), lambda r: r[0])]
    reduction = cluster_bootstrap_reduction(
        [[r[1] for r in group] for group in pairs], [[r[2] for r in group] for group in pairs]
    )
    return ci, reduction


def _arms(db: duckdb.DuckDBPyConnection, run_id: str, prices: PriceTable) -> list[_Arm]:
    params = {"run_id": run_id}
    calls: dict[str, list[CallCost]] = {}
    for arm, model, tok_in, tok_out, cached in db.execute(_CALLS_SQL, params).fetchall():
        calls.setdefault(arm, []).append(CallCost.priced(model, tok_in, tok_out, cached, prices))
    rows = db.execute(_ARMS_SQL, params).fetchall()
    baseline = any(row[0] == "A" for row in rows)
    arms = []
    for name, n, mean, pass_rate, p50, p90, tok_in, tok_out in rows:
        ci, reduction = _clustered(db, run_id, name, baseline and name != "A")
        cost = cost_summary(calls.get(name, []))
        arms.append(
            _Arm(name, n, mean, ci, pass_rate, (p50, p90), (tok_in, tok_out), cost, reduction)
        )
    return arms


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _verdict(arm: _Arm, estimate: ReductionEstimate, target: float) -> str:
    """A paragraph saying plainly whether the arm meets the reduction target."""
    decision = decide_acceptance(estimate, target)
    verdict = decision.verdict
    said = f"arm {arm.name} reduces defects by {_pct(estimate.estimate)} ({estimate.confidence:.0%}"
    said += f" CI {_pct(estimate.low)} to {_pct(estimate.high)}, {estimate.n_cases} cases,"
    said += f" {estimate.n_pairs} pairs)"
    said = f"{verdict.capitalize()}: {said}; {decision.reason}."
    if estimate.note:
        said += f" Note: {estimate.note}."
    return f'<p class="verdict {verdict.replace(" ", "-")}">{html.escape(said)}</p>'


def _table(arms: list[_Arm]) -> str:
    rows = []
    for a in arms:
        r = a.reduction
        cells = (a.name, a.n, f"{a.mean:.2f}", f"{a.ci[0]:.2f} to {a.ci[1]:.2f}",
                 "baseline" if r is None else _pct(r.estimate),
                 "" if r is None else f"{_pct(r.low)} to {_pct(r.high)}", f"{a.pass_rate:.0%}",
                 f"{a.latency_s[0]:.2f}", f"{a.latency_s[1]:.2f}", f"{a.tokens[0]:.0f}",
                 f"{a.tokens[1]:.0f}", f"${a.cost_per_unit:.6f}",
                 f"${a.cost.experiment_cost:.4f}")  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    header = "".join(f"<th>{h}</th>" for h in _HEADERS)
    return f"<table><tr>{header}</tr>{''.join(rows)}</table>"


def _escalations(db: duckdb.DuckDBPyConnection, run_dir: Path, run_id: str) -> str:
    items = []
    for case_id, arm, rep, halt, left in db.execute(_ESCALATED_SQL, {"run_id": run_id}).fetchall():
        # The store names each record by its unit key, so no lookup table is needed.
        name = f"{Unit(case_id, arm, rep).key}.md"
        label = html.escape(f"{case_id} (arm {arm}, rep {rep})")
        if (run_dir / "escalations" / name).exists():
            label = f'<a href="escalations/{html.escape(name)}">{label}</a>'
        items.append(f"<li>{label}: {html.escape(halt)}, {left} defect(s) left</li>")
    return f"<ul>{''.join(items)}</ul>" if items else "<p>No unit escalated.</p>"


def _figures(
    db: duckdb.DuckDBPyConnection, run_id: str, arms: list[_Arm]
) -> list[tuple[dict[str, Any], str]]:
    """(chart spec, caption) pairs, in page order."""
    params = {"run_id": run_id}
    units: dict[str, list[list[int]]] = {}
    for arm, defects in db.execute(_CURVE_SQL, params).fetchall():
        units.setdefault(arm, []).append(defects)
    curve_rows, advice = [], []
    for arm, per_unit in units.items():
        curve = iteration_curve(per_unit)
        for rnd, mean in enumerate(curve.mean_defects):
            gain = curve.marginal_gain[rnd]
            curve_rows.append({"arm": arm, "round": rnd, "mean_defects": mean, "gain": gain})
        if len(curve.mean_defects) > 1:
            advice.append(f"arm {arm}: recommended max_iters {curve.recommended_max_iters}")
    halts = db.execute(_HALTS_SQL, params).fetchall()
    summary = [
        {"arm": a.name, "mean": a.mean, "low": a.ci[0], "high": a.ci[1], "cost": a.cost_per_unit}
        for a in arms
    ]
    return [
        (_charts.defects_chart(summary), "Mean defects of the answer kept, per arm."),
        (_charts.cost_chart(summary), "Estimated cost per unit against mean defects."),
        (_charts.curve_chart(curve_rows), "; ".join(advice) or "No arm ran a fix round."),
        (_charts.halts_chart([{"arm": a, "halt_reason": h, "units": n} for a, h, n in halts]), ""),
    ]


def render_html_report(
    output: Path, run_id: str, *, prices: PriceTable | None = None, target: float = 0.80
) -> Path:
    """Write ``<output>/<run_id>/report.html``, a page that opens offline, and return its path.

    Without ``prices`` every model is priced at 0, and the page says so.
    """
    db = connect(output)
    prices = prices or PriceTable({}, source="none given")
    arms = _arms(db, run_id, prices)
    if not arms:
        raise ValueError(f"no results for run {run_id!r} under {output}")
    # fetchall, not fetchone: DuckDB 2 refuses db.sql() while a result is left unfinished.
    runs = db.execute(_RUN_SQL, {"run_id": run_id}).fetchall()
    meta = _META.format(*runs[0]) if runs else ""
    verdicts = "".join(_verdict(a, a.reduction, target) for a in arms if a.reduction is not None)
    unknown = sorted({model for a in arms for model in a.cost.unknown_models})
    notes = f"Prices: {prices.source}."
    if unknown:
        notes += f" Not in the price table, so priced at 0: {', '.join(unknown)}."
    figures = _figures(db, run_id, arms)
    blocks = "".join(
        f'<figure{" class=wide" if i == 2 else ""}><div id="chart-{i}"></div>'
        f'<figcaption class="note">{html.escape(caption)}</figcaption></figure>'
        for i, (_, caption) in enumerate(figures)
    )
    title = html.escape(f"critiquebench run {run_id}")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{_charts.PAGE_STYLE}</style><script>{_charts.vega_bundle()}</script></head><body>
<h1>{title}</h1><p>{html.escape(meta)}</p>
<h2>Verdict: does the loop remove at least {target:.0%} of the defects of arm A?</h2>
{verdicts or "<p>No verdict: the run needs arm A and at least one other arm.</p>"}
<h2>Per arm</h2>{_table(arms)}
<p class="note">Reduction = (mean_A - mean_X) / mean_A over pairs of the same case and rep,
CIs by a bootstrap that resamples cases (a case's reps move together); latency is wall
time per unit. {html.escape(notes)}</p>
<h2>Charts</h2><div class="charts">{blocks}</div>
<h2>Escalated units</h2>{_escalations(db, output / run_id, run_id)}
<script>{_charts.embed_script([spec for spec, _ in figures])}</script></body></html>
"""
    return ResultStore(output).write_text(run_id, "report.html", page)
