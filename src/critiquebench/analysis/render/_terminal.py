"""The run report for the terminal, as Markdown, and as Prefect table-artifact rows."""

from __future__ import annotations

from typing import Any, Literal

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from critiquebench.analysis.render._format import (
    cost_note,
    defects_text,
    halt_explanation,
    inert,
    kinds_label,
    kinds_text,
    markdown_code,
    meta_line,
    pct,
    reduction_text,
    sandbox_warning,
    usd,
)
from critiquebench.analysis.render._trigger_table import trigger_markdown, trigger_table
from critiquebench.analysis.render._withheld import (
    Quote,
    not_measured_lines,
    sensitivity_text,
    withheld_arms,
)
from critiquebench.analysis.report import (
    ArmSummary,
    RunReport,
    cost_curve_line,
    reduction_against_text,
    resample_lines,
)
from critiquebench.analysis.views import canary_text, critic_accuracy_text, fix_break_text

# The per-group means' header is the run's groups (e.g. "tests/lint/types" or "sql"):
# this placeholder stands for it until a report is known.
_KINDS = "<kinds>"
_HEADERS = (
    "arm",
    "n",
    "defects@0",
    "defects [95% CI]",
    _KINDS,
    "reduction [95% CI]",
    "pass",
    "tests pass",
    "p50/p90 s",
    "tok in",
    "tok out",
    "calls",
    "cost $",
    "escal.",
    "verif.err",
    "killed",
)
# Narrower terminals get the same columns split over stacked tables (``arm`` in
# each): what each arm measured, then what it cost, its defects by kind and how
# its loops ended.
_OUTCOME = ("arm", "n", "defects@0", "defects [95% CI]", "reduction [95% CI]", "pass")
_COST = ("arm", "p50/p90 s", "tok in", "tok out", "calls", "cost $")
# The test-only pass rate sits with the per-group means: both break the headline down.
_EVENTS = ("arm", "tests pass", _KINDS, "escal.", "verif.err", "killed")
_LAYOUTS: tuple[tuple[tuple[str, ...], ...], ...] = (
    (_HEADERS,),
    (_OUTCOME, (*_COST, *_EVENTS[1:])),
    (_OUTCOME, _COST, _EVENTS),
)


_TERMINAL_REASON = 120


def headers(report: RunReport) -> tuple[str, ...]:
    """The per-arm table's headers for ``report`` (its defect groups named)."""
    return tuple(kinds_label(report) if header == _KINDS else header for header in _HEADERS)


def _cells(summary: ArmSummary, groups: tuple[str, ...]) -> list[str]:
    return [
        summary.arm,
        str(summary.n),
        f"{summary.mean_defects_initial:.2f}",
        defects_text(summary),
        kinds_text(summary, groups),
        reduction_text(summary),
        pct(summary.pass_rate),
        pct(summary.tests_pass_rate),
        f"{summary.p50_latency_s:.1f}/{summary.p90_latency_s:.1f}",
        f"{summary.mean_tokens_in:.0f}",
        f"{summary.mean_tokens_out:.0f}",
        f"{summary.mean_calls:.1f}",
        usd(summary.cost_experiment),
        str(summary.escalated),
        str(summary.verifier_errors),
        str(summary.findings_killed),
    ]


