"""The files of a run's report: report.json (the numbers), report.html (with its units'
stories in ``report_units/``) and lessons.md.

The report is built once; the page and the lessons are rendered from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from critiquebench.analysis.render._html import html_report
from critiquebench.analysis.render._lessons import lessons_markdown
from critiquebench.analysis.render._project_lessons import update_project_lessons
from critiquebench.analysis.render._units_page import (
    UnitsPage,
    write_units_page,
    write_units_stories,
)
from critiquebench.analysis.report import REPORT_JSON, PriceTable, RunReport, build_report
from critiquebench.analysis.views import connect
from critiquebench.pipeline import ResultStore, Root
from critiquebench.runtime.project import DEFAULT_TARGET


@dataclass(frozen=True)
class ReportFiles:
    """The report and where its files were written."""

    report: RunReport
    json: Root
    html: Root
    lessons: Root
    project_lessons: Root  # <output>/LESSONS.md, accumulated over every run reported


def write_reports(
    output: Root,
    run_id: str,
    *,
    prices: PriceTable | None = None,
    target: float = DEFAULT_TARGET,
    tables: duckdb.DuckDBPyConnection | None = None,
) -> ReportFiles:
    """Build the report of ``output/run_id`` and write report.json, report.html, lessons.md,
    then record the run in the project lessons ``output/LESSONS.md`` (idempotently).

    ``tables`` is the run's tables already open (see ``connect(..., snapshot=True)``);
    without it only this run's files are read, once. Raises ValueError when the run
    has no results at all.
    """
    tables = tables or connect(output, [run_id], snapshot=True)
    report = build_report(tables, run_id, prices=prices, target=target)
    return write_report_files(output, report, tables=tables)


def write_report_files(
    output: Root,
    report: RunReport,
    *,
    tables: duckdb.DuckDBPyConnection | None = None,
    units: UnitsPage | None = None,
) -> ReportFiles:
    """Write the files of ``report``, built already (see ``write_reports``), into its run's
    folder under ``output``, with the units table's stories in ``report_units/``.

    ``units`` is that table if built already (``units_page``, ``write_units_stories``),
    else it is built from ``tables`` (the run's tables open, as for ``write_reports``)
    or the run's files, its stories written as they are made.
    Raises ValueError when the run has no results at all."""
    run_id = report.run_id
    if not report.arms and not report.failed_units:
        raise ValueError(f"no results for run {run_id!r} under {output}")
    store = ResultStore(output)
    if units is None:
        units = write_units_stories(output, run_id, tables)
    write_units_page(output, run_id, units)
    return ReportFiles(
        report=report,
        json=store.write_text(run_id, REPORT_JSON, report.to_json()),
        html=store.write_text(run_id, "report.html", html_report(report, units)),
        lessons=store.write_text(run_id, "lessons.md", lessons_markdown(report)),
        project_lessons=update_project_lessons(output, report),
    )


def render_html_report(
    output: Root, run_id: str, *, prices: PriceTable | None = None, target: float = DEFAULT_TARGET
) -> Root:
    """Write the report files of a run and return the path of its ``report.html``.

    Without ``prices`` every model is priced at 0, and the page says so.
    """
    return write_reports(output, run_id, prices=prices, target=target).html
