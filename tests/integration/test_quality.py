"""Data-quality checks on a real (replayed) run's Parquet, clean and corrupted."""

from __future__ import annotations

import functools
import hashlib
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run
from critiquebench.quality import (
    ExpectationOutcome,
    QualityCheckFailed,
    QualityReport,
    check_run,
)
from critiquebench.suites import load_suite
from tests.helpers import hollow_then_fixed_replay

RUN_ID = "quality-1"
Rows = list[dict[str, Any]]


def _fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def clean_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6-unit run (3 cases x arms A, B; retry limit 3) written without Prefect."""
    folder = tmp_path_factory.mktemp("quality")
    replay = hollow_then_fixed_replay(folder, limit=3)
    config = RunConfig(
        suite="basic", limit=3, model=f"replay:{replay}", output=folder / "runs", run_id=RUN_ID
    )
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    finish_run(plan, failed=0)
    return config.output


@pytest.fixture(scope="module")
def original_fingerprint(clean_output: Path) -> dict[str, str]:
    return _fingerprint(clean_output)


CASE_IDS = sorted(case.id for case in load_suite("basic", limit=3))
"""The clean run's cases (3 cases x arms A, B at rep 0 = 6 units)."""
Pick = tuple[int, str]
"""A unit of the clean run: the nth of ``CASE_IDS`` in an arm, at rep 0."""
FIRST_B: Pick = (0, "B")


def _key(unit: Pick) -> tuple[str, str]:
    """The (case_id, arm) of ``unit``."""
    return CASE_IDS[unit[0]], unit[1]


def _rewrite_unit(run: Path, unit: Pick, table: str, change: Callable[[Rows], Rows]) -> None:
    """Rewrite the copy's ``table`` with the rows of one ``unit`` changed, every column
    nullable. The finished run holds each table as one compacted part; ``change`` may
    drop the unit's rows or add rows."""
    (path,) = sorted((run / table).glob("*.parquet"))
    rows = pq.read_table(path).to_pylist()
    key = (*_key(unit), 0)
    mine = [r for r in rows if (r["case_id"], r["arm"], r["rep"]) == key]
    rest = [r for r in rows if (r["case_id"], r["arm"], r["rep"]) != key]
    assert mine, f"the clean run has {table} rows of unit {key}"
    schema = pa.schema([field.with_nullable(True) for field in pq.read_schema(path)])
    pq.write_table(pa.Table.from_pylist(rest + change(mine), schema=schema), path)


def _set(**values: Any) -> Callable[[Rows], Rows]:
    return lambda rows: [{**row, **values} for row in rows]


def _corrupted_copy(clean_output: Path, folder: Path, *corruptions: Callable[[Path], None]) -> Path:
    """A copy of the clean run under ``folder / "runs"`` with ``corruptions`` applied to
    it in turn; the copy's output folder."""
    copy = folder / "runs"
    shutil.copytree(clean_output / RUN_ID, copy / RUN_ID)
    for corrupt in corruptions:
        corrupt(copy / RUN_ID)
    return copy


def _null_arm(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "cases", _set(arm=None))


def _negative_tokens(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "calls", _set(paid_tokens_in=-5))


def _duplicate_unit(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "cases", lambda rows: rows + rows)


def _too_many_loops(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "cases", _set(loops=7))


def _orphan_call(run: Path, unit: Pick = FIRST_B) -> None:
    ghost = _set(case_id="basic/999_ghost")
    _rewrite_unit(run, unit, "calls", lambda rows: rows + ghost(rows))


def _bad_halt_reason(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "cases", _set(halt_reason="gave_up"))


