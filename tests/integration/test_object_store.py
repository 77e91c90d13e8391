"""Runs written to and read from an S3-compatible server (moto, on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.analysis import connect
from critiquebench.cli import app
from critiquebench.pipeline import RunConfig, finish_run, run_unit, start_run, store_root
from tests.s3_server import S3Server, s3_server

pytestmark = pytest.mark.slow

OUTCOME_SQL = """
    SELECT case_id, arm, rep, defects_initial, defects_final, halt_reason, passed, loops, calls
    FROM cases WHERE run_id = ? ORDER BY case_id, arm, rep
"""


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with s3_server() as running:
        yield running


@pytest.fixture()
def s3(server: S3Server, monkeypatch: pytest.MonkeyPatch, request: Any) -> str:
    """A fresh bucket on the server, this process's S3 clients pointed at it."""
    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    bucket = "t-" + request.node.name.lower().replace("_", "-")[:50]
    server.make_bucket(bucket)
    return f"s3://{bucket}/runs"


def _sim_run(output: str | Path, run_id: str) -> RunConfig:
    config = RunConfig.model_validate(
        {
            "suite": "basic", "limit": 3, "reps": 2, "arms": "A,B", "cache": False,
            "model": "sim:fix=0.7,draft=0.6", "output": output, "run_id": run_id,
        }
    )  # fmt: skip
    plan = start_run(config)
    for case, unit in plan.work:
        run_unit(case, unit, config)
    end = finish_run(plan, failed=0)
    assert end.status == "completed", end
    return config


def test_a_run_on_s3_has_the_rows_of_the_same_run_on_disk(s3: str, tmp_path: Path) -> None:
    remote = _sim_run(s3, "same")
    assert not isinstance(remote.output, Path)
    local = _sim_run(tmp_path / "runs", "same")
    assert not (tmp_path / "s3:").exists()  # the URL was not taken for a folder
    rows = connect(remote.output, ["same"]).execute(OUTCOME_SQL, ["same"]).fetchall()
    assert len(rows) == 12
    assert rows == connect(local.output, ["same"]).execute(OUTCOME_SQL, ["same"]).fetchall()
    snapshot = connect(s3, ["same"], snapshot=True)
    assert snapshot.execute("SELECT status FROM runs").fetchall() == [("completed",)]


def test_file_urls_are_local_folders(tmp_path: Path) -> None:
    assert store_root(f"file://{tmp_path}/runs") == tmp_path / "runs"
    assert store_root(str(tmp_path)) == tmp_path


def test_sql_check_list_and_report_read_a_run_on_s3(s3: str) -> None:
    _sim_run(s3, "cli-1")
    runner = CliRunner()
    query = "SELECT arm, count(*) AS units FROM cases GROUP BY arm ORDER BY arm"
    result = runner.invoke(app, ["sql", query, "--output", s3])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "│" in line]
    assert [line.split("│")[1:3] for line in lines] == [[" A   ", "     6 "], [" B   ", "     6 "]]
    listed = runner.invoke(app, ["list", "--output", s3])
    assert listed.exit_code == 0, listed.output
    assert "cli-1" in listed.output
    checked = runner.invoke(app, ["check", "cli-1", "--output", s3])
    assert checked.exit_code == 0, checked.output
    reported = runner.invoke(app, ["report", "cli-1", "--output", s3])
    assert reported.exit_code == 0, reported.output
    assert "cli-1" in reported.output


def test_files_other_processes_write_are_seen_at_once(s3: str) -> None:
    # Workers write units and the flow rewrites the runs row while a reader holds the
    # store open: a cached listing, or a file's cached version, would hide them.
    import boto3

    from critiquebench.pipeline import parquet_files, read_parquet
    from critiquebench.pipeline._store import write_table

    folder = store_root(s3) / "run-1" / "runs"
    write_table(folder / "a.parquet", "runs", [])
    assert [path.name for path in parquet_files(folder)] == ["a.parquet"]
    assert read_parquet(folder / "a.parquet").num_rows == 0
    bucket, _, prefix = s3.removeprefix("s3://").partition("/")
    other = boto3.client("s3")  # another writer, as a worker on another machine is
    for name in ("a.parquet", "b.parquet"):
        other.put_object(Bucket=bucket, Key=f"{prefix}/run-1/runs/{name}", Body=_one_runs_row())
    assert [path.name for path in parquet_files(folder)] == ["a.parquet", "b.parquet"]
    assert read_parquet(folder / "a.parquet").num_rows == 1


def _one_runs_row() -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.table({"run_id": ["run-1"]}), sink)
    return sink.getvalue()
