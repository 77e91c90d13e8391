"""The report's charts in page order, with their captions, from a RunReport's numbers alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from critiquebench.analysis.render._charts import (
    CostAxis,
    Figure,
    cost_chart,
    cost_curve_chart,
    curve_chart,
    defects_chart,
    halts_chart,
    tokens_chart,
)
from critiquebench.analysis.render._format import halt_explanation
from critiquebench.analysis.report import ArmSummary, CostPoint, RunReport

_CURVE_NOTE = (
    "Kept = the answer the loop returns if stopped after that round (its best attempt "
    "so far; ends at the table's mean defects); latest = the attempt made in that round."
)


def _bound(arm: ArmSummary, side: str) -> float:
    # No interval (one case): draw the point, with no error bar to suggest one.
    ci = arm.defects_ci
    value = None if ci is None else (ci.low if side == "low" else ci.high)
    return arm.mean_defects if value is None else value


def cost_axis(report: RunReport) -> tuple[CostAxis, str]:
    """What x of the cost chart shows, and the caption saying why.

    A run that cost nothing (a free or local model, or no price table) would put every
    arm on one $0 line; it plots tokens then, or calls when no tokens were counted.
    """
    if any(a.cost_per_unit > 0 for a in report.arms):
        return (
            CostAxis("cost", "estimated cost per unit (USD)", "$.2~g", "Cost vs defects"),
            "The experiment's cost per unit against defects.",
        )
    model = report.meta.model if report.meta else "the model"
    why = f"The run cost $0 ({model} is free or has no price in the table)"
    if any(a.mean_tokens_in + a.mean_tokens_out > 0 for a in report.arms):
        return (
            CostAxis("tokens", "mean tokens per unit (in + out)", ",.0f",
                     "Tokens vs defects (cost is $0)"),
            f"{why}, so tokens per unit stand in for cost.",
        )  # fmt: skip
    return (
        CostAxis("calls", "mean model calls per unit", ".1f", "Calls vs defects (cost is $0)"),
        f"{why} and counted no tokens, so model calls per unit stand in for cost.",
    )


def _rounds(report: RunReport) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    rounds: list[dict[str, Any]] = []
    gains: list[dict[str, Any]] = []
    advice: list[str] = []
    for arm, curves in report.curves.items():
        for answer, curve in (("kept", curves.kept), ("latest", curves.latest)):
            rounds += [
                {"arm": arm, "round": rnd, "answer": answer, "mean_defects": mean}
                for rnd, mean in enumerate(curve.mean_defects)
            ]
        kept = curves.kept
        gains += [
            {"arm": arm, "round": rnd, "gain": gain}
            for rnd, gain in enumerate(kept.marginal_gain)
            if gain is not None and kept.active[rnd] > 0
        ]
        if len(kept.mean_defects) > 1:
            advice.append(f"arm {arm}: recommended max_iters {kept.recommended_max_iters}")
    if not gains:
        advice.append(
            "No gain per round to draw: no unit of any arm ran a fix round (arm A makes one "
            "draft; a looping arm whose first drafts showed it nothing to fix stops there)"
        )
    return rounds, gains, "; ".join(advice) + "."


def _tokens_caption(points: list[dict[str, Any]]) -> str:
    caption = (
        "Each point is a round (labelled): tokens spent so far per unit (original tokens) "
        "and the pass rate of the answer kept then (no measured defect of any kind)."
    )
    if points and not any(point["mean_tokens"] for point in points):
        caption += " No tokens were counted (e.g. replayed answers), so every round sits at 0."
    return caption


def _cost_curve_rows(points: Sequence[CostPoint]) -> list[dict[str, Any]]:
    return [
        {
            "arm": p.arm, "round": p.round, "mean_tokens": p.mean_tokens,
            "measure": measure, "value": estimate.mean, "low": estimate.low,
            "high": estimate.high,
        }
        for p in points
        for measure, estimate in (("pass rate", p.pass_rate), ("mean defects", p.mean_defects))
    ]  # fmt: skip


def cost_curve_figure(points: Sequence[CostPoint]) -> Figure:
    """The cost-matched curves of a report (``RunReport.cost_curve``) with their caption."""
    spec = cost_curve_chart(_cost_curve_rows(points))
    caption = (
        "Pass rate (no measured defect of any kind) and mean defects of the answer kept "
        "against the tokens spent so far, one point per round of each arm (arm R: per "
        "fresh draft), with the case-bootstrap interval at each point: a loop beats "
        "resampling where its curve lies above R's at the same tokens."
    )
    return Figure("cost_curve", spec, caption, wide=True)


def report_figures(report: RunReport) -> list[Figure]:
    """The report's charts in page order, drawn from the report's numbers alone."""
    axis, cost_caption = cost_axis(report)
    summary = [
        {
            "arm": a.arm,
            "mean": a.mean_defects,
            "low": _bound(a, "low"),
            "high": _bound(a, "high"),
            "cost": a.cost_per_unit,
            "tokens": a.mean_tokens_in + a.mean_tokens_out,
            "calls": a.mean_calls,
        }
        for a in report.arms
    ]
    rounds, gains, advice = _rounds(report)
    tokens = [
        {"arm": arm, "round": p.round, "mean_tokens": p.mean_tokens, "pass_rate": p.pass_rate}
        for arm, curves in report.curves.items()
        for p in curves.pass_vs_tokens
    ]
    halts = [
        {"arm": a.arm, "halt_reason": reason, "units": units}
        for a in report.arms
        for reason, units in a.halts.items()
    ]
    halts_caption = " ".join(
        [
            "Why each arm's units stopped, counted in units (case x rep) like the pass rate. "
            "A halt says what the loop saw; the pass rate, what the measurement found.",
            *(halt_explanation(a) for a in report.arms),
        ]
    )
    return [
        Figure("defects", defects_chart(summary), "Mean defects of the answer kept, per arm."),
        Figure("cost", cost_chart(summary, axis), cost_caption),
        Figure("curve", curve_chart(rounds, gains), f"{_CURVE_NOTE} {advice}", wide=True),
        Figure("tokens", tokens_chart(tokens), _tokens_caption(tokens)),
        Figure("halts", halts_chart(halts), halts_caption),
        *([cost_curve_figure(report.cost_curve)] if report.cost_curve else []),
    ]
