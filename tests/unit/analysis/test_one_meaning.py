"""One meaning per word: "pass", halt reasons and per-arm rows say the same everywhere.

"Pass" is no measured defect of any kind; the test-only rate is "tests pass". Every
output (the terminal, report.json, report.html, lessons.md) shows the same number for
the same word. Halt reasons of older runs read in this version's names. Per-arm rows
cover the same (case, rep) pairs in every arm, and say what that left out.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from critiquebench.analysis import (
    build_report,
    connect,
    summary_table,
    verdict_lines,
    views_sql,
    write_reports,
)
from tests.unit.analysis.synthetic_run import FakeUnit, write_run

CASES = [f"c{i}" for i in range(10)]  # enough for a verdict and its paired test
TESTS_FAIL, LINT = {"assertion": 1}, {"lint": 1}


def _drafts(index: int) -> dict[str, int]:
    """Every arm's first draft: half fail a test, half pass the tests with a lint defect."""
    return TESTS_FAIL if index < 5 else LINT


# B's answers kept: every test passes, 3 of 10 have no defect of any kind.
_B_KEPT = [{}, {}, LINT, LINT, LINT, {}, LINT, LINT, LINT, LINT]


def _unit(arm: str, index: int) -> FakeUnit:
    first = _drafts(index)
    counts = (first,) if arm == "A" else (first, _B_KEPT[index])
    return FakeUnit(
        CASES[index], arm, 0, tuple(sum(c.values()) for c in counts), kind_counts=counts
    )


UNITS = [_unit(arm, i) for arm in "AB" for i in range(len(CASES))]
# arm: (pass rate, tests pass rate), worked out by hand from the units above.
EXPECTED = {"A": ("0%", "50%"), "B": ("30%", "100%")}


def _rich_tables(text: str) -> dict[str, dict[str, str]]:
    """Per arm, every column of the printed per-arm tables (stacked or not)."""
    cells: dict[str, dict[str, str]] = {}
    headers: list[str] = []
    for line in text.splitlines():
        if "┃" in line:
            headers = [h.strip() for h in line.strip().strip("┃").split("┃")]
        elif "│" in line and headers:
            values = [v.strip() for v in line.strip().strip("│").split("│")]
            row = dict(zip(headers, values, strict=True))
            cells.setdefault(row["arm"], {}).update(row)
    return cells


def _terminal(output: Path) -> tuple[dict[str, dict[str, str]], str]:
    # What `critiquebench run` / `report` prints: the table, then the verdict lines.
    report = build_report(connect(output, ["r"], snapshot=True), "r", resamples=200)
    console = Console(record=True, width=300)
    console.print(summary_table(report))
    return _rich_tables(console.export_text()), "\n".join(verdict_lines(report))


