"""A run's rows read as its units land, in chunks, for the check that follows a run.

A unit is finished once its ``cases`` file exists: the store writes it last, after
the unit's ``attempts`` and ``calls`` files, each by an atomic rename. So a unit's
three files are read together once its ``cases`` file is there, and files without
one (a unit still running, or an orphan) are left for the end. Every file read is
remembered with its identity (inode, size, mtime): at the end a file that is gone
or was replaced since (a resumed run moves a retried unit's rows to
``superseded/``) voids the chunk that read it, and that chunk's other files are
read again with the files that landed last. The tables come out of DuckDB as
``connect(..., snapshot=True)`` makes them (``define_tables``), so the rows are the
ones a scan of the whole run gives.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from critiquebench.analysis._views import define_tables, table_files
from critiquebench.pipeline import TABLES

FileId = tuple[int, int, int]
"""A file's inode, size and modification time (ns): it changes when the file is replaced."""
_UNIT_TABLES = ("cases", "attempts", "calls")


def file_id(path: Path) -> FileId | None:
    """The identity of ``path``, None when it is gone."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


@dataclass(frozen=True)
class Chunk:
    """Rows read in one go: the files (as they were when read) and each table's rows."""

    files: dict[Path, FileId]
    tables: dict[str, pa.Table]

    def unchanged(self, now: dict[Path, FileId]) -> bool:
        """Every file of the chunk is still there, as it was read."""
        return all(now.get(path) == identity for path, identity in self.files.items())


def one_thread() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB on one thread: the tables are a few MiB, and each thread would
    hold buffers of its own in the check's child, which must stay small."""
    return duckdb.connect(config={"threads": 1})


def read_chunk(files: dict[str, list[Path]]) -> Chunk:
    """The rows of ``files`` (by table), as DuckDB's snapshot of them reads them."""
    # Identities first: a file replaced between the look and the read then reads as
    # changed at the end, and is read again.
    identities = {path: file_id(path) for listing in files.values() for path in listing}
    present = {path: identity for path, identity in identities.items() if identity is not None}
    listing = {table: [p for p in files.get(table, []) if p in present] for table in TABLES}
    connection = one_thread()
    try:
        define_tables(connection, listing, "TABLE", tuple(TABLES))
        tables = {t: connection.sql(f"SELECT * FROM {t}").to_arrow_table() for t in TABLES}
    finally:
        connection.close()
    return Chunk(present, tables)


def _errored(cases_file: Path) -> bool:
    """Whether a unit's cases row records an error: a resume runs such a unit again and
    moves its files away, so they are read at the end, not now."""
    try:
        errors = pq.read_table(cases_file, columns=["error"]).column("error")
    except (OSError, KeyError, pa.ArrowInvalid):
        return True  # unreadable now: the end reads it (and says why if it still fails)
    return bool(errors.null_count != len(errors))


def landed_files(run_dir: Path, seen: set[Path]) -> dict[str, list[Path]]:
    """Files not in ``seen`` of the units finished without an error, and the run's
    ``runs`` files, by table (sorted, as ``table_files`` lists them)."""
    found: dict[str, list[Path]] = {table: [] for table in TABLES}
    found["runs"] = sorted(p for p in (run_dir / "runs").glob("*.parquet") if p not in seen)
    for cases_file in sorted((run_dir / "cases").glob("*.parquet")):
        if cases_file in seen or _errored(cases_file):
            continue
        for table in _UNIT_TABLES:
            path = run_dir / table / cases_file.name
            if path not in seen and (table == "cases" or path.exists()):
                found[table].append(path)
    return found


def final_files(output: Path, run_id: str) -> tuple[dict[str, list[Path]], dict[Path, FileId]]:
    """Every file of the run now (``table_files``), and the identity of each (a run
    followed as it lands is in a local folder: see ``quality._isolated.follow``)."""
    listed = table_files(output, [run_id])
    files = {t: [p for p in ps if isinstance(p, Path)] for t, ps in listed.items()}
    identities = {p: i for ps in files.values() for p in ps if (i := file_id(p)) is not None}
    return files, identities


def base_tables(chunks: list[Chunk]) -> dict[str, pa.Table] | None:
    """Each table's rows of ``chunks`` together; None when their columns differ (files
    of several schema versions: only a scan of them all unites their columns as
    ``connect`` does)."""
    try:
        return {
            table: pa.concat_tables([chunk.tables[table] for chunk in chunks]) for table in TABLES
        }
    except pa.ArrowInvalid:
        return None


def size_of(files: dict[str, list[Path]]) -> int:
    """How many files ``files`` lists."""
    return sum(len(listing) for listing in files.values())


def exists(run_dir: Path) -> bool:
    """Whether the run's folder is there yet (the check's child starts before the run)."""
    return os.path.isdir(run_dir)
