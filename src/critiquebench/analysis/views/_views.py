"""The one way to reach results: the Parquet tables of runs as DuckDB views or tables.

Every reader goes through here: the report, the data-quality checks, the ``sql``
command and the notebook. A reader names the runs it needs and only their files are
listed and opened, so the cost of opening a run does not grow with the number of
runs stored beside it.
"""

from __future__ import annotations

import re
import secrets
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa

from critiquebench.analysis.views._canary import VIEWS as CANARY_VIEWS
from critiquebench.analysis.views._critic_accuracy import VIEWS as CRITIC_VIEWS
from critiquebench.analysis.views._fix_break import VIEWS as ROUND_VIEWS
from critiquebench.analysis.views._kind_views import VIEWS as KIND_VIEWS
from critiquebench.loop import RENAMED_HALTS
from critiquebench.pipeline import (
    LEGACY_COLUMNS,
    SCHEMA_VERSION,
    SIDE_TABLES,
    TABLES,
    Root,
    arrow_schema,
    is_remote,
    live_files,
    parquet_files,
    read_parquet_files,
    store_root,
)

READABLE_TABLES: tuple[str, ...] = (*TABLES, *SIDE_TABLES)
"""The measured tables and the side tables (transcripts): what a user's query reads."""

Kind = Literal["VIEW", "TABLE"]


