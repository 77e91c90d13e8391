"""Compacting a run's batch files into one part per table (see ``pipeline/_layout.py``).

A run writes one file per table per batch: a 10,000-unit run thousands of them, and
every reader (report, check, sql) opens each. When a run's units have ended, its batch
files are rewritten as one part per table, and the batches are deleted once the part
stands for them. Readers see the same rows before, during and after (the rule of
``_layout``); a crash at any step leaves the run readable, and the next compaction
finishes the job.

The same rewrite sets aside the rows of units a start is about to retry (``exclude``):
they go to ``superseded/<unit>/<stamp>/<table>.parquet`` and out of the tables.

Only batch and part files are compacted: a unit's own file (runs of earlier versions)
stays as it is, so its columns, whatever schema version wrote them, are never rewritten.

Measured (``bench/scale.py``, 1,312 units of a simulated model on 2 shared cores, two
rounds against a file per unit, load 14-27): files written 5,282 -> 362 (39 left after
the compaction, which took 3-7 s); CPU seconds of ``report`` 12.5/8.3 -> 7.4/5.7,
``check`` 16.7/11.3 -> 12.7/10.1, one ``sql`` query 3.3/2.5 -> 2.0/1.3, the run itself
41/41 -> 24/21 (fewer, larger writes). At 10,168 units (one round, load 5-14):
files 40,960 -> 2,832 written (293 left, compaction 18.6 s); CPU seconds of report
33.6 -> 10.4 (peak 1,016 -> 601 MiB), check 25.2 -> 12.6, sql 8.9 -> 1.9, run 157 -> 101.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from critiquebench.pipeline._layout import (
    COMPACTIONS,
    UNIT_TABLES,
    Manifest,
    RunFiles,
    is_batch_file,
    is_part_file,
    list_run_files,
    manifest_name,
    part_file_name,
    unit_key,
    utc_stamp,
)
from critiquebench.pipeline._location import Root, delete_file, read_parquet
from critiquebench.pipeline._schema import arrow_schema
from critiquebench.pipeline._store import (
    ResultStore,
    arrow_without_pandas,
    atomic_write_text,
    create_temporary,
    write_table,
)

_log = logging.getLogger(__name__)

Identity = tuple[str, str, int]
"""A unit as its rows name it: (case_id, arm, rep)."""

_ROW_GROUP_BYTES = 32 * 1024 * 1024
"""Rows buffered before they are written as one row group: memory stays flat however
many batches a run has (their tables gathered in blocks, below), and row groups stay
large enough to read fast."""

_FILES_PER_BLOCK = 256
"""Tables read from this many batch files are copied into one before more are read.

