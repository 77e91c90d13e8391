"""Output folders given as paths or URLs: which are local, and how they round-trip."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from critiquebench.pipeline import RunConfig, parquet_files, read_parquet, store_root
from critiquebench.pipeline._schema import config_row
from critiquebench.pipeline._store import write_table


def test_paths_and_file_urls_are_local_folders(tmp_path: Path) -> None:
    assert store_root(str(tmp_path / "runs")) == tmp_path / "runs"
    assert store_root(f"file://{tmp_path}/runs") == tmp_path / "runs"
    assert store_root(tmp_path) == tmp_path


def test_an_object_store_url_keeps_its_scheme_everywhere() -> None:
    config = RunConfig(suite="basic", model="sim", output="s3://bucket/prefix/runs")
    assert not isinstance(config.output, Path)  # Path() would make it s3:/bucket/...
    assert str(config.output) == "s3://bucket/prefix/runs"
    assert str(config.output / "run-1") == "s3://bucket/prefix/runs/run-1"
    assert config_row(config)["output"] == "s3://bucket/prefix/runs"
    again = RunConfig.model_validate_json(config.model_dump_json())
    assert again == config and str(again.output) == "s3://bucket/prefix/runs"


def test_a_config_refuses_an_output_that_is_no_folder() -> None:
    with pytest.raises(ValueError, match="folder or URL"):
        RunConfig(suite="basic", model="sim", output=3)  # type: ignore[arg-type]


def test_tables_on_an_fsspec_store_list_and_read_back() -> None:
    root = store_root(f"memory://cb-{uuid.uuid4().hex}/runs")
    folder = root / "run-1" / "calls"
    write_table(folder / "b.parquet", "calls", [])
    write_table(folder / "a.parquet", "calls", [])
    (folder / ".a.parquet.1234").write_bytes(b"torn")  # a temporary file is never listed
    assert [path.name for path in parquet_files(folder)] == ["a.parquet", "b.parquet"]
    assert read_parquet(folder / "a.parquet").num_rows == 0
    assert parquet_files(root / "missing") == []
