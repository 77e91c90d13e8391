"""`critiquebench run --suite sql --model sim:` measures every unit (sim answers from
the run's suite) and says, before the run and under its verdict, that one case
cannot decide."""

from __future__ import annotations

import pytest

from tests.integration.conftest import SuiteRun

pytestmark = pytest.mark.slow


def test_sim_on_the_sql_suite_is_measured_and_the_small_design_is_flagged(
    run_suite_cli: SuiteRun,
) -> None:
    output = run_suite_cli("sql", "sim:", arms="A,B", limit=1, run_id="sim-sql")
    design = [line for line in output.splitlines() if line.startswith("design: 1 case(s)")]
    assert len(design) == 2, output  # before the run starts, and under the verdict
    assert "likely inconclusive" in design[0]
    assert "incomplete" not in output.lower()
