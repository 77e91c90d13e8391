"""Writing and finding results on disk; every write is atomic."""

from __future__ import annotations

import functools
import importlib.abc
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from critiquebench.pipeline._layout import (
    UNIT_TABLES,
    batch_file_name,
    is_batch_file,
    live_files,
    new_batch_prefix,
    unit_key,
)
from critiquebench.pipeline._location import Root, parquet_files, put_bytes, read_parquet
from critiquebench.pipeline._schema import arrow_schema

if TYPE_CHECKING:  # _units imports the loop (LangGraph); the store only reads these
    from critiquebench.pipeline._unit import Unit
    from critiquebench.pipeline._units import UnitRows


def _atomic_write_bytes(path: Path, data: bytes | memoryview) -> None:
    """Write ``data`` via a temporary file in the same folder, then rename over ``path``.

    A crash mid-write leaves at most a stray temporary file, never a torn table file.
    The file ends with the mode any new file gets (0666 less the umask): mkstemp's
    owner-only 0600 would survive the rename and lock others out of a shared folder.
    The folder is created only when missing: a run writes thousands of files into a
    handful of folders, and asking each time cost a system call per path part.
    """
    try:
        handle, temporary = create_temporary(path)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = create_temporary(path)
    try:
        try:
            view = memoryview(data)
            while view:  # a write may take only part of the bytes
                view = view[os.write(handle, view) :]
        finally:
            os.close(handle)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_bytes_atomically(path: Root, data: bytes | memoryview) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never
    part of it: renamed into place on a disk, one PUT on an object store."""
    if isinstance(path, Path):
        _atomic_write_bytes(path, data)
    else:
        put_bytes(path, data)


def atomic_write_text(path: Root, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: readers see the old or the new file."""
    write_bytes_atomically(path, text.encode("utf-8"))


def create_temporary(path: Path) -> tuple[int, str]:
    """A new, empty file beside ``path``, created 0666 so the kernel applies the umask,
    and a descriptor open for writing it; FileNotFoundError when the folder is missing."""
    while True:
        candidate = path.parent / f".{path.name}.{secrets.token_hex(6)}"
        try:
            handle = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        return handle, str(candidate)


_SMALL_FILE_OPTIONS: dict[str, Any] = {
    "compression": "none",
    "use_dictionary": False,
    "write_statistics": False,
}
"""A unit's file holds a few rows: compression, dictionaries and column statistics only
add bytes and CPU to it (a third of the writer's time), and DuckDB reads it the same."""


class _PandasNotHere(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, *_: Any) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("not for pyarrow's first look", name="pandas")


@functools.cache
def arrow_without_pandas() -> None:
    """Keep pandas out of the run's process.

    pyarrow looks for pandas the first time it converts Python values, and imports it
    when installed: 0.4 s and 56 MiB the run never uses (its rows are plain Python;
    6bd589d).
    It looks once and remembers the answer, so that first look is answered "not
    installed". Whoever asks for pandas later still gets it: a conversion that needs
    pandas (``to_pandas``) makes pyarrow look again, and ``import pandas`` works.
    """
    finder = _PandasNotHere()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(finder)


_TEXT_FILE_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "use_dictionary": False,
    "write_statistics": False,
}
"""A transcript is mostly prompts that repeat the task and the previous answer: zstd
stores a unit's in about a fifth of its characters."""


