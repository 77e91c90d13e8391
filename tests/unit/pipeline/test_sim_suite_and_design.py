"""The `sim:` model answers from the run's suite (or is refused at the start when told
another), and a design that cannot decide is said to be one."""

from __future__ import annotations

from pathlib import Path

import pytest

from critiquebench._cli._design import DECIDING_POWER, compared_cases, design_note
from critiquebench.models import ModelSpecError
from critiquebench.pipeline import RunConfig, check_model, run_unit, start_run
from critiquebench.suites import canary_cases, load_suite


def _config(tmp_path: Path, suite: str, model: str) -> RunConfig:
    return RunConfig(
        suite=suite, limit=1, arms=("A",), model=model, cache=False,
        output=tmp_path / "runs", run_id="s-1", prices=tmp_path / "none.json",
    )  # fmt: skip


def test_sim_takes_the_suite_of_the_run_unless_told(tmp_path: Path) -> None:
    assert _config(tmp_path, "sql", "sim:").provider_settings().spec == "sim:suite=sql"
    assert _config(tmp_path, "sql", "sim").provider_settings().spec == "sim:suite=sql"
    spec = _config(tmp_path, "json", "sim:fix=0.5").provider_settings().spec
    assert spec == "sim:fix=0.5,suite=json"
    told = "sim:fix=0.5,suite=sql"
    assert _config(tmp_path, "sql", told).provider_settings().spec == told
    assert _config(tmp_path, "sql", "replay:x.jsonl").provider_settings().spec == "replay:x.jsonl"


def test_sim_told_another_suite_is_refused_at_the_start(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="suite 'basic', the run is on --suite sql"):
        check_model(_config(tmp_path, "sql", "sim:suite=basic"))
    check_model(_config(tmp_path, "sql", "sim:suite=sql"))


def test_a_sim_unit_of_the_sql_suite_is_measured(tmp_path: Path) -> None:
    config = _config(tmp_path, "sql", "sim:")
    plan = start_run(config)
    (case, unit), *_ = plan.work
    assert run_unit(case, unit, config).error is None


def test_a_design_too_small_to_decide_says_so() -> None:
    note = design_note(n_cases=5, reps=1, retry_limit=2, target=0.8)
    assert note is not None and note.met_share < DECIDING_POWER
    line = note.line()
    assert line.startswith("design: 5 case(s) x 1 rep(s) would call a true 90% reduction")
    assert "critiquebench power --effect 0.90 --target 0.8 --reps 1" in line
    assert design_note(n_cases=160, reps=3, retry_limit=2, target=0.8) is None


def test_the_design_counts_the_compared_cases_not_the_canaries() -> None:
    # A run of basic with 10 canaries judged 54 distinct case ids; its verdicts compare
    # 44 (the note said 54, overstating the design's power).
    cases = load_suite("basic")
    canaries = canary_cases(cases)[:10]
    assert len(canaries) == 10
    assert compared_cases([*cases, *canaries]) == len(cases) == 44