def _table(headers: tuple[str, ...], rows: list[list[str]]) -> Table:
    table = Table(title_justify="left", caption_justify="left")
    for header in headers:
        # fold, never "…": a value cut to "0.…" is worse than one on two lines.
        justify: Literal["left", "right"] = "left" if header == "arm" else "right"
        table.add_column(header, justify=justify, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def _caption(report: RunReport) -> str:
    described = [f"arm {s.arm}: {s.description}" for s in report.arms if s.description]
    halts = [
        f"halts {s.arm}: " + ", ".join(f"{k}={v}" for k, v in s.halts.items()) for s in report.arms
    ]
    return "\n".join([*described, *halts, cost_note(report)])


class SummaryTable:
    """The per-arm table, in the widest layout that fits the console it is printed on.

    Wide: one table with every column. Narrower (e.g. an 80-column terminal): the
    same columns split over two or three stacked tables, one row per arm in each,
    so no value is cut or folded.
    """

    def __init__(self, report: RunReport) -> None:
        self.report = report

    def layout(self, groups: tuple[tuple[str, ...], ...]) -> list[Table]:
        """One table per group of headers; the title on the first, the caption on a lone table.

        Stacked tables can be narrow, so their caption is printed under them instead.
        """
        cells = [_cells(s, self.report.defect_groups) for s in self.report.arms]
        named = dict(zip(_HEADERS, headers(self.report), strict=True))
        tables = []
        for group in groups:
            index = [_HEADERS.index(header) for header in group]
            rows = [[row[i] for i in index] for row in cells]
            tables.append(_table(tuple(named[header] for header in group), rows))
        tables[0].title = f"critiquebench run {self.report.run_id}"
        if len(tables) == 1:
            tables[0].caption = _caption(self.report)
        return tables

    @property
    def columns(self) -> list[Column]:
        """The wide layout's columns."""
        return self.layout(_LAYOUTS[0])[0].columns

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        unbounded = options.update(max_width=10_000)
        for groups in _LAYOUTS:
            tables = self.layout(groups)
            widths = [Measurement.get(console, unbounded, table).maximum for table in tables]
            if max(widths) <= options.max_width:
                break
        yield from tables  # the narrowest layout when none fits: values fold, never "…"
        if len(tables) > 1:
            yield Text(_caption(self.report))
        triggers = trigger_table(self.report)
        if triggers is not None:
            yield triggers


def summary_table(report: RunReport) -> SummaryTable:
    """A per-arm table (a narrow layout on narrow terminals); halts and cost in the caption;
    then, for a run with trigger cases, the trigger metrics per skill and arm."""
    return SummaryTable(report)


def _rounds(values: tuple[float, ...]) -> str:
    return " -> ".join(f"{value:.2f}" for value in values)


def _verdicts(report: RunReport) -> list[str]:
    """Per arm with a reduction, its verdict, the reason and the paired pass-rate test."""
    lines: list[str] = []
    withheld = report.not_measured_text
    summaries = {s.arm: s for s in report.arms}
    for arm in withheld_arms(report) if withheld else [s.arm for s in report.arms]:
        s = summaries.get(arm)
        said = sensitivity_text(report, arm) if withheld else None
        sensitivity = [f"  {said}"] if said else []
        if withheld and (s is None or s.reduction is None):
            lines.append(
                f"arm {arm}: target {report.target:.0%} defect reduction vs A is INCONCLUSIVE: "
                f"{withheld} (no measured pair of arm {arm} and A)"
            )
            lines += sensitivity
            continue
        if s is None or s.arm == "A" or s.reduction is None:
            continue
        if withheld:
            lines.append(
                f"arm {s.arm}: target {report.target:.0%} defect reduction vs A is INCONCLUSIVE: "
                f"{withheld} (reduction of the measured units alone {reduction_text(s)})"
            )
            lines += sensitivity
        else:
            verdict = s.verdict or "inconclusive"
            lines.append(
                f"arm {s.arm}: target {report.target:.0%} defect reduction vs A is "
                f"{verdict.upper()} (reduction {reduction_text(s)})"
            )
            if s.verdict_reason:
                lines.append(f"  why: {s.verdict_reason}")
        if s.reduction.note:
            lines.append(f"  note: {s.reduction.note}")
        if s.mcnemar is not None:
            m = s.mcnemar
            lines.append(
                f"  pass rate {m.pass_rate_baseline:.0%} -> {m.pass_rate_treatment:.0%} "
                f"(McNemar exact p = {m.p_value:.3g} over cases: {m.c} improved, {m.b} worsened)"
            )
    return lines


def verdict_lines(report: RunReport) -> list[str]:
    """The answer in plain words: units not measured, acceptance per arm, tests, curves,
    caveats. While units are not measured every verdict is ``inconclusive: N units not
    measured``, never met or not met."""
    return _lines(report, _terminal_text)


def _terminal_text(text: str) -> str:
    # Short enough that a reason never wraps on a 160-column console, where the rest of
    # a long one could begin a line and pass for a line of the report.
    return inert(text, limit=_TERMINAL_REASON)


def _lines(report: RunReport, quote: Quote) -> list[str]:
    lines = not_measured_lines(report, quote, sensitivity=False)
    if report.not_compared_text:
        lines.append(report.not_compared_text)
    if sandbox_warning(report):
        lines.append(sandbox_warning(report))
    lines += _verdicts(report)
    lines += resample_lines(report.against_resample)
    lines += filter(None, [canary_text(report.canaries)])
    lines += filter(None, [critic_accuracy_text(report.critic_accuracy)])
    for arm, curves in report.curves.items():
        if len(curves.kept.mean_defects) < 2:
            continue
        lines.append(
            f"arm {arm} defects by round: answer kept {_rounds(curves.kept.mean_defects)}; "
            f"latest attempt {_rounds(curves.latest.mean_defects)}; recommended max_iters = "
            f"{curves.kept.recommended_max_iters}"
        )
        points = ", ".join(
            f"r{p.round} {p.pass_rate:.0%} @ {p.mean_tokens:.0f}" for p in curves.pass_vs_tokens
        )
        lines.append(f"  pass rate of the answer kept vs mean tokens spent: {points}")
        with_intervals = cost_curve_line(report.cost_curve, arm)
        if with_intervals:
            lines.append(with_intervals)
        fix_break = fix_break_text(report.fix_break, arm)
        if fix_break:
            lines.append(fix_break)
    for s in report.arms:
        # "halts B: visible_clean=3" beside a 67% pass rate needs its reason said.
        clean = s.halts.get("visible_clean", 0) + s.halts.get("critic_ok", 0)
        if clean not in (0, s.units_passed):
            lines.append(halt_explanation(s))
    if report.arms and not any(s.arm == "A" for s in report.arms):
        lines.append("No arm A in this run: reductions need the baseline.")
    if report.unknown_models:
        lines.append(f"Unpriced models (cost counted as 0): {', '.join(report.unknown_models)}")
    if report.bounded_text:  # only then: an ordinary run's lines stay as they were
        lines.append(report.bounded_text)
    return lines


def report_markdown(report: RunReport) -> str:
    """The run's settings, the per-arm table, the cost and the verdict as Markdown."""
    rows = [
        "| " + " | ".join(headers(report)) + " |",
        "|" + "---|" * len(_HEADERS),
        *("| " + " | ".join(_cells(s, report.defect_groups)) + " |" for s in report.arms),
    ]
    meta = meta_line(report)
    verdict = "\n".join(f"- {line.strip()}" for line in _lines(report, markdown_code))
    return (
        f"# critiquebench run {report.run_id}\n\n"
        + (f"{meta}\n\n" if meta else "")
        + "\n".join(rows)
        + "\n\n"
        + trigger_markdown(report)
        + (f"{cost_note(report)}\n\n" if report.cost else "")
        + verdict
        + "\n"
    )


def artifact_rows(report: RunReport) -> list[dict[str, Any]]:
    """One row per arm for the Prefect table artifact (a column per defect group)."""
    return [
        {
            "arm": s.arm,
            "n": s.n,
            "mean_defects": round(s.mean_defects, 3),
            # one column per defect group of the run, e.g. defects_tests, defects_sql
            **{f"defects_{group}": round(mean, 3) for group, mean in s.defects_by_group.items()},
            "reduction_vs_a": None if s.reduction_vs_a is None else round(s.reduction_vs_a, 3),
            "verdict": s.verdict or "",
            # Only while units are not measured, so a complete run's rows stay as they were.
            **(_sensitivity_cells(report, s.arm) if report.unmeasured else {}),
            "pass_rate": round(s.pass_rate, 3),
            "tests_pass_rate": round(s.tests_pass_rate, 3),
            "p50_latency_s": round(s.p50_latency_s, 2),
            "cost_usd": round(s.cost_experiment, 6),
            "paid_in_this_run_usd": round(s.cost_run, 6),
            "infra_errors": s.infra_errors,
            "verifier_errors": s.verifier_errors,
            "findings_killed": s.findings_killed,
        }
        for s in report.arms
    ]


def _sensitivity_cells(report: RunReport, arm: str) -> dict[str, Any]:
    found = next((s for s in report.sensitivity if s.arm == arm), None)
    estimate = found.reduction.estimate if found and found.reduction else None
    return {
        "not_measured": found.not_measured if found else None,
        "reduction_if_failures": None if estimate is None else round(estimate, 3),
    }


def _model(report: RunReport) -> str:
    return report.meta.model if report.meta is not None else "unknown (no runs row)"


def _group_mean(report: RunReport, summary: ArmSummary | None, group: str) -> str | None:
    if summary is None or group not in report.defect_groups:
        return None
    return f"{summary.defects_by_group.get(group, 0.0):.2f}"


def comparison_table(first: RunReport, second: RunReport) -> Table:
    """Two runs side by side, arm by arm (e.g. two models or two prompts), with each model."""
    title = " vs ".join(f"{r.run_id} (model {_model(r)})" for r in (first, second))
    table = Table(title=title, title_justify="left")
    for header in ("arm", "metric", first.run_id, second.run_id):
        justify: Literal["left", "right"] = "left" if header in ("arm", "metric") else "right"
        table.add_column(header, justify=justify, overflow="fold")
    by_arm = {s.arm: s for s in second.arms}
    groups = tuple(dict.fromkeys((*first.defect_groups, *second.defect_groups)))
    for left in first.arms:
        right = by_arm.get(left.arm)
        rows = [
            ("mean defects", defects_text(left), right and defects_text(right)),
            # A group a run does not measure is "-", not a zero it never counted.
            *(
                (f"  {group}", _group_mean(first, left, group), _group_mean(second, right, group))
                for group in (groups if len(groups) > 1 else ())
            ),
            ("reduction vs A", reduction_text(left), right and reduction_text(right)),
            *(
                [("reduction vs R", _against_r(first, left.arm), _against_r(second, left.arm))]
                if first.against_resample or second.against_resample
                else []
            ),
            ("pass rate", pct(left.pass_rate), right and pct(right.pass_rate)),
            ("tests pass rate", pct(left.tests_pass_rate), right and pct(right.tests_pass_rate)),
            ("p50 latency s", f"{left.p50_latency_s:.1f}", right and f"{right.p50_latency_s:.1f}"),
            ("cost $", usd(left.cost_experiment), right and usd(right.cost_experiment)),
        ]
        for metric, a, b in rows:
            table.add_row(left.arm, metric, a or "-", b or "-")
    return table


def _against_r(report: RunReport, arm: str) -> str | None:
    """The arm's reduction against arm R cut at its tokens, None without R or for A."""
    found = next((c for c in report.against_resample if c.arm == arm), None)
    return None if found is None or arm == "A" else reduction_against_text(found.reduction)
