"""Where results live: a local folder or any fsspec URL a cluster shares.

``--output`` takes a local path (``data/runs``), a ``file://`` URL (the same thing)
or an object-store URL (``s3://bucket/prefix``, ``gs://...``, ``memory://...``).
A local folder is a ``pathlib.Path``; anything else is a ``UPath`` (universal_pathlib,
over fsspec), which offers the same ``/``, ``glob``, ``exists`` and ``read_bytes``.

Writes are atomic either way: on a local disk a file is written beside its name and
renamed over it; an object store has no rename, but an object appears whole with the
PUT that writes it (a crash mid-upload leaves no object), so a table file is written
with one PUT, and a unit is marked done by its cases row, written last.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import unquote, urlparse

from upath import UPath

if TYPE_CHECKING:  # pyarrow loads with the first table read, not with the config
    import pyarrow as pa

Root: TypeAlias = Path | UPath
"""A folder of the result store: a local ``Path`` or a remote ``UPath``."""


class StoreURLError(ValueError):
    """An output URL that names no filesystem fsspec knows."""


def store_root(value: str | os.PathLike[str] | UPath) -> Root:
    """``value`` as a store folder: a ``Path`` for a local path or ``file://`` URL, a
    ``UPath`` for any other URL (``s3://bucket/prefix``)."""
    if isinstance(value, UPath):
        return value if value.protocol not in ("", "file", "local") else Path(value.path)
    text = os.fspath(value)
    if "://" not in text:
        return Path(text)
    if text.startswith("file://"):
        return Path(unquote(urlparse(text).path))
    try:
        # No listings cache: other processes write here all the time (the workers'
        # units, the run's rows rewritten at its end), and a cached listing would hide
        # their files, or hold the old version of a file rewritten since.
        return UPath(text, use_listings_cache=False)
    except (ValueError, ImportError) as error:
        raise StoreURLError(
            f"--output {text}: {error}; give a local folder or an fsspec URL such as "
            "s3://bucket/prefix (its filesystem package, e.g. s3fs, must be installed)"
        ) from error


def is_remote(path: Root) -> bool:
    """Whether ``path`` is on an object store (no rename, no local file)."""
    return not isinstance(path, Path)


def show(path: Root) -> str:
    """``path`` as the user gave it: a local path or a URL."""
    return str(path)


def put_bytes(path: UPath, data: bytes | memoryview) -> None:
    """Write one object with one PUT: it is there whole or not at all."""
    path.fs.pipe_file(path.path, bytes(data))


def read_parquet(path: Root, columns: Sequence[str] | None = None) -> pa.Table:
    """One Parquet file of the store as an Arrow table.

    Read as the one file it is (``ParquetFile``): ``pq.read_table`` builds a dataset
    for it first, which cost more CPU than a unit's few rows. Measured: compacting a
    run's 328 one-unit batches (1,312 files, ``compact_run`` as ``finish_run`` calls it)
    took 2.1 CPU-s instead of 3.0 (medians of 3 interleaved, 2 shared cores at load 12-15);
    and a report no longer imports ``pyarrow.dataset`` (0.37 CPU-s of its ~3).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    listed = None if columns is None else list(columns)
    source = path if isinstance(path, Path) else pa.BufferReader(path.read_bytes())
    with pq.ParquetFile(source) as file:
        return file.read(columns=listed)


def read_parquet_files(paths: Sequence[Root], schema: pa.Schema) -> Any:
    """The files as one pyarrow dataset of ``schema`` (columns a file lacks read as
    null), for DuckDB to scan as Arrow: DuckDB's own object-store support needs an
    extension downloaded at run time, which a cluster without internet has not got."""
    import pyarrow.dataset as ds
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    remote = [path for path in paths if isinstance(path, UPath)]
    if not remote:
        return ds.dataset([str(path) for path in paths], schema=schema, format="parquet")
    filesystem = PyFileSystem(FSSpecHandler(remote[0].fs))
    return ds.dataset(
        [path.path for path in remote], schema=schema, format="parquet", filesystem=filesystem
    )


def parquet_files(folder: Root) -> list[Root]:
    """The ``*.parquet`` files directly in ``folder``, sorted by name; none when it is
    missing. Temporary files (``.name.xxxx``) and markers are not listed."""
    return [folder / name for name in listed_names(folder, ".parquet")]


def listed_names(folder: Root, suffix: str) -> list[str]:
    """Names of the files directly in ``folder`` that end with ``suffix``, sorted; none
    when it is missing. Temporary files (``.name.xxxx``) are not listed."""
    if isinstance(folder, Path):
        try:
            names = [entry.name for entry in os.scandir(folder)]
        except (FileNotFoundError, NotADirectoryError):
            return []
    else:
        try:
            listed = folder.fs.ls(folder.path, detail=False)
        except FileNotFoundError:
            return []
        names = [str(item).rstrip("/").rsplit("/", 1)[-1] for item in listed]
    return sorted(name for name in names if name.endswith(suffix) and not name.startswith("."))


def delete_file(path: Root) -> None:
    """Delete ``path``; one already gone is fine."""
    if isinstance(path, Path):
        path.unlink(missing_ok=True)
        return
    with contextlib.suppress(FileNotFoundError):
        path.fs.rm_file(path.path)