def _iteration_gap(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(
        run,
        unit,
        "attempts",
        lambda rows: [{**r, "iteration": 2 * r["iteration"]} for r in rows],
    )


def _unknown_arm(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "attempts", _set(arm="Z"))


def _unmetered_tokens(run: Path, unit: Pick = FIRST_B) -> None:
    # Calls from a live model (not replay) but the unit counted no tokens.
    _rewrite_unit(run, unit, "calls", _set(model="local"))


def _lost_calls(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "calls", lambda rows: [])


def _defect_as_error(run: Path, unit: Pick = FIRST_B) -> None:
    # cases.error is for infrastructure failures only; a model defect must not land there.
    _rewrite_unit(run, unit, "cases", _set(error="SyntaxError in the answer"))


def _errored_unit_passed(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "cases", _set(error="provider: actor call failed: 503"))


def _infrastructure_error(run: Path, unit: Pick = FIRST_B) -> None:
    error = "infrastructure: judge: sandbox did not start"
    _rewrite_unit(run, unit, "cases", _set(error=error, passed=False, halt_reason="error"))


def _role_outside_the_arm(run: Path, unit: Pick = FIRST_B) -> None:
    # A known role, but arm B's spec calls no reviewers.
    _rewrite_unit(run, unit, "calls", _set(role="reviewer"))


def _verdict_without_critic(run: Path, unit: Pick = FIRST_B) -> None:
    _rewrite_unit(run, unit, "attempts", _set(critic_verdict="pass"))


def _total_below_tests(run: Path, unit: Pick = FIRST_B) -> None:
    # The total (tests + lint + types) cannot be smaller than its tests' part.
    _rewrite_unit(run, unit, "cases", _set(defects_final=5, defects_total_final=2))


def _raw_below_bounded(run: Path, unit: Pick = FIRST_B) -> None:
    # The per-kind bound only lowers a count: the raw count is never below it.
    changes = {"defects_final": 0, "defects_total_final": 3, "defects_total_final_raw": 1}
    _rewrite_unit(run, unit, "cases", _set(**changes))


CORRUPTIONS = {
    "null arm": (_null_arm, "cases", "expect_column_values_to_not_be_null", ("arm",)),
    "negative tokens": (
        _negative_tokens,
        "calls",
        "expect_column_values_to_be_between",
        ("paid_tokens_in",),
    ),
    "duplicate unit": (
        _duplicate_unit,
        "cases",
        "expect_compound_columns_to_be_unique",
        ("run_id", "case_id", "arm", "rep"),
    ),
    "loops over the limit": (
        _too_many_loops,
        "cases",
        "expect_column_values_to_be_between",
        ("loops",),
    ),
    "orphan call": (_orphan_call, "calls", "expect_column_values_to_be_in_set", ("orphan",)),
    "unknown halt reason": (
        _bad_halt_reason,
        "cases",
        "expect_column_values_to_be_in_set",
        ("halt_reason",),
    ),
    "iteration gap": (
        _iteration_gap,
        "attempts",
        "expect_column_values_to_be_in_set",
        ("iteration_contiguous",),
    ),
    "unknown arm": (_unknown_arm, "attempts", "expect_column_values_to_be_in_set", ("arm",)),
    "tokens missing": (
        _unmetered_tokens,
        "cases",
        "expect_column_values_to_be_between",
        ("tokens_total",),
    ),
    "model defect recorded as an error": (
        _defect_as_error,
        "cases",
        "expect_column_values_to_match_regex",
        ("error",),
    ),
    "errored unit counted as passed": (
        _errored_unit_passed,
        "cases",
        "expect_column_values_to_be_in_set",
        ("passed",),
    ),
    "role outside the arm's spec": (
        _role_outside_the_arm,
        "calls",
        "expect_column_values_to_be_in_set",
        ("role",),
    ),
    "critic verdict in an arm without critic": (
        _verdict_without_critic,
        "attempts",
        "expect_column_values_to_be_null",
        ("critic_verdict",),
    ),
    "total defects below the tests' defects": (
        _total_below_tests,
        "cases",
        "expect_column_pair_values_a_to_be_greater_than_b",
        ("defects_total_final", "defects_final"),
    ),
    "raw defects below the bounded count": (
        _raw_below_bounded,
        "cases",
        "expect_column_pair_values_a_to_be_greater_than_b",
        ("defects_total_final_raw", "defects_total_final"),
    ),
    "lost calls": (
        _lost_calls,
        "cases",
        "expect_column_pair_values_to_be_equal",
        ("calls", "call_rows"),
    ),
}


SHOWN = {
    "loops over the limit": ("FAILED", "loops within the run's retry limit", "arm='B'", "loops=7"),
}
"""What the report's markdown shows of a corruption: the verdict, and in its failure's
section the rule and the offending row."""

GROUPS: tuple[dict[str, Pick], ...] = (
    {
        "loops over the limit": (0, "B"),
        "errored unit counted as passed": (1, "B"),  # arm A's units failed anyway
        "iteration gap": (2, "B"),  # arm A makes one attempt: iteration 0 doubles to 0
        "null arm": (0, "A"),
        "model defect recorded as an error": (1, "A"),  # in B (passed) it trips the rule above
        "total defects below the tests' defects": (2, "A"),  # in B it also goes above raw
    },
    {
        "role outside the arm's spec": (0, "B"),
        "critic verdict in an arm without critic": (1, "B"),
        "unknown halt reason": (2, "B"),
        "lost calls": (0, "A"),
        "orphan call": (1, "A"),
        "unknown arm": (2, "A"),
    },
    {
        "negative tokens": (0, "B"),
        "duplicate unit": (1, "B"),
        "tokens missing": (2, "B"),
        "raw defects below the bounded count": (0, "A"),
    },
)
"""The corruptions that share a corrupted copy (and its check), each on a unit of its
own. No two in a copy trip the same expectation (a null arm orphans its unit's calls
and attempts and empties its row counts, so it is kept from the orphan, lost-calls and
unknown-arm corruptions); the test makes sure: every row its expectation shows is of
its unit."""

SHOWN_AS: dict[str, dict[str, Any]] = {
    "null arm": {"arm": None},
    "unknown arm": {"arm": "Z"},
    "orphan call": {"case_id": "basic/999_ghost"},
}
"""How a corruption that rewrites its unit's key shows the unit's rows."""


def _failures(report: QualityReport) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(f.table, f.expectation, f.columns) for f in report.failures}


