"""Quality suites and reports without Prefect or a run: what each arm's spec promises."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from critiquebench.loop import BUILTIN_ARMS, ArmSpec
from critiquebench.quality import QualityReport
from critiquebench.quality._report import ExpectationOutcome
from critiquebench.quality._suites import arms_of_run, build_suite


def _per_arm(table: str, arms: dict[str, ArmSpec | None]) -> dict[str, dict[str, Any]]:
    """The per-arm expectations of ``table``'s suite, by description."""
    suite = build_suite(table, arms)
    return {
        str(e.description): e.configuration.kwargs
        for e in suite.expectations
        if str(e.description).startswith("arm ")
    }


def test_each_arm_gets_the_halts_and_roles_its_spec_allows() -> None:
    arms: dict[str, ArmSpec | None] = {"A": BUILTIN_ARMS["A"], "C": BUILTIN_ARMS["C"]}
    cases = _per_arm("cases", arms)
    assert cases["arm A stops only as its spec allows"]["value_set"] == ["single_draft", "error"]
    assert "critic_ok" in cases["arm C stops only as its spec allows"]["value_set"]
    calls = _per_arm("calls", arms)
    assert calls["arm A calls only its roles"]["value_set"] == ["actor"]
    assert set(calls["arm C calls only its roles"]["value_set"]) == {"actor", "fixer", "critic"}
    attempts = _per_arm("attempts", arms)
    # A has no critic, so its critic verdicts must be null; C has one.
    assert "arm A has no critic" in attempts
    assert "arm C has no critic" not in attempts


def test_an_arm_that_cannot_be_loaded_gets_no_per_arm_expectations() -> None:
    assert _per_arm("cases", {"mine": None}) == {}


def test_arms_of_run_reads_references_from_the_stored_configuration() -> None:
    config = {"arms": ["A", "mine=no_such_module_here:loop"]}
    runs = pd.DataFrame([{"arms": "A,mine", "config_json": json.dumps(config)}])
    found = arms_of_run(runs)
    assert list(found) == ["A", "mine"]
    assert found["A"] == BUILTIN_ARMS["A"]
    assert found["mine"] is None  # not importable here: checked without per-arm rules


def test_arms_of_run_without_rows_assumes_every_builtin_arm() -> None:
    assert set(arms_of_run(pd.DataFrame([]))) == set(BUILTIN_ARMS)


def test_a_failed_report_names_the_expectation_and_its_offending_rows() -> None:
    outcome = ExpectationOutcome(
        table="cases",
        expectation="expect_column_values_to_be_in_set",
        columns=("halt_reason",),
        success=False,
        unexpected_count=1,
        offending=({"case_id": "c1", "arm": "A", "halt_reason": "visible_clean"},),
        description="arm A stops only as its spec allows",
    )
    report = QualityReport(run_id="r1", passed=False, results=[outcome])
    text = report.markdown()
    assert "FAILED" in text and "1 of 1 expectations failed" in text
    assert "Expected: arm A stops only as its spec allows." in text
    assert "`case_id='c1', arm='A', halt_reason='visible_clean'`" in text
    assert report.complete
