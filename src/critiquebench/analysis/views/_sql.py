"""Ad-hoc SQL over the DuckDB views, for the ``critiquebench sql`` command."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import duckdb
from rich.table import Table
from rich.text import Text

from critiquebench.analysis.views._views import read_only_connection, tables_read_by, views_sql
from critiquebench.pipeline import Root

EXAMPLE = "SELECT arm, count(*) AS units, avg(defects_final) AS defects FROM cases GROUP BY arm"


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def query_table(
    output: Root, query: str, *, max_rows: int = 100, runs: Sequence[str] | None = None
) -> tuple[Table, str]:
    """Run ``query`` over the tables ``runs``, ``cases``, ``attempts``, ``calls`` (and the
    views ``findings``, ``defects_by_kind``, ``trigger_decisions``) of ``output``: of the runs
    named in ``runs`` only, or of every run there.

    Returns the first ``max_rows`` rows as a rich table whose cells and headers are
    literal text (a value like ``x[0]`` is not rich markup), and a line saying how
    many rows there were or that some were left out. The query runs on a read-only
    copy with no file or network access (see :func:`read_only_connection`); a bad
    or refused query raises ``duckdb.Error`` with DuckDB's message.
    """
    with read_only_connection(output, runs, tables_read_by(query)) as connection:
        statements = connection.extract_statements(query)
        if len(statements) != 1:
            # A second statement could shadow a table with a TEMP view of the same
            # name and then show made-up rows as if they were the run's.
            raise duckdb.InvalidInputException(
                f"give exactly one SQL statement, not {len(statements)}"
            )
        cursor = connection.execute(query)
        columns = [column[0] for column in cursor.description or []]
        # One row past the limit tells whether there are more, without fetching them all.
        rows = cursor.fetchmany(max_rows + 1)
    shown = rows[:max_rows]
    table = Table()
    for index, name in enumerate(columns):
        values = [row[index] for row in shown if row[index] is not None]
        numeric = bool(values) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values
        )
        table.add_column(Text(name), justify="right" if numeric else "left", overflow="fold")
    for row in shown:
        table.add_row(*(Text(_cell(value)) for value in row))
    if len(rows) > max_rows:
        return table, f"first {max_rows} rows shown; raise --max-rows to see more"
    return table, f"{len(rows)} row(s)"


def interactive_help(output: Root, runs: Sequence[str] | None = None) -> str:
    """How to query the views interactively: a Python session, or the duckdb CLI."""
    # Double quotes inside, so shlex.quote can wrap it all in single quotes cleanly.
    selected = "" if runs is None else f", {json.dumps(list(runs))}"
    setup = (
        "from pathlib import Path; from critiquebench.analysis import connect; "
        f"db = connect(Path({json.dumps(str(output.resolve()))}){selected})"
    )
    only = "" if runs is None else "".join(f" --run {shlex.quote(run)}" for run in runs)
    python = f"{shlex.quote(sys.executable)} -i -c {shlex.quote(setup)}"
    return "\n".join(
        [
            "No query given. Run one with:",
            f'  critiquebench sql "{EXAMPLE}" --output {shlex.quote(str(output))}{only}',
            "",
            "Or open an interactive Python session with the views loaded:",
            f"  {python}",
            f'  >>> db.sql("{EXAMPLE}").show()',
            "",
            "Or, in the duckdb CLI, create the same views with:",
            views_sql(output, runs),
        ]
    )