def write_table(path: Root, table: str, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` as a Parquet file of ``table``'s schema (validated by Arrow)."""
    arrow_without_pandas()
    data = pa.Table.from_pylist(rows, schema=arrow_schema(table))
    # Built in memory and written with one system call: handing pyarrow a path costs
    # more CPU (resolving a filesystem, opening the file again) than the small file.
    sink = pa.BufferOutputStream()
    options = _TEXT_FILE_OPTIONS if table == "transcripts" else _SMALL_FILE_OPTIONS
    pq.write_table(data, sink, **options)
    write_bytes_atomically(path, memoryview(sink.getvalue()))


class ResultStore:
    """The folder (or object-store prefix) that holds every run (default ``data/runs``)."""

    def __init__(self, root: Root) -> None:
        self.root = root

    def run_dir(self, run_id: str) -> Root:
        """Folder of one run."""
        return self.root / run_id

    def table_dir(self, run_id: str, table: str) -> Root:
        """Folder of one table of one run."""
        return self.run_dir(run_id) / table

    def write_unit(self, run_id: str, unit: Unit, rows: UnitRows) -> None:
        """Persist one unit at once: a batch of one (see ``write_units``)."""
        self.write_units(run_id, new_batch_prefix(), [(unit, rows)])

    def write_units(self, run_id: str, prefix: str, units: list[tuple[Unit, UnitRows]]) -> str:
        """Persist a batch of units as one file per table, named after ``prefix`` and the
        count (see ``pipeline/_layout.py``); returns the file name.

        The cases file goes last and marks every unit of the batch as written: a crash
        before it leaves the whole batch to run again, never part of a unit. Rows an
        earlier start wrote for a unit being retried are set aside when that start
        begins (``supersede``), so the tables keep one row per unit.
        """
        name = batch_file_name(prefix, len(units))
        for table in ("attempts", "calls", "transcripts"):
            rows = [row for _, unit_rows in units for row in getattr(unit_rows, table)]
            write_table(self.table_dir(run_id, table) / name, table, rows)
        for unit, unit_rows in units:
            if unit_rows.escalation_record is not None:
                self.write_text(run_id, f"escalations/{unit.key}.md", unit_rows.escalation_record)
        cases = [unit_rows.case for _, unit_rows in units]
        write_table(self.table_dir(run_id, "cases") / name, "cases", cases)
        return name

    def set_aside_unit_files(self, run_id: str, key: str, stamp: str) -> None:
        """Move a unit's own files (the layout of earlier runs) to
        ``superseded/<key>/<stamp>/``; see ``pipeline._compaction.supersede``."""
        # The cases row moves first: should this stop half-way, the unit reads as not
        # written (and is run again), never as done with another start's attempts.
        paths = [self.table_dir(run_id, t) / f"{key}.parquet" for t in UNIT_TABLES]
        paths.append(self.run_dir(run_id) / "escalations" / f"{key}.md")
        archive = self.run_dir(run_id) / "superseded" / key / stamp
        for path in paths:
            if not path.exists():
                continue
            target = archive / f"{path.parent.name}{path.suffix}"
            if isinstance(path, Path) and isinstance(target, Path):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
            else:  # an object store has no rename: copy, then delete the original
                write_bytes_atomically(target, path.read_bytes())
                path.unlink()

    def unit_errors(self, run_id: str) -> dict[str, str | None]:
        """Every unit with a cases row: its key and its ``error`` (None: finished)."""
        found: dict[str, str | None] = {}
        for path in live_files(self.run_dir(run_id), ("cases",))["cases"]:
            if not is_batch_file(path.name):  # one unit's file, named by its key
                errors = read_parquet(path, ["error"]).column("error").to_pylist()
                found[path.stem] = next((e for e in errors if e is not None), None)
                continue
            columns = read_parquet(path, ["case_id", "arm", "rep", "error"]).to_pydict()
            for case_id, arm, rep, error in zip(
                columns["case_id"], columns["arm"], columns["rep"], columns["error"], strict=True
            ):
                found[unit_key(case_id, arm, rep)] = error
        return found

    def finished_units(self, run_id: str) -> set[str]:
        """Keys of units written without an infrastructure error: a resume skips these."""
        return {key for key, error in self.unit_errors(run_id).items() if error is None}

    def run_rows(self, run_id: str) -> list[dict[str, Any]]:
        """Every runs row of the run (one per start), earliest first."""
        folder = self.table_dir(run_id, "runs")
        arrow_without_pandas()  # the report's first conversion, too: 0.5 CPU-s of ~3
        rows = [row for path in parquet_files(folder) for row in read_parquet(path).to_pylist()]
        return sorted(rows, key=lambda row: row["invocation_started_at"])

    def write_run_row(self, run_id: str, invocation: str, row: dict[str, Any]) -> Root:
        """Write (or rewrite) the runs row of one start of the run."""
        path = self.table_dir(run_id, "runs") / f"{invocation}.parquet"
        write_table(path, "runs", [row])
        return path

    def write_text(self, run_id: str, relative: str, text: str) -> Root:
        """Write a text file (report, escalation record) inside the run folder."""
        path = self.run_dir(run_id) / relative
        atomic_write_text(path, text)
        return path