def sql_literal(text: str) -> str:
    """``text`` as a SQL string literal (single quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


_DUCKDB_TYPES = {
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
    pa.string(): "VARCHAR",
}
_TIMESTAMP = pa.timestamp("us", tz="UTC")


def _empty_source(table: str) -> str:
    """A query giving ``table``'s columns, typed as DuckDB reads its Arrow schema, and no rows.

    Plain SQL rather than an empty Arrow table registered with DuckDB: DuckDB imports
    pandas when it is handed any Python object, and a ``sql`` query leaves every table
    it does not read empty. Measured gain: ``import pandas`` (0.5 CPU-s) per ``sql``
    command; one query of ``cases`` took 1.84 -> 1.37 CPU-s on a 328-unit run and
    4.31 -> 3.36 on a 3,280-unit one (medians of 3 interleaved pairs, load 19-23).
    """
    types = {**_DUCKDB_TYPES, _TIMESTAMP: "TIMESTAMP WITH TIME ZONE"}
    columns = ", ".join(
        f'CAST(NULL AS {types[field.type]}) AS "{field.name}"' for field in arrow_schema(table)
    )
    return f"(SELECT {columns} LIMIT 0)"


def _with_missing_columns(connection: duckdb.DuckDBPyConnection, table: str, source: str) -> str:
    """``source`` plus typed NULL columns for what files of an older schema lack.

    Runs written before a column existed (say ``defects_total_final``, schema v3)
    still answer every query; the column reads as NULL for them.
    """
    present = {row[0] for row in connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    columns = {**TABLES, **SIDE_TABLES}[table]
    missing = [
        f"CAST(NULL AS {_DUCKDB_TYPES.get(c.type, 'VARCHAR')}) AS {c.name}"
        for c in columns
        if c.name not in present and c.type in _DUCKDB_TYPES
    ]
    types = {c.name: _DUCKDB_TYPES.get(c.type, "VARCHAR") for c in columns}
    missing += [
        f"CAST(NULL AS {types[new]}) AS {old}"
        for old, new in LEGACY_COLUMNS.get(table, {}).items()
        if old not in present
    ]
    if not missing:
        return source
    return f"(SELECT *, {', '.join(missing)} FROM {source})"


def _in_current_names(table: str, source: str) -> str:
    """``source`` (every column present, old names too) with the columns a later schema
    renamed (``LEGACY_COLUMNS``, e.g. calls' tokens in v9) filled from the old name in
    older rows, and the old names kept as aliases of the new, so old queries still run."""
    renamed = LEGACY_COLUMNS.get(table)
    if not renamed:
        return source
    filled = ", ".join(f"coalesce({new}, {old}) AS {new}" for old, new in renamed.items())
    aliases = ", ".join(f"coalesce({new}, {old}) AS {old}" for old, new in renamed.items())
    return f"(SELECT * EXCLUDE ({', '.join(renamed)}) REPLACE ({filled}), {aliases} FROM {source})"


def _cases_in_current_words(source: str) -> str:
    """``source`` (the ``cases`` rows, every column present) with older rows in this
    version's words (schema v8): ``passed`` means no measured defect of any kind,
    ``tests_passed`` that every check passes, and halt reasons say what happened.

    A row written before v8 has no ``tests_passed``: its ``passed`` was the test-only
    flag, so it becomes ``tests_passed`` and ``passed`` is derived from the measured
    total (``defects_final`` before v3, when tests were all that was measured). The
    old halt names (``RENAMED_HALTS``) are never written now, so they map on any row.
    """
    halts = " ".join(
        f"WHEN {sql_literal(old)} THEN {sql_literal(new)}" for old, new in RENAMED_HALTS.items()
    )
    return f"""(SELECT * REPLACE (
        CASE WHEN tests_passed IS NOT NULL THEN passed
             ELSE error IS NULL AND coalesce(defects_total_final, defects_final) = 0 END AS passed,
        coalesce(tests_passed, passed) AS tests_passed,
        CASE halt_reason {halts} ELSE halt_reason END AS halt_reason
    ) FROM {source})"""


_FINDING = '[{"file": "VARCHAR", "line": "INTEGER", "code": "VARCHAR", "message": "VARCHAR"}]'
FINDINGS_VIEW = " UNION ALL ".join(
    f"""SELECT run_id, case_id, arm, rep, iteration, '{kind}' AS kind,
       f.file, f.line, f.code, f.message
FROM attempts,
     unnest(from_json(coalesce(nullif({kind}_findings, ''), '[]'), '{_FINDING}')) AS t(f)"""
    for kind in ("lint", "types")
)
"""One row per lint or type finding of every attempt (the view ``findings``)."""


def run_folders(output: Root, runs: Sequence[str] | None = None) -> list[Root]:
    """The folders of ``runs`` under ``output``, or of every run there when ``runs`` is None."""
    output = store_root(output)
    if runs is not None:
        return [output / run for run in runs]
    if not output.is_dir():
        return []
    return sorted((path for path in output.iterdir() if path.is_dir()), key=str)


def table_files(
    output: Root, runs: Sequence[str] | None = None, tables: Sequence[str] = tuple(TABLES)
) -> dict[str, list[Root]]:
    """The Parquet files of each of ``tables`` (default: the measured ones), of ``runs``
    only (None: every run under ``output``).

    Only the folders of the runs named are listed: nothing else under ``output`` is read.
    A run's files are those that hold its rows (``live_files``): its units' own files
    (runs of earlier versions), its batches' and its compacted parts.
    """
    listed = [live_files(folder, tables) for folder in run_folders(output, runs)]
    return {table: [path for files in listed for path in files[table]] for table in tables}


def latest_run(output: Root) -> str | None:
    """The run under ``output`` started last (by its runs rows, not its name), or None.

    Reads the small ``runs`` table of each run and nothing else.
    """
    files = [path for folder in run_folders(output) for path in parquet_files(folder / "runs")]
    if not files:
        return None
    connection = duckdb.connect()
    define_tables(connection, {"runs": files}, "VIEW", ("runs",))
    row = connection.execute(
        "SELECT run_id FROM runs ORDER BY invocation_started_at DESC, run_id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else str(row[0])


def define_tables(
    connection: duckdb.DuckDBPyConnection,
    files: Mapping[str, Sequence[Root]],
    kind: Kind = "VIEW",
    tables: Sequence[str] = tuple(TABLES),
) -> None:
    """Create ``tables`` over ``files`` as views, or as tables copied in one scan, and
    the view ``findings`` (one row per lint or type finding) over ``attempts``, and
    ``defects_by_kind``, ``trigger_decisions``, ``canaries`` and ``critic_accuracy``
    over ``cases`` and ``attempts``
    (see ``analysis/views/_kind_views.py``), and ``fix_break`` over those and ``calls``
    (``analysis/views/_fix_break.py``).

    A table with no files gets the right columns and no rows, so queries never fail
    just because nothing has been written. An existing view or table of the same
    kind and name is replaced (how a snapshot picks up a newly written ``runs`` row).
    """
    if kind == "TABLE":
        # A run is thousands of one-unit files; copying them on DuckDB's default thread
        # count held reader buffers per thread (+490 MiB for a 984-unit run, +160 MiB
        # on one thread) and took more CPU. The copy is I/O bound: one thread it is.
        row = connection.execute("SELECT current_setting('threads')").fetchone()
        connection.execute("SET threads = 1")
        try:
            _define(connection, files, kind, tables)
        finally:
            connection.execute(f"SET threads = {row[0] if row else 1}")
    else:
        _define(connection, files, kind, tables)


def _define(
    connection: duckdb.DuckDBPyConnection,
    files: Mapping[str, Sequence[Root]],
    kind: Kind,
    tables: Sequence[str],
) -> None:
    uniform = False  # known only once the runs table is copied (it comes first)
    for table in tables:
        listing = files.get(table, [])
        if listing and any(is_remote(path) for path in listing):
            _define_remote(connection, kind, table, listing)
            continue
        if not listing:
            _create(connection, kind, table, _empty_source(table))
            continue
        paths = ", ".join(sql_literal(str(path)) for path in listing)
        try:
            _create(
                connection, kind, table, f"read_parquet([{paths}], union_by_name = {not uniform})"
            )
        except duckdb.Error:
            if not uniform:
                raise
            # A file of another schema after all: unite the files' columns by name.
            _create(connection, kind, table, f"read_parquet([{paths}], union_by_name = true)")
        uniform = uniform or (table == "runs" and kind == "TABLE" and _one_schema(connection))
    if "attempts" in tables:
        connection.execute(f"CREATE OR REPLACE VIEW findings AS {FINDINGS_VIEW}")
    if "attempts" in tables and "cases" in tables:
        for name, query in {**KIND_VIEWS, **CANARY_VIEWS, **CRITIC_VIEWS}.items():
            connection.execute(f"CREATE OR REPLACE VIEW {name} AS {query}")
    if {"attempts", "cases", "calls"} <= set(tables):
        for name, query in ROUND_VIEWS.items():
            connection.execute(f"CREATE OR REPLACE VIEW {name} AS {query}")


def _define_remote(
    connection: duckdb.DuckDBPyConnection, kind: Kind, table: str, listing: Sequence[Root]
) -> None:
    """``table`` over files on an object store, read by pyarrow and scanned by DuckDB
    as Arrow: this schema's columns, a column an older file lacks read as null."""
    dataset = read_parquet_files(listing, arrow_schema(table))
    name = f"_{table}_store"
    connection.register(name, dataset)
    _create(connection, kind, table, name)
    if kind == "TABLE":
        connection.unregister(name)


def _create(connection: duckdb.DuckDBPyConnection, kind: Kind, table: str, source: str) -> None:
    source = _in_current_names(table, _with_missing_columns(connection, table, source))
    if table == "cases":
        source = _cases_in_current_words(source)
    connection.execute(f"CREATE OR REPLACE {kind} {table} AS SELECT * FROM {source}")


def _one_schema(connection: duckdb.DuckDBPyConnection) -> bool:
    """Whether every start of the runs just copied wrote this version's schema.

    Then every unit file has the same columns, and DuckDB need not read the footer
    of each of thousands of files to unite their schemas by name (``union_by_name``),
    which for a 984-unit run took a third of the copy's CPU and ~100 MiB. A start
    writes its runs row before any unit, with the schema version its files have.
    """
    # fetchall: a fetchone leaves the result open, and this DuckDB then refuses the
    # next statement on the connection (registering an empty table's columns, say).
    rows = connection.execute(
        "SELECT count(*) > 0 AND min(schema_version) = max(schema_version) "
        f"AND min(schema_version) = {SCHEMA_VERSION} FROM runs"
    ).fetchall()
    return bool(rows and rows[0][0])


COPY_MEMORY = "64MB"
"""What the ``sql`` command's DuckDB may hold while it copies a run's tables into its
private database file (``read_only_connection``). Measured (``SELECT count(*) FROM
cases``, 3 interleaved pairs, load 18-21): a 98,400-unit run's query peaked at 197
instead of 380 MiB (128MB: 261) for 2.05 instead of 1.60 CPU-s; a 3,280-unit run's at
145 MiB either way, 0.92 against 0.87 CPU-s."""

SNAPSHOT_MEMORY = "256MB"
"""What a snapshot's DuckDB may hold in memory (its tables and its queries' work):
past it, DuckDB moves blocks to a temporary folder it removes when closed, so a
reader's memory stops growing with the run (a snapshot had held every row of cases,
attempts and calls in memory). Measured with the report's other changes (``report``
of simulated runs, 2 shared cores at load 12-14): peak 359 -> 314 MiB at 3,280
units, 1,177 -> 527 MiB at 32,800, 649 MiB at 98,400 (the memory the two DuckDB
connections of a report may hold is bounded; what grows is a small row per unit)."""


def spilling_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that keeps ``SNAPSHOT_MEMORY`` and spills the rest to a
    folder of its own under the system's temporary folder (DuckDB's default is
    ``.tmp`` in the working folder), which it deletes when closed."""
    folder = Path(tempfile.gettempdir()) / f"critiquebench-duckdb-{secrets.token_hex(6)}"
    # Left for DuckDB to create: a folder it created is one it deletes again. No
    # progress bar: a long query of a large run would draw one over the command's output.
    connection = duckdb.connect(
        config={"memory_limit": SNAPSHOT_MEMORY, "temp_directory": str(folder)}
    )
    connection.execute("SET enable_progress_bar = false")
    return connection


def connect(
    output: Root, runs: Sequence[str] | None = None, *, snapshot: bool = False
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with ``runs``, ``cases``, ``attempts``, ``calls`` of ``runs``
    (and, unless a snapshot, the side table ``transcripts``).

    ``runs`` None means every run under ``output`` (ad-hoc SQL across runs). Views
    (the default) read the files again at every query and so see rows written since;
    ``snapshot=True`` copies the tables in once, which is what a reader that asks many
    questions of a finished run wants (the report, the quality checks): one scan of
    the run's files instead of one per query. Measured gain: the units page's stories,
    read from one scan per table (the report's snapshot, transcripts read once), took
    5.6 s for a 984-unit run on a loaded machine against 27 s through the views (2dcc0dd).

    The connection is unrestricted; for queries typed by a user, use
    :func:`read_only_connection`.
    """
    connection = spilling_connection() if snapshot else duckdb.connect()
    # A snapshot is for the measuring readers: the transcripts stay on disk for them.
    tables = tuple(TABLES) if snapshot else READABLE_TABLES
    files = table_files(output, runs, tables)
    define_tables(connection, files, "TABLE" if snapshot else "VIEW", tables)
    return connection


