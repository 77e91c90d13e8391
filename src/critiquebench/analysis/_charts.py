"""The HTML report's charts: Vega-Lite specs (built with Altair), the script and the style."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import vl_convert

from critiquebench.analysis._report_types import ArmSummary, RunReport
from critiquebench.loop import HALT_REASONS

Rows = Sequence[Mapping[str, Any]]

_WIDTH = 380
_HEIGHT = 220
# Fixed colours so a reason looks the same in every report: green ends, warm escalations.
_HALT_COLORS = {
    "passed": "#2a9d3f",
    "single_pass": "#9e9e9e",
    "budget_exhausted": "#e45756",
    "no_progress": "#f58518",
    "loop_detected": "#b279a2",
    "stagnation": "#eeca3b",
    "token_budget": "#9d755d",
    "error": "#222222",
}
# SVG rather than canvas: the marks then live in the DOM, where a test can count them.
_EMBED_OPTIONS = {"renderer": "svg", "actions": False}

# The report page's style sheet, beside the charts it lays out.
PAGE_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; } th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; }
td { text-align: right; white-space: nowrap; } td:first-child, th:first-child { text-align: left; }
.verdict { padding: 0.6em 1em; border-left: 6px solid #888; background: #f5f5f5; }
.met { border-color: #2a9d3f; } .not-met { border-color: #c62828; }
.inconclusive { border-color: #e0a800; }
.charts { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 1.5em; }
.wide { grid-column: 1 / -1; } figure { margin: 0; } .note { color: #666; font-size: 12px; }
"""


@dataclass(frozen=True)
class Figure:
    """One chart of the report: its Vega-Lite spec, caption, and whether it spans the page."""

    name: str
    spec: dict[str, Any]
    caption: str
    wide: bool = False


def _data(rows: Rows) -> alt.InlineData:
    return alt.InlineData(values=[dict(row) for row in rows])


def _spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    # Altair types a layer's to_dict() as Any; the spec is a JSON object all the same.
    spec: dict[str, Any] = chart.to_dict()
    return spec


def defects_chart(rows: Rows) -> dict[str, Any]:
    """Mean final defects per arm, with 95% CI error bars; rows: arm, mean, low, high."""
    base = alt.Chart(_data(rows)).encode(x=alt.X("arm:N", title="arm", axis=alt.Axis(labelAngle=0)))
    bars = base.mark_bar(color="#4c78a8").encode(
        y=alt.Y("mean:Q", title="mean defects per unit"),
        tooltip=["arm:N", alt.Tooltip("mean:Q", format=".2f")],
    )
    # Same axis title on both layers, or Vega-Lite joins them ("mean..., low").
    errors = base.mark_errorbar(ticks={"size": 14}, color="black").encode(
        y=alt.Y("low:Q", title="mean defects per unit"), y2="high:Q"
    )
    chart = (bars + errors).properties(
        title="Defects of the answer kept (95% CI)", width=_WIDTH, height=_HEIGHT
    )
    return _spec(chart)


