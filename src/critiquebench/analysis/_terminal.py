"""Rendering a run report for the terminal and as Markdown (Prefect artifacts)."""

from __future__ import annotations

from rich.table import Table

from critiquebench.analysis._report import ArmSummary, RunReport

_HEADERS = (
    "arm",
    "n",
    "defects@0",
    "defects",
    "reduction [95% CI]",
    "pass",
    "p50/p90 s",
    "tok in",
    "tok out",
    "cost $",
    "escal.",
    "verif.err",
    "killed",
)


def _reduction(summary: ArmSummary) -> str:
    if summary.arm == "A":
        return "baseline"
    estimate = summary.reduction
    if estimate is None or estimate.estimate is None:
        return "n/a"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.estimate:.0%}"
    return f"{estimate.estimate:.0%} [{estimate.low:.0%}, {estimate.high:.0%}]"


def _cells(summary: ArmSummary) -> list[str]:
    return [
        summary.arm,
        str(summary.n),
        f"{summary.mean_defects_initial:.2f}",
        f"{summary.mean_defects:.2f}",
        _reduction(summary),
        f"{summary.pass_rate:.0%}",
        f"{summary.p50_latency_s:.1f}/{summary.p90_latency_s:.1f}",
        f"{summary.mean_tokens_in:.0f}",
        f"{summary.mean_tokens_out:.0f}",
        f"{summary.cost_experiment:.4f}",
        str(summary.escalated),
        str(summary.verifier_errors),
        str(summary.findings_killed),
    ]


def summary_table(report: RunReport) -> Table:
    """A compact per-arm table; halt reasons go in the caption."""
    table = Table(title=f"critiquebench run {report.run_id}", title_justify="left")
    for header in _HEADERS:
        table.add_column(header, justify="left" if header == "arm" else "right")
    for summary in report.arms:
        table.add_row(*_cells(summary))
    table.caption = "\n".join(
        f"halts {s.arm}: " + ", ".join(f"{k}={v}" for k, v in s.halts.items()) for s in report.arms
    )
    table.caption_justify = "left"
    return table


def verdict_lines(report: RunReport) -> list[str]:
    """The answer in plain words: acceptance per arm, pass-rate test, the curve, caveats."""
    lines: list[str] = []
    for s in report.arms:
        if s.arm == "A" or s.reduction is None:
            continue
        verdict = s.verdict or "inconclusive"
        lines.append(
            f"arm {s.arm}: target {report.target:.0%} defect reduction vs A is {verdict.upper()} "
            f"(reduction {_reduction(s)})"
        )
        if s.reduction.note:
            lines.append(f"  note: {s.reduction.note}")
        if s.mcnemar is not None:
            m = s.mcnemar
            lines.append(
                f"  pass rate {m.pass_rate_baseline:.0%} -> {m.pass_rate_treatment:.0%} "
                f"(McNemar exact p = {m.p_value:.3g}, {m.c} fixed, {m.b} broken)"
            )
        curve = report.curves.get(s.arm)
        if curve is not None and len(curve.mean_defects) > 1:
            means = " -> ".join(f"{m:.2f}" for m in curve.mean_defects)
            lines.append(
                f"  defects by round: {means}; recommended max_iters = "
                f"{curve.recommended_max_iters}"
            )
    if not any(s.arm == "A" for s in report.arms):
        lines.append("No arm A in this run: reductions need the baseline.")
    if report.unknown_models:
        lines.append(f"Unpriced models (cost counted as 0): {', '.join(report.unknown_models)}")
    return lines


def report_markdown(report: RunReport) -> str:
    """The per-arm table and the verdict as Markdown."""
    rows = [
        "| " + " | ".join(_HEADERS) + " |",
        "|" + "---|" * len(_HEADERS),
        *("| " + " | ".join(_cells(s)) + " |" for s in report.arms),
    ]
    verdict = "\n".join(f"- {line.strip()}" for line in verdict_lines(report))
    return f"# critiquebench run {report.run_id}\n\n" + "\n".join(rows) + "\n\n" + verdict + "\n"


def comparison_table(first: RunReport, second: RunReport) -> Table:
    """Two runs side by side, arm by arm (e.g. two models or two prompts)."""
    table = Table(title=f"{first.run_id} vs {second.run_id}", title_justify="left")
    for header in ("arm", "metric", first.run_id, second.run_id):
        table.add_column(header, justify="left" if header in ("arm", "metric") else "right")
    by_arm = {s.arm: s for s in second.arms}
    for left in first.arms:
        right = by_arm.get(left.arm)
        rows = [
            ("mean defects", f"{left.mean_defects:.2f}", right and f"{right.mean_defects:.2f}"),
            ("reduction vs A", _reduction(left), right and _reduction(right)),
            ("pass rate", f"{left.pass_rate:.0%}", right and f"{right.pass_rate:.0%}"),
            ("p50 latency s", f"{left.p50_latency_s:.1f}", right and f"{right.p50_latency_s:.1f}"),
            ("cost $", f"{left.cost_experiment:.4f}", right and f"{right.cost_experiment:.4f}"),
        ]
        for metric, a, b in rows:
            table.add_row(left.arm, metric, a, b or "-")
    return table
