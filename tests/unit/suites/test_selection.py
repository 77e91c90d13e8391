"""Choosing cases: id globs, tags, a seeded sample, an earlier run's failed cases."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.suites import CaseSelection, SelectionError, load_suite, select_cases


def _ids(selection: CaseSelection) -> list[str]:
    return [case.id for case in select_cases(load_suite("basic"), selection)]


def test_globs_and_tags_keep_matching_cases_in_suite_order() -> None:
    chosen = _ids(CaseSelection(patterns=("basic/003*", "basic/001*")))
    assert chosen == ["basic/001_add_two", "basic/003_is_even"]
    hard = _ids(CaseSelection(tags=("hard",)))
    cases = {case.id: case for case in load_suite("basic")}
    assert hard and all("hard" in cases[i].tags for i in hard)
    assert len(hard) == sum("hard" in case.tags for case in cases.values())
    both = _ids(CaseSelection(patterns=("basic/0*",), tags=("easy",)))
    assert all(i.startswith("basic/0") and "easy" in cases[i].tags for i in both)


def test_a_sample_is_the_same_for_the_same_seed_and_another_for_another() -> None:
    first = _ids(CaseSelection(sample=5, seed=3))
    assert first == _ids(CaseSelection(sample=5, seed=3)) and len(first) == 5
    assert first != _ids(CaseSelection(sample=5, seed=4))
    order = [case.id for case in load_suite("basic")]
    assert first == sorted(first, key=order.index)  # suite order kept


def test_a_selection_that_misses_says_which_option_and_what_exists() -> None:
    with pytest.raises(SelectionError, match=r"--case basic/9\*: no case id matches"):
        _ids(CaseSelection(patterns=("basic/001*", "basic/9*")))
    with pytest.raises(SelectionError, match="--tag nope: no case has it; the suite's tags"):
        _ids(CaseSelection(tags=("nope",)))
    with pytest.raises(SelectionError, match="--sample 99: only"):
        _ids(CaseSelection(sample=99))


def test_repeated_case_options_reach_the_selection_and_refuse_before_any_work(
    tmp_path: Path,
) -> None:
    args = ["run", "--model", "sim:", "--arms", "A", "--output", str(tmp_path / "runs"),
            "--case", "basic/001*", "--case", "basic/002*,basic/zz*"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--case basic/zz*: no case id matches" in result.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def _run(output: Path, run_id: str, **settings: object) -> RunConfig:
    config = RunConfig.model_validate(
        {"suite": "basic", "arms": "A", "model": "sim:draft=0.5", "cache": False,
         "output": output, "run_id": run_id, **settings}
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    return config


def test_only_failed_reruns_the_failed_cases_and_the_run_records_its_selection(
    tmp_path: Path,
) -> None:
    output = tmp_path / "runs"
    _run(output, "first", case_ids=("basic/00*",))
    rows = [
        row
        for path in (output / "first" / "cases").glob("*.parquet")
        for row in pq.read_table(path).to_pylist()
    ]
    failed = {row["case_id"] for row in rows if not row["passed"]}
    assert failed and failed != {row["case_id"] for row in rows}  # draft=0.5: some of each
    _run(output, "again", only_failed="first", tags=("easy", "medium", "hard"))
    rerun = {
        row["case_id"]
        for path in (output / "again" / "cases").glob("*.parquet")
        for row in pq.read_table(path).to_pylist()
    }
    assert rerun == failed
    again = pq.read_table(next((output / "again" / "runs").glob("*.parquet"))).to_pylist()[0]
    assert again["only_failed"] == "first" and again["tags"] == "easy,medium,hard"
    assert json.loads(again["config_json"])["only_failed"] == "first"
    first = pq.read_table(next((output / "first" / "runs").glob("*.parquet"))).to_pylist()[0]
    assert first["case_ids"] == "basic/00*"
