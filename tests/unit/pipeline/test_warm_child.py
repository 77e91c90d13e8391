"""One call in a child process that imported its modules ahead of time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from critiquebench.warm_child import WarmChild


def loaded(names: list[str]) -> list[str]:
    """The names of ``names`` that the (child) process has imported."""
    return [name for name in names if name in sys.modules]


def fails(message: str) -> None:
    raise ValueError(message)


def test_the_child_imports_ahead_and_returns_the_value_and_its_cost() -> None:
    child: WarmChild[list[str]] = WarmChild(["colorsys"])
    child.call(loaded, ["colorsys", "great_expectations"])
    done = child.result(timeout_s=120)
    assert done.value == ["colorsys"]  # imported ahead, and nothing else of the parent's
    assert done.peak_rss_mib > 1 and done.seconds > 0


def test_an_exception_in_the_call_is_raised_in_the_parent() -> None:
    child: WarmChild[None] = WarmChild([])
    child.call(fails, "bad table")
    with pytest.raises(ValueError, match="bad table"):
        child.result(timeout_s=120)


def test_a_child_that_cannot_start_is_an_error_that_quotes_it() -> None:
    child: WarmChild[None] = WarmChild(["no_such_module_anywhere"])
    child.call(fails, "never runs")
    with pytest.raises(RuntimeError, match=r"(?s)no result:.*No module named 'no_such_module"):
        child.result(timeout_s=120)


def test_a_child_given_no_call_stops() -> None:
    child: WarmChild[None] = WarmChild([])
    with pytest.raises(RuntimeError, match="exited with code 0 and no result"):
        child.result(timeout_s=120)


def test_the_report_built_in_a_child_is_the_one_built_here(tmp_path: Path) -> None:
    from critiquebench.analysis import RunReport, read_report, write_reports
    from critiquebench.pipeline._report_child import REPORT_MODULES, report_of
    from tests.unit.analysis.synthetic_run import FakeUnit, write_run

    units = [
        FakeUnit(f"c{i}", arm, 0, (2, 0) if arm == "B" else (1,)) for i in range(6) for arm in "AB"
    ]
    write_run(tmp_path / "child", "r", units)
    write_run(tmp_path / "here", "r", units)
    child: WarmChild[RunReport] = WarmChild(REPORT_MODULES)
    child.call(report_of, tmp_path / "child", "r", None, 0.8)
    built = child.result(timeout_s=300).value
    assert built == write_reports(tmp_path / "here", "r", target=0.8).report
    assert read_report(tmp_path / "child", "r") == built  # the files were written there
    html = (tmp_path / "child" / "r" / "report.html").read_text(encoding="utf-8")
    assert html == (tmp_path / "here" / "r" / "report.html").read_text(encoding="utf-8")