A batch file's table holds a few rows but costs its own Arrow structures (a schema,
an array and buffers per column) in native memory: a 32 MB row group of ``calls`` is
thousands of batches, and holding them apart took far more memory than their rows.
Measured on copies of a simulated run's batches (16 units each; one process per
compaction, after the run process's pandas-free first conversion): at 99,712 units
(6,232 batches) the peak went 380 -> 244 MiB from 141 at the start (glibc's heap had
held 183 MiB of small tables' bookkeeping while the calls part was buffered; gathering
the cases' unit columns alone took 248 -> 206); at 10,496 units 244 -> 235 MiB."""

_PART_OPTIONS: dict[str, Any] = {"compression": "zstd"}


@dataclass(frozen=True)
class Compacted:
    """What a compaction did."""

    part: str
    units: int
    replaced: int
    """Batch (and earlier part) files the part replaced, per table."""
    excluded: int
    """Units set aside (``exclude``) that had rows."""


class _SchemaChanged(Exception):
    """A batch file has columns this version's schema lacks: it is left as it is."""


def compact_run(
    output: Root, run_id: str, exclude: frozenset[str] = frozenset()
) -> Compacted | None:
    """Rewrite the run's live batch files as one part per table, keeping each unit's rows
    once (the last written, should a cluster have run a batch twice) and setting aside
    the units whose keys are in ``exclude``; rows left out go to ``superseded/``. None
    when there is nothing to do: one part, no unit twice, nothing to exclude.

    Call it when no unit of the run is running (at a start, or when its units ended):
    a batch written meanwhile is not lost (it is not in the manifest) but stays a file.
    """
    # A start that retries units compacts before its process writes a row: without this
    # pyarrow's first conversion here would import pandas (56 MiB, see _store).
    arrow_without_pandas()
    run_dir = output / run_id
    files = list_run_files(run_dir)
    _delete_replaced(files)
    sources = [path.name for path in files.live["cases"] if is_batch_file(path.name)]
    if not sources:
        return None
    units = _units(run_dir, sources)
    excluded = units.matching(exclude)
    once = units.rows.num_rows == units.count
    if len(sources) == 1 and is_part_file(sources[0]) and once and not excluded:
        return None
    drop: dict[str, set[Identity]] = {name: set() for name in sources}
    for identity, names in units.repeated.items():
        for name in names[:-1]:  # the rows of the last file written stay
            drop[name].add(identity)
    for identity, names in excluded.items():
        for name in names:
            drop[name].add(identity)
    part = part_file_name(units.count - len(excluded))
    try:
        _write_part(run_dir, files, sources, drop, part)
    except _SchemaChanged as why:
        _log.warning("run %s is not compacted: %s", run_id, why)
        return None
    after = list_run_files(run_dir)
    _delete_replaced(after)
    return Compacted(part, units.count - len(excluded), len(sources), len(excluded))


def supersede(store: ResultStore, run_id: str, keys: frozenset[str]) -> None:
    """Set the rows of units ``keys`` aside in ``superseded/`` (never deleted), so that
    their rerun leaves one row per unit: a unit's own files (the layout of earlier runs)
    are moved, batches are compacted without those units."""
    if not keys:
        return
    stamp = utc_stamp()
    for key in sorted(keys):
        store.set_aside_unit_files(run_id, key, stamp)
    compact_run(store.root, run_id, exclude=keys)


@dataclass(frozen=True)
class _Units:
    """The units of a compaction's sources, as their cases rows name them."""

    rows: pa.Table
    """``case_id``, ``arm``, ``rep`` and ``file`` (the source's index) of every cases row."""
    sources: list[str]
    count: int
    """Distinct units."""
    repeated: dict[Identity, list[str]]
    """Units with rows in more than one source (a batch a cluster ran twice), and those
    sources in name order; nearly always none."""

    def matching(self, keys: frozenset[str]) -> dict[Identity, list[str]]:
        """The units whose keys are in ``keys``, and the sources holding their rows."""
        if not keys:  # the usual case: no key made for each of the run's units
            return {}
        return self.sources_of(lambda identity: unit_key(*identity) in keys)

    def sources_of(self, wanted: Callable[[Identity], bool]) -> dict[Identity, list[str]]:
        """The units ``wanted`` picks, and the sources holding their rows, in name order."""
        columns = self.rows.to_pydict()
        found: dict[Identity, list[str]] = {}
        for *identity, index in zip(
            columns["case_id"], columns["arm"], columns["rep"], columns["file"], strict=True
        ):
            unit = (str(identity[0]), str(identity[1]), int(identity[2]))
            if wanted(unit):
                names = found.setdefault(unit, [])
                if self.sources[index] not in names:
                    names.append(self.sources[index])
        return found


def _units(run_dir: Root, sources: list[str]) -> _Units:
    """The units of the sources' cases files, counted in Arrow: a few bytes a unit (the
    compaction that ends a run had held a Python tuple per unit, twice)."""
    blocks = _Blocks()
    for index, name in enumerate(sources):
        data = read_parquet(run_dir / "cases" / name, ["case_id", "arm", "rep"])
        blocks.add(
            data.append_column("file", pa.repeat(pa.scalar(index, pa.int32()), data.num_rows))
        )
    rows = blocks.table()
    grouped = rows.group_by(["case_id", "arm", "rep"]).aggregate([("file", "count_distinct")])
    many = grouped.filter(pc.greater(grouped.column("file_count_distinct"), 1))
    repeated: dict[Identity, list[str]] = {}
    if many.num_rows:
        columns = many.to_pydict()
        wanted = set(zip(columns["case_id"], columns["arm"], columns["rep"], strict=True))
        units = _Units(rows, sources, grouped.num_rows, {})
        repeated = units.sources_of(lambda identity: identity in wanted)
    return _Units(rows, sources, grouped.num_rows, repeated)


def _write_part(
    run_dir: Root,
    files: RunFiles,
    sources: list[str],
    drop: dict[str, set[Identity]],
    part: str,
) -> None:
    """The part of every table, the rows not kept (set aside), the manifest, then the
    cases part: the step that puts the part in effect."""
    aside: dict[tuple[Identity, str], dict[str, pa.Table]] = {}
    for table in ("attempts", "calls", "transcripts", "cases"):
        live = {path.name for path in files.live[table]}
        writer = _PartWriter(run_dir / table / part, arrow_schema(table))
        try:
            for name in (name for name in sources if name in live):
                data = _conformed(read_parquet(run_dir / table / name), arrow_schema(table))
                kept, set_aside = _split(data, drop[name])
                writer.write(kept)
                for identity, rows in set_aside.items():
                    aside.setdefault((identity, name), {})[table] = rows
            if table == "cases":
                _write_aside(run_dir, aside)
                manifest = Manifest(part, frozenset(sources))
                atomic_write_text(run_dir / COMPACTIONS / manifest_name(part), manifest.to_json())
        except BaseException:
            writer.discard()
            raise
        writer.publish()


def _split(data: pa.Table, drop: set[Identity]) -> tuple[pa.Table, dict[Identity, pa.Table]]:
    """The rows of ``data`` whose unit is not in ``drop``, and the rows of each unit that is."""
    if not drop:
        return data, {}
    identities = list(
        zip(
            data.column("case_id").to_pylist(),
            data.column("arm").to_pylist(),
            data.column("rep").to_pylist(),
            strict=True,
        )
    )
    if not any(identity in drop for identity in identities):
        return data, {}
    kept = data.filter(pa.array([identity not in drop for identity in identities]))
    set_aside = {
        identity: data.filter(pa.array([row == identity for row in identities]))
        for identity in set(identities) & drop
    }
    return kept, set_aside


def _conformed(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """``data`` with ``schema``'s columns in its order, a column it lacks as nulls."""
    extra = set(data.column_names) - set(schema.names)
    if extra:
        raise _SchemaChanged(f"columns {sorted(extra)} are not in this version's schema")
    if data.schema.equals(schema):
        return data
    columns = [
        data.column(field.name).cast(field.type)
        if field.name in data.column_names
        else pa.nulls(data.num_rows, field.type)
        for field in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _write_aside(run_dir: Root, aside: dict[tuple[Identity, str], dict[str, pa.Table]]) -> None:
    """``superseded/<unit>/<stamp>/<table>.parquet``: rows a part leaves out, kept."""
    stamp = utc_stamp()
    for index, ((identity, _), tables) in enumerate(sorted(aside.items())):
        archive = run_dir / "superseded" / unit_key(*identity) / f"{stamp}-{index}"
        for table in UNIT_TABLES:  # every table, as a unit's own files were kept
            rows = tables[table].to_pylist() if table in tables else []
            write_table(archive / f"{table}.parquet", table, rows)


def _delete_replaced(files: RunFiles) -> None:
    """Delete the files a compaction in effect replaced, then the manifests no longer
    needed: those whose part is gone (replaced in its turn) or never came to be."""
    # The cases file last: while it is there the batch is replaced, not orphaned.
    for table in (*[t for t in UNIT_TABLES if t != "cases"], "cases"):
        for path in files.replaced.get(table, []):
            delete_file(path)
    replaced = {name for paths in files.replaced.values() for name in (p.name for p in paths)}
    for path, manifest in files.manifests:
        if not files.in_effect(manifest) or manifest.part in replaced:
            delete_file(path)


class _Blocks:
    """Small tables gathered into few: every :data:`_FILES_PER_BLOCK` of them are copied
    into one block, so their native bookkeeping is freed as they come."""

    def __init__(self) -> None:
        self._blocks: list[pa.Table] = []
        self._small: list[pa.Table] = []

    def add(self, rows: pa.Table) -> None:
        """Gather ``rows``; a full set of small tables becomes one block."""
        self._small.append(rows)
        if len(self._small) >= _FILES_PER_BLOCK:
            self._blocks.append(_concatenated(self._small).combine_chunks())
            self._small = []

    def table(self) -> pa.Table:
        """Everything gathered, as one table (a chunk per block and per small table)."""
        return _concatenated([*self._blocks, *self._small])

    def __bool__(self) -> bool:
        return bool(self._blocks or self._small)


def _concatenated(tables: list[pa.Table]) -> pa.Table:
    # Permissive: an older batch's column may be null-typed where a newer one has values.
    return pa.concat_tables(tables, promote_options="permissive")


class _PartWriter:
    """Rows written as a part file atomically: a temporary file renamed into place on a
    disk, uploaded whole (one object appears at the end) to an object store."""

    def __init__(self, path: Root, schema: pa.Schema) -> None:
        self.path = path
        self._buffer = _Blocks()
        self._buffered = 0
        if isinstance(path, Path):  # beside its name, to be renamed over it
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, self._temporary = create_temporary(path)
        else:
            handle, self._temporary = tempfile.mkstemp(prefix="critiquebench-part-")
        os.close(handle)
        self._writer = pq.ParquetWriter(self._temporary, schema, **_PART_OPTIONS)

    def write(self, rows: pa.Table) -> None:
        """Add ``rows``; they are written once enough are buffered."""
        if rows.num_rows:
            self._buffer.add(rows)
            self._buffered += rows.nbytes
        if self._buffered >= _ROW_GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self._writer.write_table(self._buffer.table())
        self._buffer, self._buffered = _Blocks(), 0

    def publish(self) -> None:
        """Finish the file and put it in place."""
        try:
            self._flush()
            self._writer.close()
            if isinstance(self.path, Path):
                os.replace(self._temporary, self.path)
            else:
                self.path.fs.put_file(self._temporary, self.path.path)
        finally:
            self.discard()

    def discard(self) -> None:
        """Drop the temporary file (a part never published)."""
        with contextlib.suppress(Exception):
            self._writer.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._temporary)
