"""The HTML report's charts: Vega-Lite specs, the script and the style.

The specs are written as the JSON they are, in Altair's shorthand for fields
(``"arm:N"``): Altair built them before, and its import (with jsonschema's and
narwhals') was ~0.6 CPU-s of every ``report``, a sixth of a 328-unit one's ~3.7 CPU-s,
for dictionaries. ``tests/unit/analysis/test_charts_schema.py`` validates every chart
against Vega-Lite's schema (Altair ships it; the tests may import it).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import vl_convert

from critiquebench.loop import HALT_REASONS
from critiquebench.runtime.project import CHART_BUNDLE_VARIABLE, local_cache_dir

Rows = Sequence[Mapping[str, Any]]

VEGA_LITE = "6.4"
"""The Vega-Lite version the specs follow, as vl-convert names it (major.minor)."""
SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
_CONFIG = {"view": {"continuousHeight": 300, "continuousWidth": 300}}
_TYPES = {"N": "nominal", "Q": "quantitative", "O": "ordinal"}

_WIDTH = 380
_HEIGHT = 220
# Fixed colours so a reason looks the same in every report: green ends, warm escalations.
_HALT_COLORS = {
    "visible_clean": "#2a9d3f",
    "single_draft": "#9e9e9e",
    "retry_limit": "#e45756",
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
table { border-collapse: collapse; font-size: 13px; margin-bottom: 0.8em; }
th, td { padding: 4px 7px; border-bottom: 1px solid #ddd; }
caption { text-align: left; font-weight: 600; } .scroll { overflow-x: auto; }
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


def _data(rows: Rows) -> dict[str, Any]:
    return {"values": [dict(row) for row in rows]}


def _channel(shorthand: str, **options: Any) -> dict[str, Any]:
    """A field channel from Altair's shorthand (``"arm:N"``: field and type) and options."""
    field, kind = shorthand.rsplit(":", 1)
    return {"field": field, "type": _TYPES[kind], **options}


def _tooltip(*fields: str | tuple[str, str]) -> list[dict[str, Any]]:
    """Tooltip channels: a shorthand, or a shorthand and its number format."""
    return [
        _channel(field) if isinstance(field, str) else _channel(field[0], format=field[1])
        for field in fields
    ]