def reload_table(
    connection: duckdb.DuckDBPyConnection, output: Root, runs: Sequence[str], table: str
) -> None:
    """Copy one table of ``runs`` into a snapshot again (e.g. ``runs`` after a status change)."""
    define_tables(connection, {table: table_files(output, runs)[table]}, "TABLE", (table,))


def tables_read_by(query: str) -> tuple[str, ...]:
    """The tables ``query`` can read: those it names and those under the views it names.

    A name anywhere in the text counts (in a string or a comment too), so a table read
    is never left out; copying one more than needed costs only time. ``runs`` always:
    it is small, and it tells whether every file has this version's columns (then
    the others are copied without uniting their schemas, see ``_one_schema``).
    """
    words = {word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query)}
    needed = {"runs"} | {table for table in READABLE_TABLES if table in words}
    if "findings" in words:
        needed.add("attempts")
    if words & {*KIND_VIEWS, *CANARY_VIEWS}:
        needed |= {"attempts", "cases"}
    if words & set(ROUND_VIEWS):
        needed |= {"attempts", "cases", "calls"}
    return tuple(table for table in READABLE_TABLES if table in needed)


@contextmanager
def read_only_connection(
    output: Root, runs: Sequence[str] | None = None, tables: Sequence[str] = READABLE_TABLES
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB holding a copy of the tables of ``runs`` that a query cannot escape.

    The tables are copied into a private database file that is then reopened
    read-only, so ``DROP``/``CREATE``/``INSERT`` fail. External access is then
    switched off and the configuration locked, so ``COPY ... TO``, ``ATTACH``,
    ``read_csv``, ``INSTALL``/``LOAD`` and URLs fail too. The data is copied rather
    than left as views because DuckDB checks file access when a view is read, and
    allowing the run's Parquet files (``allowed_paths``) would also let a query
    overwrite them.

    Only ``tables`` are copied (e.g. ``tables_read_by(query)``): the others, and the
    views over them, are there with their columns and no rows. Copying every table
    for a query of one took most of an ``sql`` command's time: a query of ``cases`` on a
    328-unit run no longer copies attempts, calls and transcripts, 62% of the run's
    bytes (b1aa403).
    """
    with tempfile.TemporaryDirectory(prefix="critiquebench-sql-") as folder:
        path = Path(folder) / "results.duckdb"
        # The copy streams into the file: DuckDB needs little memory for it, and would
        # otherwise keep what it wrote cached up to its default (80% of the RAM).
        writer = duckdb.connect(str(path), config={"memory_limit": COPY_MEMORY})
        try:
            copied = table_files(output, runs, tables)
            files = {table: copied.get(table, []) for table in READABLE_TABLES}
            define_tables(writer, files, "TABLE", READABLE_TABLES)
        finally:
            writer.close()
        connection = duckdb.connect(str(path), read_only=True)
        try:
            connection.execute("SET enable_external_access = false")
            connection.execute("SET lock_configuration = true")
            yield connection
        finally:
            connection.close()


def _holds_others(folder: Root, counted: Sequence[Root]) -> bool:
    """Whether ``folder`` holds Parquet files other than those in ``counted``."""
    return len(parquet_files(folder)) != sum(1 for path in counted if path.parent == folder)


def views_sql(output: Root, runs: Sequence[str] | None = None) -> str:
    """``CREATE VIEW`` statements that give the duckdb CLI the same views as :func:`connect`.

    A glob per table keeps the statements short; a table with no files yet gets a
    comment instead, since DuckDB refuses a glob that matches nothing. Runs on an
    object store get a comment too: the duckdb CLI reads them only with its httpfs
    extension, which it downloads; the Python session reads them without.
    """
    if not isinstance(output, Path):
        return (
            f"-- the runs are on an object store ({output}): the duckdb CLI reads them with "
            "its httpfs extension (INSTALL httpfs; it is downloaded); the Python session "
            "above reads them without it"
        )
    root = output.resolve()
    files = table_files(root, runs, READABLE_TABLES)
    lines = []
    for table in READABLE_TABLES:
        if not files[table]:
            lines.append(f"-- no {table} files yet under {root}")
            continue
        folders = sorted({path.parent for path in files[table]})
        if any(_holds_others(folder, files[table]) for folder in folders):
            # Files that do not count (a batch being written, one a compaction replaced):
            # a glob would read them, so the files are named.
            patterns = "[" + ", ".join(sql_literal(str(path)) for path in files[table]) + "]"
        elif runs is None:
            patterns = sql_literal(f"{root}/*/{table}/*.parquet")
        else:  # one glob per run that has files of this table
            patterns = "[" + ", ".join(sql_literal(f"{f}/*.parquet") for f in folders) + "]"
        source = f"read_parquet({patterns}, union_by_name = true)"
        if table in LEGACY_COLUMNS:
            with duckdb.connect() as probe:
                source = _in_current_names(table, _with_missing_columns(probe, table, source))
            source = " ".join(source.split())
        if table == "cases":
            # The same words as connect's views; the columns older files lack are
            # found once, here (a file of another schema written later is not seen).
            with duckdb.connect() as probe:
                source = _cases_in_current_words(_with_missing_columns(probe, table, source))
            source = " ".join(source.split())
        lines.append(f"CREATE VIEW {table} AS SELECT * FROM {source};")
    if files["attempts"]:
        # One line per statement, so the duckdb CLI (and a reader) can take them one by one.
        lines.append(f"CREATE VIEW findings AS {' '.join(FINDINGS_VIEW.split())};")
    if files["attempts"] and files["cases"]:
        for name, query in {**KIND_VIEWS, **CANARY_VIEWS, **CRITIC_VIEWS}.items():
            lines.append(f"CREATE VIEW {name} AS {' '.join(query.split())};")
    if files["attempts"] and files["cases"] and files["calls"]:
        for name, query in ROUND_VIEWS.items():
            lines.append(f"CREATE VIEW {name} AS {' '.join(query.split())};")
    return "\n".join(lines)