def _section(report: QualityReport, failure: ExpectationOutcome) -> str:
    """The report markdown's section on ``failure`` (the nth failure has the nth)."""
    sections = report.markdown().split("\n### ")[1:]
    section = sections[report.failures.index(failure)]
    assert section.startswith(f"{failure.label()}\n"), section
    return section


@dataclass(frozen=True)
class Checked:
    """A corrupted copy of the clean run and its report."""

    copy: Path
    corrupted: dict[str, str]
    """The copy's fingerprint before it was checked."""
    report: QualityReport


@pytest.fixture(scope="module")
def checked_group(
    clean_output: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[int], Checked]:
    """The copy of ``GROUPS[n]``'s corruptions, checked: each made on first use, once."""
    made: dict[int, Checked] = {}

    def checked(group: int) -> Checked:
        if group not in made:
            corruptions = [
                functools.partial(CORRUPTIONS[name][0], unit=unit)
                for name, unit in GROUPS[group].items()
            ]
            folder = tmp_path_factory.mktemp(f"group{group}")
            copy = _corrupted_copy(clean_output, folder, *corruptions)
            corrupted = _fingerprint(copy)
            made[group] = Checked(copy, corrupted, check_run(copy, RUN_ID))
        return made[group]

    return checked


def test_clean_run_passes_and_is_left_untouched(
    clean_output: Path, original_fingerprint: dict[str, str]
) -> None:
    report = check_run(clean_output, RUN_ID)
    assert report.passed, report.markdown()
    assert {r.table for r in report.results} == {"runs", "cases", "attempts", "calls"}
    checked = {(r.table, r.expectation) for r in report.results}
    assert ("cases", "expect_compound_columns_to_be_unique") in checked
    assert ("calls", "expect_column_values_to_be_in_set") in checked
    assert "passed" in report.markdown()
    assert _fingerprint(clean_output) == original_fingerprint


