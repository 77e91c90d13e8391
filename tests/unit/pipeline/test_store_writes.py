"""Writing a unit's rows: what the files hold, and what the run's process does not load."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from critiquebench.pipeline._schema import arrow_schema
from critiquebench.pipeline._store import atomic_write_text, write_table


def test_a_written_table_reads_back_with_its_schema_and_values(tmp_path: Path) -> None:
    # The small-file options (no compression, dictionaries or statistics) lose nothing.
    schema = arrow_schema("cases")
    row = {field.name: _value_of(field.type) for field in schema}
    path = tmp_path / "cases" / "u.parquet"
    write_table(path, "cases", [row, {**row, "error": None}])
    back = pq.read_table(path)
    assert back.schema.equals(schema, check_metadata=False)
    assert back.schema.metadata == schema.metadata  # schema version and table name kept
    assert back.to_pylist() == [row, {**row, "error": None}]


def _value_of(kind: object) -> object:
    import datetime as dt

    import pyarrow as pa

    assert isinstance(kind, pa.DataType)
    if pa.types.is_timestamp(kind):
        return dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    if pa.types.is_boolean(kind):
        return True
    if pa.types.is_integer(kind):
        return 1
    if pa.types.is_floating(kind):
        return 0.5
    return "x"


def test_writing_rows_leaves_pandas_unloaded_and_still_importable(tmp_path: Path) -> None:
    # pyarrow imports pandas (0.4 s, ~56 MiB) on its first conversion of Python values
    # unless its first look is answered "not installed"; the run's rows never need it.
    script = f"""
import sys
from pathlib import Path
from critiquebench.pipeline._store import write_table
write_table(Path({str(tmp_path)!r}) / "calls" / "u.parquet", "calls", [])
import pyarrow as pa
pa.Table.from_pylist([{{"a": 1}}])
print("pandas" in sys.modules)
frame = pa.table({{"a": [1]}}).to_pandas()  # asked for by name: pandas loads
print(type(frame).__name__, "pandas" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "DataFrame", "True"]


def test_folders_are_created_once_not_asked_for_at_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Path] = []
    real_mkdir = Path.mkdir

    def counted_mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", counted_mkdir)
    folder = tmp_path / "run" / "calls"
    write_table(folder / "a.parquet", "calls", [])
    assert folder in made  # missing: created (with its parents)
    first = len(made)
    write_table(folder / "b.parquet", "calls", [])
    atomic_write_text(folder / "c.md", "text")
    assert len(made) == first  # there already: not asked for again
    assert pq.read_table(folder / "b.parquet").num_rows == 0
    assert (folder / "c.md").read_text(encoding="utf-8") == "text"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cases" / "u.parquet"
    atomic_write_text(path, "old")
    written: list[int] = []
    real_write = os.write

    def short_then_full(handle: int, data: Any) -> int:
        # The first call takes only part of the bytes (allowed), the second fails.
        if not written:
            written.append(real_write(handle, bytes(data)[:3]))
            return written[-1]
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_full)
    with pytest.raises(OSError, match="No space"):
        atomic_write_text(path, "new and longer")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in path.parent.iterdir()] == ["u.parquet"]
    monkeypatch.setattr(os, "write", real_write)
    written.clear()

    def short_writes(handle: int, data: Any) -> int:
        written.append(real_write(handle, bytes(data)[:4]))
        return written[-1]

    monkeypatch.setattr(os, "write", short_writes)
    atomic_write_text(path, "new and longer")  # every part written, in 4-byte steps
    assert path.read_text(encoding="utf-8") == "new and longer" and len(written) == 4
