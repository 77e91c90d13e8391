"""The renderings of a report: terminal, Markdown, Prefect artifact rows, HTML."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from critiquebench.analysis import (
    ArmSummary,
    RunReport,
    artifact_rows,
    build_report,
    comparison_table,
    connect,
    html_report,
    report_markdown,
    summary_table,
    verdict_lines,
)
from critiquebench.analysis.render._terminal import _cells, headers
from tests.unit.analysis.synthetic_run import write_run
from tests.unit.analysis.test_report import PRICES, units


def _summary(arm: str) -> ArmSummary:
    return ArmSummary(
        arm=arm, n=4, n_cases=4, mean_defects_initial=2.0, mean_defects=1.0, defects_ci=None,
        pass_rate=0.5, p50_latency_s=1.0, p90_latency_s=2.0, mean_tokens_in=10.0,
        mean_tokens_out=5.0, mean_calls=1.0, mean_loops=0.5, escalated=1, infra_errors=0,
        verifier_errors=2, findings_killed=3,
    )  # fmt: skip


def _text(table: Table) -> str:
    console = Console(file=io.StringIO(), width=250, record=True)
    console.print(table)
    return console.export_text()


def test_every_cell_has_a_header() -> None:
    report = RunReport(run_id="r", target=0.8, arms=(_summary("A"), _summary("B")), curves={},
                       defect_groups=("sql",))  # fmt: skip
    assert len(_cells(_summary("B"), ("sql",))) == len(headers(report))
    table = summary_table(report)
    assert [column.header for column in table.columns] == list(headers(report))
    assert "sql" in headers(report) and "tests/lint/types" not in headers(report)


def test_markdown_table_rows_match_the_header() -> None:
    text = report_markdown(RunReport(run_id="r", target=0.8, arms=(_summary("A"),), curves={}))
    header, _, row = text.splitlines()[2:5]
    assert header.count("|") == row.count("|")


def test_every_output_shows_the_same_cost_of_a_cached_run(tmp_path: Path) -> None:
    # Every call a cache hit: the run paid nothing, the experiment cost A $0.0078 and
    # B $0.0144 (tokens at the test prices).
    write_run(tmp_path, "cached", units(cached_a=True, cached_b=True), reps=2)
    report = build_report(connect(tmp_path), "cached", prices=PRICES, resamples=200)
    expected = {"A": "$0.0078", "B": "$0.0144"}

    terminal = _text(summary_table(report))
    markdown = report_markdown(report)
    page = html_report(report)
    for arm, cost in expected.items():
        assert re.search(rf"│ {arm} .*│ +\{cost} │", terminal), terminal
        assert re.search(rf"^\| {arm} \|.*\| \{cost} \|", markdown, re.M), markdown
        assert re.search(rf"<tr><td>{arm}</td>.*<td>\{cost}</td><td>\$0\.0000</td>", page)
    rows = {row["arm"]: row for row in artifact_rows(report)}
    assert rows["A"]["cost_usd"] == pytest.approx(0.0078)
    assert rows["B"]["cost_usd"] == pytest.approx(0.0144)
    assert rows["A"]["paid_in_this_run_usd"] == rows["B"]["paid_in_this_run_usd"] == 0.0
    paid = "Paid in this run: $0.0000 (18 of 18 calls answered from the cache)"
    assert paid in " ".join(terminal.split())
    assert paid in markdown and paid in page


def test_curves_are_labelled_kept_and_latest(tmp_path: Path) -> None:
    write_run(tmp_path, "known", units(), reps=2)
    report = build_report(connect(tmp_path), "known", prices=PRICES, resamples=200)
    lines = verdict_lines(report)
    assert (
        "arm B defects by round: answer kept 1.83 -> 0.83 -> 0.83; "
        "latest attempt 1.83 -> 0.83 -> 1.00; recommended max_iters = 1"
    ) in lines
    assert "  pass rate of the answer kept vs mean tokens spent: r0 17% @ 110, r1 50% @ 168, " \
        "r2 50% @ 180" in lines  # fmt: skip
    page = html_report(report)
    assert "answer kept 1.83 → 0.83 → 0.83; latest attempt 1.83 → 0.83 → 1.00" in page


def _big_report(tmp_path: Path) -> RunReport:
    """Five arms with values as wide as a long real run gives."""
    write_run(tmp_path, "known", units(), reps=2)
    report = build_report(connect(tmp_path), "known", prices=PRICES, resamples=200)
    wide = dataclasses.replace(
        report.arms[1], n=492, mean_tokens_in=12345.0, mean_tokens_out=6789.0,
        p50_latency_s=123.4, p90_latency_s=456.7, cost_experiment=12.3456, escalated=120,
        verifier_errors=1234, findings_killed=345, mean_calls=12.5,
    )  # fmt: skip
    arms = (report.arms[0], *(dataclasses.replace(wide, arm=arm) for arm in "BCDE"))
    return dataclasses.replace(report, arms=arms)


def _render(renderable: object, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("big", [False, True])
def test_the_table_fits_the_terminal_without_cutting_a_value(
    tmp_path: Path, width: int, big: bool
) -> None:
    if big:
        report = _big_report(tmp_path)
    else:
        write_run(tmp_path, "known", units(), reps=2)
        report = build_report(connect(tmp_path), "known", prices=PRICES, resamples=200)
    text = _render(summary_table(report), width)
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    lines = text.splitlines()
    for header in headers(report):
        assert any(f" {header} " in line for line in lines), (header, text)
    for arm in report.arms:
        row = [line for line in lines if line.startswith(f"│ {arm.arm} ")]
        for value in _cells(arm, report.defect_groups)[1:]:
            assert any(f" {value} " in line for line in row), (value, text)  # whole, one line
    assert "Paid in this run" in " ".join(text.split())


def test_a_wide_terminal_gets_one_table(tmp_path: Path) -> None:
    write_run(tmp_path, "known", units(), reps=2)
    report = build_report(connect(tmp_path), "known", prices=PRICES, resamples=200)
    text = _render(summary_table(report), 200)
    header = next(line for line in text.splitlines() if "defects@0" in line)
    assert all(name in header for name in headers(report))
    assert sum(1 for line in text.splitlines() if line.startswith("┏")) == 1


def test_compare_names_the_model_of_each_run(tmp_path: Path) -> None:
    write_run(tmp_path, "run-a", units(), reps=2, model="gemini:gemini-2.5-flash")
    write_run(tmp_path, "run-b", units(), reps=2, model="local")
    connection = connect(tmp_path)
    first, second = (build_report(connection, r, resamples=50) for r in ("run-a", "run-b"))
    text = " ".join(_render(comparison_table(first, second), 80).split())
    assert "run-a (model gemini:gemini-2.5-flash) vs run-b (model local)" in text