def test_each_corruption_has_a_unit_of_its_own_in_one_group() -> None:
    assert sorted(name for group in GROUPS for name in group) == sorted(CORRUPTIONS)
    for group in GROUPS:
        assert len(set(group.values())) == len(group), group


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_each_corruption_is_caught_by_its_expectation(
    name: str,
    clean_output: Path,
    original_fingerprint: dict[str, str],
    checked_group: Callable[[int], Checked],
) -> None:
    _, table, expectation, columns = CORRUPTIONS[name]
    (group,) = [n for n, corruptions in enumerate(GROUPS) if name in corruptions]
    checked = checked_group(group)
    report = checked.report
    case_id, arm = _key(GROUPS[group][name])
    unit = {"case_id": case_id, "arm": arm, "rep": 0} | SHOWN_AS.get(name, {})

    assert not report.passed
    assert (table, expectation, columns) in _failures(report), report.markdown()
    failing = [
        f
        for f in report.failures
        if (f.table, f.expectation, f.columns) == (table, expectation, columns)
    ]
    for failure in failing:  # e.g. a halt reason breaks the run's and the arm's rule
        assert failure.offending, "the report shows the offending rows"
        # Its unit's rows, all shown (a unit has fewer than 5 per table), and no other
        # unit's: no other corruption of the copy is what trips the expectation.
        assert failure.unexpected_count == len(failure.offending), failure
        for row in failure.offending:
            assert {key: row.get(key) for key in unit} == unit, failure
        section = _section(report, failure)
        shown = ", ".join(f"{k}={'null' if v is None else repr(v)}" for k, v in unit.items())
        assert shown in section, section
        assert failure.label() in str(QualityCheckFailed(report))
    head, _, _ = report.markdown().partition("\n")
    for shown in SHOWN.get(name, ()):
        assert any(shown in f"{head}\n{_section(report, f)}" for f in failing), name
    assert _fingerprint(checked.copy) == checked.corrupted  # the checked files were only read
    assert _fingerprint(clean_output) == original_fingerprint


def test_the_two_passes_give_what_one_summary_pass_gives(
    checked_group: Callable[[int], Checked],
) -> None:
    # The check validates with BOOLEAN_ONLY first and asks GX's SUMMARY only of what
    # failed or observes a value; the outcomes must be those of one SUMMARY pass.
    from critiquebench.quality._check import outcome_of
    from critiquebench.quality._load import load_tables
    from critiquebench.quality._suites import arms_of_run, build_suite, ephemeral_context

    checked = checked_group(0)  # six corruptions; the corruption tests read its check too
    copy = checked.copy
    frames, retry_limit = load_tables(copy, RUN_ID)
    arms = arms_of_run(frames["runs"])
    source = ephemeral_context().data_sources.add_pandas("one-pass")
    expected = []
    for table, frame in frames.items():
        batch = source.add_dataframe_asset(table).add_batch_definition_whole_dataframe(table)
        validation = batch.get_batch(batch_parameters={"dataframe": frame}).validate(
            build_suite(table, arms),
            expectation_parameters={"run_ids": [RUN_ID], "retry_limit": retry_limit},
            result_format={"result_format": "SUMMARY", "partial_unexpected_count": 5},
        )
        expected += [outcome_of(table, result, frame) for result in validation.results]

    found = checked.report.results

    assert sorted(map(repr, found)) == sorted(map(repr, expected))
    assert sum(not outcome.success for outcome in found) >= 4


runner = CliRunner()


def test_check_command_exit_codes(clean_output: Path, tmp_path: Path) -> None:
    ok = runner.invoke(app, ["check", RUN_ID, "--output", str(clean_output)])
    assert ok.exit_code == 0, ok.output
    assert "passed" in ok.output

    copy = _corrupted_copy(clean_output, tmp_path, _bad_halt_reason)
    bad = runner.invoke(app, ["check", RUN_ID, "--output", str(copy)])
    assert bad.exit_code == 1
    assert "expect_column_values_to_be_in_set" in bad.output and "halt_reason" in bad.output

    missing = runner.invoke(app, ["check", "no-such-run", "--output", str(clean_output)])
    assert missing.exit_code == 2


