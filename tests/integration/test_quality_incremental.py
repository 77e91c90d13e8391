"""The check that follows a run as its units land reports what a check of all at once does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import critiquebench.quality._incremental as incremental
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.quality import QualityReport, check_run
from critiquebench.quality._incremental import LandingCheck
from critiquebench.quality._isolated import PendingCheck
from tests.helpers import hollow_then_fixed_replay
from tests.integration.test_quality import (
    CORRUPTIONS,
    RUN_ID,
    _failures,
    _infrastructure_error,
    _rewrite,
    _set,
    _unit_file,
    clean_output,  # noqa: F401 (a fixture)
)


def _land(source: Path, target: Path, names: list[str]) -> None:
    """Copy the files of ``names`` (one unit each) as the store writes them: cases last."""
    for table in ("attempts", "calls", "cases"):
        for name in names:
            if (source / table / name).exists():
                (target / table).mkdir(parents=True, exist_ok=True)
                shutil.copy(source / table / name, target / table / name)


def _follow(source: Path, output: Path, first: str) -> LandingCheck:
    """A check following a copy of ``source`` landing in two goes: the units up to the
    one whose files are named ``first`` (validated as they land), then the rest; the
    check is not finished yet."""
    target = output / RUN_ID
    shutil.copytree(source / "runs", target / "runs")
    names = sorted({p.name for t in ("cases", "attempts", "calls") for p in (source / t).iterdir()})
    early = names.index(first) + 1
    check = LandingCheck(output, RUN_ID)
    _land(source, target, names[:early])
    _read_and_check(check)
    _land(source, target, names[early:])
    return check


def _read_and_check(check: LandingCheck) -> None:
    """Read what landed, then validate it, as the check's child does."""
    check.record(check.read_job()())
    job = check.check_job()
    assert job is not None
    check.record(job())


def _all_at_once_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if the check falls back to validating everything at the end."""

    def refuse(*_: object, **__: object) -> QualityReport:
        raise AssertionError("the rows validated as they landed were validated again")

    monkeypatch.setattr(incremental, "check_frames", refuse)


def test_a_clean_run_followed_reports_as_the_check_of_all_at_once(
    clean_output: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _all_at_once_forbidden(monkeypatch)
    check = _follow(
        clean_output / RUN_ID, tmp_path / "runs", _unit_file(clean_output / RUN_ID, "cases").name
    )
    report = check.finish()
    assert report.passed
    assert report == check_run(clean_output, RUN_ID)  # every outcome and its order alike


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_a_bad_row_that_lands_early_is_reported_as_the_whole_check_reports_it(
    name: str,
    clean_output: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corrupt, table, expectation, columns = CORRUPTIONS[name]
    corrupted = tmp_path / "corrupted" / RUN_ID
    shutil.copytree(clean_output / RUN_ID, corrupted)
    corrupt(corrupted)
    # The corrupted unit (arm B of the first case) lands first, with the units before it.
    _all_at_once_forbidden(monkeypatch)
    check = _follow(corrupted, tmp_path / "runs", _unit_file(clean_output / RUN_ID, "cases").name)

    report = check.finish()

    assert (table, expectation, columns) in _failures(report), report.markdown()
    assert report == check_run(corrupted.parent, RUN_ID)


def test_a_resumed_run_is_checked_over_the_rows_of_every_start(tmp_path: Path) -> None:
    replay = hollow_then_fixed_replay(tmp_path, limit=3)
    config = RunConfig(
        suite="basic", limit=3, model=f"replay:{replay}", output=tmp_path / "runs", run_id=RUN_ID
    )
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    run = config.output / RUN_ID
    # A bad row of the first start in a unit the resume skips, and a unit it runs again.
    _rewrite(_unit_file(run, "cases", arm="A"), _set(loops=7))
    _infrastructure_error(run)
    retried = _unit_file(run, "cases").name

    check = LandingCheck(config.output, RUN_ID)  # follows from before the second start
    _read_and_check(check)
    resumed = start_run(config)
    assert [unit.key + ".parquet" for _, unit in resumed.work] == [retried]
    _read_and_check(check)  # the new start's runs row
    for case, unit in resumed.work:
        run_unit(case, unit, config)

    report = check.finish()

    assert report == check_run(config.output, RUN_ID)
    assert ("cases", "expect_column_values_to_be_between", ("loops",)) in _failures(report)
    assert report.complete  # the retried unit's new row replaced its errored one
    assert (run / "superseded").is_dir()


def test_the_child_that_follows_a_run_reports_as_the_check_of_all_at_once(
    clean_output: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    source = clean_output / RUN_ID
    output = tmp_path / "runs"
    pending = PendingCheck(RUN_ID, output=output)  # before the run's folder exists
    shutil.copytree(source / "runs", output / RUN_ID / "runs")
    names = sorted(p.name for p in (source / "cases").iterdir())
    _land(source, output / RUN_ID, names)
    pending.finish()
    checked = pending.result(timeout_s=300)
    assert checked.value == check_run(output, RUN_ID)


def test_finish_needs_the_runs_folder(tmp_path: Path) -> None:
    pending = PendingCheck(RUN_ID)
    try:
        with pytest.raises(ValueError, match="output folder"):
            pending.finish()
    finally:
        pending.close()
