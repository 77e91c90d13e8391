"""Renderings of a :class:`~critiquebench.analysis.report.RunReport`: the terminal
tables and verdict lines, Markdown (``report.md``, ``lessons.md``), the self-contained
HTML page with its charts (template in ``templates/``), the project's lessons file,
the files a run writes (``write_reports``), and the transcript viewer.

Charts and the page load vl-convert and Jinja2; each name is imported on first use,
so printing a verdict loads neither.
"""

from typing import TYPE_CHECKING

from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.analysis.render._charts import (
        Figure,
        figure_svg,
        vega_bundle,
    )
    from critiquebench.analysis.render._figures import (
        report_figures,
    )
    from critiquebench.analysis.render._format import (
        inert,
        markdown_code,
    )
    from critiquebench.analysis.render._html import (
        html_report,
    )
    from critiquebench.analysis.render._lessons import (
        lessons_markdown,
    )
    from critiquebench.analysis.render._outputs import (
        ReportFiles,
        render_html_report,
        write_report_files,
        write_reports,
    )
    from critiquebench.analysis.render._project_lessons import (
        LESSONS_FILE,
        project_lessons_markdown,
        update_project_lessons,
    )
    from critiquebench.analysis.render._terminal import (
        artifact_rows,
        comparison_table,
        report_markdown,
        summary_table,
        verdict_lines,
    )
    from critiquebench.analysis.render._transcript_view import (
        StoryError,
        UnitStory,
        load_stories,
        render_side_by_side,
        render_story,
        render_units,
        unit_list,
    )
    from critiquebench.analysis.render._units_page import (
        UNITS_FOLDER,
        UnitRow,
        UnitsPage,
        story_html,
        units_page,
        write_units_page,
        write_units_stories,
    )
    from critiquebench.analysis.render._withheld import (
        not_measured_lines,
        sensitivity_lines,
    )

_LAZY = {
    **dict.fromkeys(
        (
            "Figure",
            "figure_svg",
            "vega_bundle",
        ),
        "_charts",
    ),
    **dict.fromkeys(("report_figures",), "_figures"),
    **dict.fromkeys(
        (
            "inert",
            "markdown_code",
        ),
        "_format",
    ),
    **dict.fromkeys(("html_report",), "_html"),
    **dict.fromkeys(("lessons_markdown",), "_lessons"),
    **dict.fromkeys(
        (
            "ReportFiles",
            "render_html_report",
            "write_report_files",
            "write_reports",
        ),
        "_outputs",
    ),
    **dict.fromkeys(
        (
            "LESSONS_FILE",
            "project_lessons_markdown",
            "update_project_lessons",
        ),
        "_project_lessons",
    ),
    **dict.fromkeys(
        (
            "artifact_rows",
            "comparison_table",
            "report_markdown",
            "summary_table",
            "verdict_lines",
        ),
        "_terminal",
    ),
    **dict.fromkeys(
        (
            "StoryError",
            "UnitStory",
            "load_stories",
            "render_side_by_side",
            "render_story",
            "render_units",
            "unit_list",
        ),
        "_transcript_view",
    ),
    **dict.fromkeys(
        (
            "UNITS_FOLDER",
            "UnitRow",
            "UnitsPage",
            "story_html",
            "units_page",
            "write_units_page",
            "write_units_stories",
        ),
        "_units_page",
    ),
    **dict.fromkeys(
        (
            "not_measured_lines",
            "sensitivity_lines",
        ),
        "_withheld",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "LESSONS_FILE",
    "UNITS_FOLDER",
    "Figure",
    "ReportFiles",
    "StoryError",
    "UnitRow",
    "UnitStory",
    "UnitsPage",
    "artifact_rows",
    "comparison_table",
    "figure_svg",
    "html_report",
    "inert",
    "lessons_markdown",
    "load_stories",
    "markdown_code",
    "not_measured_lines",
    "project_lessons_markdown",
    "render_html_report",
    "render_side_by_side",
    "render_story",
    "render_units",
    "report_figures",
    "report_markdown",
    "sensitivity_lines",
    "story_html",
    "summary_table",
    "unit_list",
    "units_page",
    "update_project_lessons",
    "vega_bundle",
    "verdict_lines",
    "write_report_files",
    "write_reports",
    "write_units_page",
    "write_units_stories",
]