@pytest.fixture(scope="module")
def infrastructure_errored(clean_output: Path, tmp_path_factory: pytest.TempPathFactory) -> Checked:
    """A copy where one unit ended in an infrastructure error, checked (two tests read it)."""
    copy = _corrupted_copy(clean_output, tmp_path_factory.mktemp("errored"), _infrastructure_error)
    return Checked(copy, _fingerprint(copy), check_run(copy, RUN_ID))


def test_infrastructure_errors_fail_the_check_though_the_tables_are_sound(
    infrastructure_errored: Checked,
) -> None:
    copy, report = infrastructure_errored.copy, infrastructure_errored.report
    assert report.passed and not report.complete, report.markdown()
    assert [row["error"] for row in report.unfinished] == [
        "infrastructure: judge: sandbox did not start"
    ]
    assert "run INCOMPLETE" in report.markdown()
    result = runner.invoke(app, ["check", RUN_ID, "--output", str(copy)])
    assert result.exit_code == 1
    assert "infrastructure error" in result.output and "sandbox did not start" in result.output


def test_units_without_rows_count_as_missing(clean_output: Path, tmp_path: Path) -> None:
    copy = _corrupted_copy(
        clean_output, tmp_path, lambda run: _rewrite_unit(run, FIRST_B, "cases", lambda rows: [])
    )
    report = check_run(copy, RUN_ID)
    assert report.missing == 1 and not report.complete


def test_the_check_runs_in_a_child_that_gives_the_same_report(
    clean_output: Path, tmp_path: Path
) -> None:
    # Run as the flow's process: Great Expectations and pandas (~270 MiB) stay in the
    # check's child process, which exits after the check, and the report it sends back
    # is the one a check in this process gives.
    names = ("duplicate unit", "orphan call", "errored unit counted as passed")
    copy = _corrupted_copy(clean_output, tmp_path, *(CORRUPTIONS[name][0] for name in names))
    sent = tmp_path / "checked.pickle"
    script = f"""
import pickle, sys
from pathlib import Path
import flows.ab_matrix
from critiquebench.analysis import connect
from critiquebench.quality._isolated import check_isolated
tables = connect(Path({str(copy)!r}), [{RUN_ID!r}], snapshot=True)
checked = check_isolated({RUN_ID!r}, tables)
Path({str(sent)!r}).write_bytes(pickle.dumps(checked))
print(sorted({{"great_expectations", "pandas"}} & set(sys.modules)))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.split("\n")[-2] == "[]", done.stderr
    checked = pickle.loads(sent.read_bytes())
    report = check_run(copy, RUN_ID)
    assert not report.passed and report.unfinished
    assert checked.value == report  # every outcome, offending row and note alike
    assert checked.peak_rss_mib > 0 and checked.seconds > 0


def test_a_process_that_imported_the_check_checks_in_itself(
    infrastructure_errored: Checked,
) -> None:
    # This process has checked runs (check_run above, or the fixture's): a child would
    # only import Great Expectations again, so the pending check starts none.
    from critiquebench.analysis import connect
    from critiquebench.quality._isolated import PendingCheck

    copy, report = infrastructure_errored.copy, infrastructure_errored.report
    pending = PendingCheck(RUN_ID)
    assert pending._child.in_process
    with closing(connect(copy, [RUN_ID], snapshot=True)) as tables:
        pending.send(tables)
    checked = pending.result()
    assert checked.in_process and checked.value == report
    assert checked.peak_rss_mib > 0 and checked.seconds > 0


def test_a_child_that_dies_is_an_error_that_says_why(tmp_path: Path) -> None:
    from critiquebench.quality._isolated import PendingCheck

    pending = PendingCheck(RUN_ID, in_process=False)
    with pytest.raises(RuntimeError, match="exited with code 0 and no result"):
        pending.result()  # nothing was sent: the child reads end of input and stops