def _top(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` as a whole chart: the schema it follows and the view config Altair gave."""
    return {"$schema": SCHEMA_URL, "config": _CONFIG, **spec}


def _layers(shared: dict[str, Any], *layers: dict[str, Any]) -> list[dict[str, Any]]:
    """``layers``, each with the ``shared`` encoding under its own (as Altair writes them)."""
    return [{**layer, "encoding": {**shared, **layer["encoding"]}} for layer in layers]


def defects_chart(rows: Rows) -> dict[str, Any]:
    """Mean final defects per arm, with 95% CI error bars; rows: arm, mean, low, high."""
    x = {"x": _channel("arm:N", title="arm", axis={"labelAngle": 0})}
    bars = {
        "mark": {"type": "bar", "color": "#4c78a8"},
        "encoding": {
            "y": _channel("mean:Q", title="mean defects per unit"),
            "tooltip": _tooltip("arm:N", ("mean:Q", ".2f")),
        },
    }
    # Same axis title on both layers, or Vega-Lite joins them ("mean..., low").
    errors = {
        "mark": {"type": "errorbar", "ticks": {"size": 14}, "color": "black"},
        "encoding": {
            "y": _channel("low:Q", title="mean defects per unit"),
            "y2": {"field": "high"},
        },
    }
    return _top({
        "data": _data(rows),
        "layer": _layers(x, bars, errors),
        "title": "Defects of the answer kept (95% CI)", "width": _WIDTH, "height": _HEIGHT,
    })  # fmt: skip


def curve_chart(rows: Rows, gains: Rows) -> dict[str, Any]:
    """Mean defects after each round per arm, on the answer kept and on the latest attempt,
    and beside it each round's marginal gain on the answer kept.

    rows: arm, round, answer ("kept" or "latest"), mean_defects. gains: arm, round, gain,
    only for arms that ran the round; with none, the gain panel is left out rather than
    drawn empty under a legend of arms that have no bar in it.
    """
    color = _channel("arm:N", title="arm")
    left = {
        "data": _data(rows),
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": _channel("round:O", title="round (0 = first draft)", axis={"labelAngle": 0}),
            "y": _channel("mean_defects:Q", title="mean defects per unit"),
            "color": color,
            "strokeDash": _channel(
                "answer:N", title="answer", sort=["kept", "latest"],
                scale={"domain": ["kept", "latest"], "range": [[1, 0], [5, 4]]},
            ),
            "tooltip": _tooltip("arm:N", "answer:N", "round:O", ("mean_defects:Q", ".2f")),
        },
        "title": "Defects by round: answer kept (solid), latest attempt (dashed)",
        "width": _WIDTH,
        "height": _HEIGHT,
    }  # fmt: skip
    if not gains:
        return _top(left)
    right = {
        "data": _data(gains),
        "mark": {"type": "bar"},
        "encoding": {
            "x": _channel("round:O", title="round", axis={"labelAngle": 0}),
            "xOffset": _channel("arm:N"),
            "y": _channel("gain:Q", title="defects removed from the answer kept"),
            "color": color,
            "tooltip": _tooltip("arm:N", "round:O", ("gain:Q", ".2f")),
        },
        "title": "Gain per round",
        "width": _WIDTH // 2,
        "height": _HEIGHT,
    }
    return _top({"hconcat": [left, right]})


def tokens_chart(rows: Rows) -> dict[str, Any]:
    """Pass rate of the answer kept against tokens spent, one point per round and arm.

    rows: arm, round, mean_tokens (cumulative per unit), pass_rate.
    """
    shared = {
        "x": _channel("mean_tokens:Q", title="mean tokens spent per unit, up to the round"),
        "y": _channel("pass_rate:Q", title="pass rate of the answer kept",
                      axis={"format": "%"}, scale={"domain": [0, 1]}),
        "color": _channel("arm:N", title="arm"),
    }  # fmt: skip
    line = {
        "mark": {"type": "line", "point": True},
        "encoding": {
            "order": _channel("round:O"),
            "tooltip": _tooltip(
                "arm:N", "round:O", ("mean_tokens:Q", ",.0f"), ("pass_rate:Q", ".0%")
            ),
        },
    }
    labels = {
        "mark": {"type": "text", "dx": 8, "dy": -8, "align": "left"},
        "encoding": {"text": _channel("round:O")},
    }
    return _top({
        "data": _data(rows),
        "layer": _layers(shared, line, labels),
        "title": "Pass rate vs tokens, by round", "width": _WIDTH, "height": _HEIGHT,
    })  # fmt: skip


@dataclass(frozen=True)
class CostAxis:
    """What the cost chart puts on x: cost, or tokens / calls when the run cost nothing."""

    field: str
    title: str
    fmt: str
    chart_title: str


def point_labels(rows: Rows, x: str, y: str) -> list[dict[str, Any]]:
    """One label per cluster of points that would print over each other ("A, B").

    Points within 6% of the x range and 8% of the y range of the first point of a
    cluster join it; the label sits at that first point.
    """
    xs = [float(row[x]) for row in rows] or [0.0]
    ys = [float(row[y]) for row in rows] or [0.0]
    # Ranges as drawn: both axes start at zero.
    x_span = max(max(xs), 0.0) - min(min(xs), 0.0) or 1.0
    y_span = max(max(ys), 0.0) - min(min(ys), 0.0) or 1.0
    clusters: list[tuple[float, float, list[str]]] = []
    for row in rows:
        px, py = float(row[x]), float(row[y])
        for cx, cy, arms in clusters:
            if abs(px - cx) <= 0.06 * x_span and abs(py - cy) <= 0.08 * y_span:
                arms.append(str(row["arm"]))
                break
        else:
            clusters.append((px, py, [str(row["arm"])]))
    return [{x: cx, y: cy, "label": ", ".join(arms)} for cx, cy, arms in clusters]


def cost_chart(rows: Rows, axis: CostAxis) -> dict[str, Any]:
    """One point per arm, ``axis.field`` against mean defects; rows: arm, mean, the field.

    Arms at the same point share one label ("A, B") instead of printing over each other.
    """
    shared = {
        "x": _channel(
            f"{axis.field}:Q", title=axis.title, scale={"zero": True},
            axis={"format": axis.fmt, "tickCount": 5},
        ),
        "y": _channel("mean:Q", title="mean defects per unit", scale={"zero": True}),
    }  # fmt: skip
    points = {
        "data": _data(rows),
        "mark": {"type": "point", "size": 120, "filled": True},
        "encoding": {
            "color": _channel("arm:N", title="arm"),
            "tooltip": _tooltip("arm:N", (f"{axis.field}:Q", axis.fmt), ("mean:Q", ".2f")),
        },
    }
    text = {
        "data": _data(point_labels(rows, axis.field, "mean")),
        "mark": {"type": "text", "dx": 12, "align": "left"},
        "encoding": {"text": _channel("label:N")},
    }
    return _top({
        "layer": _layers(shared, points, text),
        "title": axis.chart_title, "width": _WIDTH, "height": _HEIGHT,
    })  # fmt: skip


def halts_chart(rows: Rows) -> dict[str, Any]:
    """Why each arm's units stopped, stacked; rows: arm, halt_reason, units."""
    present = {str(row["halt_reason"]) for row in rows}
    # Only the reasons that occur, so the legend lists no empty categories.
    domain: list[str] = [r for r in HALT_REASONS if r in present] + sorted(
        present - set(HALT_REASONS)
    )
    scale = {"domain": domain, "range": [_HALT_COLORS.get(r, "#17becf") for r in domain]}
    return _top({
        "data": _data(rows),
        "mark": {"type": "bar"},
        "encoding": {
            "y": _channel("arm:N", title="arm"),
            # Units are whole: integer ticks only, never 0.5 of a unit.
            "x": _channel(
                "units:Q", title="units (case x rep)", stack="zero",
                axis={"tickMinStep": 1, "format": "d"},
            ),
            "color": _channel("halt_reason:N", title="halt reason", scale=scale),
            "tooltip": _tooltip("arm:N", "halt_reason:N", "units:Q"),
        },
        "title": "Halt reasons", "width": _WIDTH, "height": _HEIGHT // 2,
    })  # fmt: skip


def cost_curve_chart(rows: Rows) -> dict[str, Any]:
    """Pass rate and mean defects against tokens, every arm on the same axis, with the
    interval of each point as a bar (rows: arm, round, mean_tokens, measure, value, low,
    high)."""
    shared = {
        "x": _channel("mean_tokens:Q", title="mean tokens spent per unit"),
        "color": _channel("arm:N", title="arm"),
    }
    line = {
        "mark": {"type": "line", "point": True},
        "encoding": {
            "y": _channel("value:Q", title=None),
            "order": _channel("round:O"),
            "tooltip": _tooltip(
                "arm:N", "round:O", ("mean_tokens:Q", ",.0f"), ("value:Q", ".2f"),
                ("low:Q", ".2f"), ("high:Q", ".2f"),
            ),
        },
    }  # fmt: skip
    bars = {"mark": {"type": "rule"}, "encoding": {"y": _channel("low:Q"), "y2": {"field": "high"}}}
    return _top({
        "data": _data(rows),
        "facet": {"column": _channel("measure:N", title=None)},
        "spec": {"layer": _layers(shared, line, bars), "width": 340, "height": 200},
        "resolve": {"scale": {"y": "independent"}},
        "title": "Cost-matched curves",
    })  # fmt: skip


def figure_svg(figure: Figure) -> str:
    """The chart drawn as static SVG (for notebooks and files), with no browser."""
    svg: str = vl_convert.vegalite_to_svg(figure.spec, vl_version=VEGA_LITE)
    return svg


@functools.cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script with no external requests.

    The script defines ``vegaEmbed`` globally. Bundling takes seconds and gives the same
    bytes for the same vl-convert and Vega-Lite, so the bundle is kept in the local
    cache folder (``bundle_path``) and in this process. Measured gain: 1.4 CPU-s of a ``report``
    (vl_convert.javascript_bundle under pyinstrument, 328-unit run: 17% of its 8.2 CPU-s).
    """
    cached = bundle_path()
    try:
        return cached.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        pass  # not bundled yet for these versions (or unreadable): bundle it now
    version = VEGA_LITE.replace(".", "_")
    bundle = vl_convert.javascript_bundle("window.vegaEmbed = vegaEmbed;", vl_version=version)
    # "</script" inside an inline script would end it early; "<\/" means the same in JS.
    bundle = bundle.replace("</script", "<\\/script")
    _keep(cached, bundle)
    return bundle


def bundle_path() -> Path:
    """Where ``vega_bundle`` keeps the bundle of the installed vl-convert and Vega-Lite:
    ``$CRITIQUEBENCH_CHART_BUNDLE_DIR`` if set, else the local cache folder
    (``local_cache_dir``).

    The bundle depends on the installed versions only, so projects (or test runs, each
    with a folder of its own) on one machine may share a folder: each ``run`` or
    ``report`` that finds none bundles again (~2.4 CPU-s).
    """
    name = f"vega-bundle-{metadata.version('vl-convert-python')}-vl{VEGA_LITE}.js"
    folder = os.environ.get(CHART_BUNDLE_VARIABLE)
    return (Path(folder) if folder else local_cache_dir()) / name


def _keep(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole (beside it, then renamed), or not at all: a cache
    that cannot be written (a read-only folder) only costs the next report the bundling."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


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