def curve_chart(rows: Rows) -> dict[str, Any]:
    """Mean defects after each round per arm, on the answer kept and on the latest attempt,
    and each round's marginal gain on the answer kept.

    rows: arm, round, answer ("kept" or "latest"), mean_defects, gain (null for round 0
    and for the latest-attempt rows).
    """
    base = alt.Chart(_data(rows))
    color = alt.Color("arm:N", title="arm")
    line = base.mark_line(point=True).encode(
        x=alt.X("round:O", title="round (0 = first draft)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("mean_defects:Q", title="mean defects per unit"),
        color=color,
        strokeDash=alt.StrokeDash(
            "answer:N", title="answer", sort=["kept", "latest"],
            scale=alt.Scale(domain=["kept", "latest"], range=[[1, 0], [5, 4]]),
        ),
        tooltip=["arm:N", "answer:N", "round:O", alt.Tooltip("mean_defects:Q", format=".2f")],
    )  # fmt: skip
    gains = (
        base.transform_filter("datum.gain !== null")
        .mark_bar()
        .encode(
            x=alt.X("round:O", title="round", axis=alt.Axis(labelAngle=0)),
            xOffset="arm:N",
            y=alt.Y("gain:Q", title="defects removed from the answer kept"),
            color=color,
            tooltip=["arm:N", "round:O", alt.Tooltip("gain:Q", format=".2f")],
        )
    )
    left = line.properties(
        title="Defects by round: answer kept (solid), latest attempt (dashed)",
        width=_WIDTH,
        height=_HEIGHT,
    )
    right = gains.properties(title="Gain per round", width=_WIDTH // 2, height=_HEIGHT)
    return _spec(alt.hconcat(left, right))


def tokens_chart(rows: Rows) -> dict[str, Any]:
    """Pass rate of the answer kept against tokens spent, one point per round and arm.

    rows: arm, round, mean_tokens (cumulative per unit), pass_rate.
    """
    base = alt.Chart(_data(rows)).encode(
        x=alt.X("mean_tokens:Q", title="mean tokens spent per unit, up to the round"),
        y=alt.Y("pass_rate:Q", title="pass rate of the answer kept",
                axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("arm:N", title="arm"),
    )  # fmt: skip
    line = base.mark_line(point=True).encode(
        order="round:O",
        tooltip=[
            "arm:N",
            "round:O",
            alt.Tooltip("mean_tokens:Q", format=",.0f"),
            alt.Tooltip("pass_rate:Q", format=".0%"),
        ],
    )
    labels = base.mark_text(dx=8, dy=-8, align="left").encode(text="round:O")
    chart = (line + labels).properties(
        title="Pass rate vs tokens, by round", width=_WIDTH, height=_HEIGHT
    )
    return _spec(chart)


def cost_chart(rows: Rows) -> dict[str, Any]:
    """Cost per unit against mean defects, one point per arm; rows: arm, cost, mean."""
    base = alt.Chart(_data(rows)).encode(
        x=alt.X(
            "cost:Q",
            title="estimated cost per unit (USD)",
            scale=alt.Scale(zero=True),
            axis=alt.Axis(format="$.2~g", tickCount=5),  # costs per unit are tiny fractions
        ),
        y=alt.Y("mean:Q", title="mean defects per unit", scale=alt.Scale(zero=True)),
    )
    points = base.mark_point(size=120, filled=True).encode(
        color=alt.Color("arm:N", title="arm"),
        tooltip=[
            "arm:N",
            alt.Tooltip("cost:Q", format="$.6f"),
            alt.Tooltip("mean:Q", format=".2f"),
        ],
    )
    labels = base.mark_text(dx=12, align="left").encode(text="arm:N")
    chart = (points + labels).properties(title="Cost vs defects", width=_WIDTH, height=_HEIGHT)
    return _spec(chart)


def halts_chart(rows: Rows) -> dict[str, Any]:
    """Why each arm's units stopped, stacked; rows: arm, halt_reason, units."""
    present = {str(row["halt_reason"]) for row in rows}
    # Only the reasons that occur, so the legend lists no empty categories.
    domain: list[str] = [r for r in HALT_REASONS if r in present] + sorted(
        present - set(HALT_REASONS)
    )
    scale = alt.Scale(domain=domain, range=[_HALT_COLORS.get(r, "#17becf") for r in domain])
    chart = (
        alt.Chart(_data(rows))
        .mark_bar()
        .encode(
            y=alt.Y("arm:N", title="arm"),
            x=alt.X("units:Q", title="units", stack="zero"),
            color=alt.Color("halt_reason:N", title="halt reason", scale=scale),
            tooltip=["arm:N", "halt_reason:N", "units:Q"],
        )
        .properties(title="Halt reasons", width=_WIDTH, height=_HEIGHT // 2)
    )
    return _spec(chart)


def _vl_version() -> str:
    # vl-convert names Vega-Lite versions by major and minor only, e.g. "6.4".
    return ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])


def figure_svg(figure: Figure) -> str:
    """The chart drawn as static SVG (for notebooks and files), with no browser."""
    svg: str = vl_convert.vegalite_to_svg(figure.spec, vl_version=_vl_version())
    return svg


@functools.cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script with no external requests.

    Bundling takes seconds, hence the cache. The script defines ``vegaEmbed`` globally.
    """
    version = _vl_version().replace(".", "_")
    bundle = vl_convert.javascript_bundle("window.vegaEmbed = vegaEmbed;", vl_version=version)
    # "</script" inside an inline script would end it early; "<\/" means the same in JS.
    return bundle.replace("</script", "<\\/script")


def embed_script(specs: Sequence[dict[str, Any]]) -> str:
    """JavaScript that draws ``specs[i]`` into the element with id ``chart-i``."""
    # "<" escaped so no data value (a case id, a model name) can close the script tag.
    payload = json.dumps(list(specs)).replace("<", "\\u003c")
    options = json.dumps(_EMBED_OPTIONS)
    return (
        f"const specs = {payload};\n"
        "specs.forEach((spec, i) => {\n"
        "  const target = document.getElementById('chart-' + i);\n"
        f"  vegaEmbed(target, spec, {options})\n"
        "    .catch(err => { target.textContent = String(err); });\n"
        "});\n"
    )


def report_figures(report: RunReport) -> list[Figure]:
    """The report's charts in page order, drawn from the report's numbers alone."""
    summary = [
        {
            "arm": a.arm,
            "mean": a.mean_defects,
            "low": _bound(a, "low"),
            "high": _bound(a, "high"),
            "cost": a.cost_per_unit,
        }
        for a in report.arms
    ]
    rounds: list[dict[str, Any]] = []
    tokens: list[dict[str, Any]] = []
    advice: list[str] = []
    for arm, curves in report.curves.items():
        for answer, curve in (("kept", curves.kept), ("latest", curves.latest)):
            for rnd, mean in enumerate(curve.mean_defects):
                gain = curve.marginal_gain[rnd] if answer == "kept" else None
                rounds.append(
                    {"arm": arm, "round": rnd, "answer": answer, "mean_defects": mean,
                     "gain": gain}
                )  # fmt: skip
        tokens += [
            {"arm": arm, "round": p.round, "mean_tokens": p.mean_tokens, "pass_rate": p.pass_rate}
            for p in curves.pass_vs_tokens
        ]
        if len(curves.kept.mean_defects) > 1:
            advice.append(f"arm {arm}: recommended max_iters {curves.kept.recommended_max_iters}")
    halts = [
        {"arm": a.arm, "halt_reason": reason, "units": units}
        for a in report.arms
        for reason, units in a.halts.items()
    ]
    curve_note = (
        "Kept = the answer the loop returns if stopped after that round (its best attempt "
        "so far; ends at the table's mean defects); latest = the attempt made in that round."
    )
    return [
        Figure("defects", defects_chart(summary), "Mean defects of the answer kept, per arm."),
        Figure("cost", cost_chart(summary), "The experiment's cost per unit against defects."),
        Figure(
            "curve",
            curve_chart(rounds),
            " ".join([curve_note, "; ".join(advice) or "No arm ran a fix round."]),
            wide=True,
        ),
        Figure(
            "tokens",
            tokens_chart(tokens),
            "Each point is a round (labelled): tokens spent so far per unit (original tokens) "
            "and the pass rate of the answer kept then.",
        ),
        Figure("halts", halts_chart(halts), "Why each arm's units stopped."),
    ]


def _bound(arm: ArmSummary, side: str) -> float:
    # No interval (one case): draw the point, with no error bar to suggest one.
    ci = arm.defects_ci
    value = None if ci is None else (ci.low if side == "low" else ci.high)
    return arm.mean_defects if value is None else value
