"""Every chart of the report is a valid Vega-Lite spec, built without Altair."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from critiquebench.analysis.render import _charts

ARMS = [
    {"arm": "A", "mean": 1.2, "low": 0.9, "high": 1.6, "tokens": 300.0, "cost": 0.01},
    {"arm": "B", "mean": 0.4, "low": 0.2, "high": 0.7, "tokens": 760.0, "cost": 0.03},
]
ROUNDS = [{"arm": arm, "round": r, "answer": answer, "mean_defects": 1.0 / (r + 1)}
          for arm in "AB" for r in range(3) for answer in ("kept", "latest")]  # fmt: skip
GAINS = [{"arm": "B", "round": r, "gain": 0.3 / r} for r in (1, 2)]
TOKENS = [{"arm": arm, "round": r, "mean_tokens": 100.0 * (r + 1), "pass_rate": 0.5 + r / 10}
          for arm in "AB" for r in range(3)]  # fmt: skip
HALTS = [{"arm": "A", "halt_reason": "single_draft", "units": 10},
         {"arm": "B", "halt_reason": "visible_clean", "units": 7},
         {"arm": "B", "halt_reason": "a_reason_of_a_newer_version", "units": 3}]  # fmt: skip
CURVES = [
    {"arm": arm, "round": r, "mean_tokens": 100.0 * (r + 1), "measure": measure,
     "value": 0.5, "low": 0.4, "high": 0.6}
    for arm in "AB" for r in range(2) for measure in ("pass rate", "mean defects")
]  # fmt: skip
AXIS = _charts.CostAxis("cost", "mean cost per unit ($)", "$.4f", "Cost vs defects")

SPECS: dict[str, dict[str, Any]] = {
    "defects": _charts.defects_chart(ARMS),
    "curve": _charts.curve_chart(ROUNDS, GAINS),
    "curve without gains": _charts.curve_chart(ROUNDS, []),
    "tokens": _charts.tokens_chart(TOKENS),
    "cost": _charts.cost_chart(ARMS, AXIS),
    "halts": _charts.halts_chart(HALTS),
    "cost curve": _charts.cost_curve_chart(CURVES),
}


@pytest.fixture(scope="module")
def vega_lite_schema() -> dict[str, Any]:
    from altair.vegalite.v6.schema import SCHEMA_URL, load_schema

    assert SCHEMA_URL == _charts.SCHEMA_URL  # the specs claim the schema they are held to
    schema: dict[str, Any] = load_schema()
    return schema


@pytest.mark.parametrize("name", list(SPECS))
def test_each_chart_is_valid_vega_lite(name: str, vega_lite_schema: dict[str, Any]) -> None:
    jsonschema.validate(SPECS[name], vega_lite_schema)


def test_a_spec_that_is_not_vega_lite_is_refused(vega_lite_schema: dict[str, Any]) -> None:
    broken = {**SPECS["halts"], "mark": {"type": "no-such-mark"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, vega_lite_schema)


def test_the_charts_draw_with_the_vega_lite_vl_convert_is_given() -> None:
    figure = _charts.Figure("halts", SPECS["halts"], "halt reasons")
    svg = _charts.figure_svg(figure)
    assert svg.startswith("<svg") and "Halt reasons" in svg and "visible_clean" in svg
    assert _charts.VEGA_LITE in __import__("vl_convert").get_vegalite_versions()


def test_building_the_charts_imports_no_altair() -> None:
    code = (
        "import sys; from critiquebench.analysis.render import _charts; "
        "_charts.halts_chart([{'arm': 'A', 'halt_reason': 'error', 'units': 1}]); "
        "print('altair' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