def _html_table(page: str, first_header: str) -> list[list[str]]:
    """The rows (header row first) of the page's table whose first header is given."""
    for table in re.findall(r"<table[^>]*>(.*?)</table>", page, re.S):
        rows = [
            [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<t[hd]>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        ]  # fmt: skip
        if rows and rows[0] and rows[0][0] == first_header:
            return rows
    raise AssertionError(f"no table starting with {first_header!r}")


def test_pass_and_tests_pass_are_the_same_numbers_in_every_output(tmp_path: Path) -> None:
    write_run(tmp_path, "r", UNITS)
    files = write_reports(tmp_path, "r")
    table, lines = _terminal(tmp_path)
    data = json.loads(files.json.read_text(encoding="utf-8"))
    page = files.html.read_text(encoding="utf-8")
    lessons = (tmp_path / "r" / "lessons.md").read_text(encoding="utf-8")
    per_arm = _html_table(page, "arm")
    columns = per_arm[0]
    html_rows = {row[0]: dict(zip(columns, row, strict=True)) for row in per_arm[1:]}
    json_arms = {arm["arm"]: arm for arm in data["arms"]}
    for arm, (passed, tests) in EXPECTED.items():
        assert (table[arm]["pass"], table[arm]["tests pass"]) == (passed, tests)
        assert (html_rows[arm]["pass"], html_rows[arm]["tests pass"]) == (passed, tests)
        found = json_arms[arm]
        assert (f"{found['pass_rate']:.0%}", f"{found['tests_pass_rate']:.0%}") == (passed, tests)
        said = f"(no measured defect of any kind: {passed}; tests pass rate {tests})"
        assert said in lessons, lessons
        assert said in " ".join(html.unescape(page).split())
    # The round curve's pass rate after the last round is the table's pass rate ...
    assert "pass rate of the answer kept vs mean tokens spent: r0 0% @ 0, r1 30% @ 0" in lines
    rounds = _html_table(page, "round")
    assert rounds[0][6] == "pass rate of the answer kept" and rounds[-1][6] == "30%"
    assert data["curves"]["B"]["pass_vs_tokens"][-1]["pass_rate"] == 3 / 10
    # ... and the paired test's pass rates are the same ones, in the terminal and the page.
    mcnemar = "pass rate 0% -> 30% (McNemar"
    assert mcnemar in lines and mcnemar in html.unescape(page)
    # The cases table says it too: passed is the all-kinds flag, tests_passed the tests'.
    rows = connect(tmp_path, ["r"]).execute(
        "SELECT arm, avg(passed::INT), avg(tests_passed::INT) FROM cases GROUP BY arm ORDER BY arm"
    )
    assert rows.fetchall() == [("A", 0.0, 0.5), ("B", 0.3, 1.0)]


def _as_an_older_run(output: Path) -> None:
    """Rewrite run ``r``'s cases files as schema v6 wrote them: no ``tests_passed``,
    ``passed`` the test-only flag, and the halt reasons' old names."""
    old_names = {"visible_clean": "passed", "retry_limit": "budget_exhausted",
                 "single_draft": "single_pass"}  # fmt: skip
    for path in sorted((output / "r" / "cases").glob("*.parquet")):
        table = pq.read_table(path)
        tests_passed = table.column("tests_passed")
        halts = [old_names.get(h, h) for h in table.column("halt_reason").to_pylist()]
        table = table.drop_columns(["tests_passed", "passed", "halt_reason"])
        table = table.append_column("passed", tests_passed)
        table = table.append_column("halt_reason", pa.array(halts, pa.string()))
        pq.write_table(table, path)


def test_a_run_written_with_the_old_words_reads_in_the_new_ones(tmp_path: Path) -> None:
    write_run(tmp_path, "r", UNITS)
    new = build_report(connect(tmp_path, ["r"], snapshot=True), "r", resamples=200)
    _as_an_older_run(tmp_path)
    old_files = [pq.read_table(p) for p in (tmp_path / "r" / "cases").glob("*.parquet")]
    assert not any("tests_passed" in table.column_names for table in old_files)
    written = {h for table in old_files for h in table.column("halt_reason").to_pylist()}
    assert written == {"single_pass", "passed", "budget_exhausted"}
    for snapshot in (False, True):
        old = build_report(connect(tmp_path, ["r"], snapshot=snapshot), "r", resamples=200)
        assert old.arms == new.arms  # halts, pass rates, everything
    assert new.arms[0].halts == {"single_draft": 10}
    assert new.arms[1].halts == {"retry_limit": 7, "visible_clean": 3}
    # The statements `critiquebench sql --print-views` gives the duckdb CLI read them so too.
    db = duckdb.connect()
    for statement in views_sql(tmp_path, ["r"]).splitlines():
        if not statement.startswith("--"):
            db.execute(statement)
    found = db.execute(
        "SELECT arm, halt_reason, count(*), sum(passed::INT), sum(tests_passed::INT) "
        "FROM cases GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert found == [
        ("A", "single_draft", 10, 0, 5),
        ("B", "retry_limit", 7, 0, 7),
        ("B", "visible_clean", 3, 3, 3),
    ]


@pytest.mark.parametrize("how", ["error", "no rows"])
def test_per_arm_rows_cover_the_same_cases_in_every_arm(tmp_path: Path, how: str) -> None:
    # Identical first drafts in A and B: c0 has 12 defects, c1..c10 one each. B's c0 is
    # not measured. Over each arm's own units A would read defects@0 2.00, B 1.00.
    drafts = {f"c{i}": 12 if i == 0 else 1 for i in range(11)}
    made = [FakeUnit(case, "A", 0, (n,)) for case, n in drafts.items()]
    made += [FakeUnit(case, "B", 0, (n, 0)) for case, n in drafts.items() if case != "c0"]
    if how == "error":
        made.append(FakeUnit("c0", "B", 0, (12,), error="infrastructure: judge: host down"))
    write_run(tmp_path, "r", made, planned=22)
    report = build_report(connect(tmp_path, ["r"], snapshot=True), "r", resamples=200)
    a, b = report.arms
    assert (a.n, b.n) == (10, 10)
    assert a.mean_defects_initial == b.mean_defects_initial == 1.0
    assert report.curves["A"].kept.mean_defects[0] == report.curves["B"].kept.mean_defects[0]
    assert (a.pass_rate, b.pass_rate) == (0.0, 1.0)
    assert (a.units_not_compared, b.units_not_compared) == (1, 0)
    said = (
        "Same cases: every per-arm number covers the 10 (case, rep) pair(s) every arm "
        "measured; 1 measured unit(s) of other pairs are left out (per arm: A 1, B 0)."
    )
    assert said in verdict_lines(report)
    files = write_reports(tmp_path, "r")
    assert said in files.html.read_text(encoding="utf-8")
    assert json.loads(files.json.read_text(encoding="utf-8"))["arms"][0]["units_not_compared"] == 1
    # The sensitivity analysis still counts every planned unit, c0 of A included.
    sensitivity = {s.arm: s for s in report.sensitivity}
    assert sensitivity["A"].n == sensitivity["B"].n == 11
    assert sensitivity["A"].mean_defects == pytest.approx(22 / 11)


def test_every_unit_compared_says_nothing(tmp_path: Path) -> None:
    write_run(tmp_path, "r", UNITS)
    report = build_report(connect(tmp_path, ["r"]), "r", resamples=200)
    assert report.units_not_compared == 0 and report.not_compared_text is None
    assert not any(line.startswith("Same cases") for line in verdict_lines(report))
