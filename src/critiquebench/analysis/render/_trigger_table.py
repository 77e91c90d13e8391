"""The trigger metrics of a report as rows: for the terminal, Markdown and the HTML page."""

from __future__ import annotations

from rich.table import Table

from critiquebench.analysis.report import RunReport, TriggerMetrics

UNDEFINED = "—"
"""A rate with no denominator: precision when nothing triggered, a rate without cases."""

TRIGGER_HEADERS = ("skill", "arm", "units", "precision", "recall", "near-miss", "clear-miss")
TRIGGER_NOTE = (
    "Trigger decisions per skill description: first draft → answer kept. precision = "
    "triggers that should trigger / all triggers; recall = of the should-trigger cases; "
    "near-miss and clear-miss = false-trigger rates on those cases (no decision counts as "
    f"not triggering); {UNDEFINED} = undefined (nothing triggered, or no such cases)."
)


def rate(value: float | None) -> str:
    """A rate as a whole percentage, or the undefined mark."""
    return UNDEFINED if value is None else f"{value:.0%}"


def _change(metrics: TriggerMetrics, name: str) -> str:
    first: float | None = getattr(metrics.first_draft, name)
    kept: float | None = getattr(metrics.kept, name)
    if first is None and kept is None:
        return UNDEFINED
    return f"{rate(first)}→{rate(kept)}"


_RATES = ("precision", "recall", "near_miss_false_trigger_rate", "clear_miss_false_trigger_rate")


def trigger_rows(report: RunReport) -> list[tuple[str, ...]]:
    """One row per skill and arm, cells under :data:`TRIGGER_HEADERS`."""
    return [
        (m.skill, m.arm, str(m.units), *(_change(m, name) for name in _RATES))
        for m in report.triggers
    ]


def trigger_table(report: RunReport) -> Table | None:
    """The metrics as a terminal table; None for a run without trigger cases.

    Rates never fold (their columns are as wide as their longest cell); a long skill
    name folds instead, so the table fits an 80-column terminal.
    """
    rows = trigger_rows(report)
    if not rows:
        return None
    table = Table(title="trigger decisions", title_justify="left", caption_justify="left")
    for index, header in enumerate(TRIGGER_HEADERS):
        widest = max(len(header), *(len(row[index]) for row in rows))
        table.add_column(
            header,
            justify="left" if index < 2 else "right",
            overflow="fold",
            min_width=None if index == 0 else widest,
        )
    for row in rows:
        table.add_row(*row)
    table.caption = TRIGGER_NOTE
    return table


def trigger_markdown(report: RunReport) -> str:
    """The metrics as a Markdown table and its note, or nothing without trigger cases."""
    rows = trigger_rows(report)
    if not rows:
        return ""
    lines = [
        "| " + " | ".join(TRIGGER_HEADERS) + " |",
        "|" + "---|" * len(TRIGGER_HEADERS),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    return "\n".join(lines) + f"\n\n{TRIGGER_NOTE}\n\n"
