from __future__ import annotations

from critiquebench.analysis import ArmSummary, RunReport, report_markdown, summary_table
from critiquebench.analysis._terminal import _HEADERS, _cells


def _summary(arm: str) -> ArmSummary:
    return ArmSummary(arm, 4, 2.0, 1.0, 0.5, 1.0, 2.0, 10.0, 5.0, 1.0, 0.5, 1, 0, 2, 3)


def test_every_cell_has_a_header() -> None:
    assert len(_cells(_summary("B"))) == len(_HEADERS)
    table = summary_table(RunReport("r", 0.8, [_summary("A"), _summary("B")], {}))
    assert [column.header for column in table.columns] == list(_HEADERS)


def test_markdown_table_rows_match_the_header() -> None:
    text = report_markdown(RunReport("r", 0.8, [_summary("A")], {}))
    header, _, row = text.splitlines()[2:5]
    assert header.count("|") == row.count("|")
