"""The ab-matrix flow on a local Ray instance gives the same rows as on threads."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.analysis import connect
from critiquebench.pipeline import RunConfig
from tests.integration.lazy_flow import run_ab_matrix
from tests.integration.replay_run import write_replay_file

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]


@pytest.fixture()
def ray_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep Ray's session files and auth token (~/.ray) out of /tmp/ray and the home."""
    # Ray's Unix sockets live under RAY_TMPDIR and their paths may not exceed 107 bytes.
    short = Path(tempfile.mkdtemp(prefix="cbray-"))
    try:
        monkeypatch.setenv("RAY_TMPDIR", str(short))
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
        yield
    finally:
        shutil.rmtree(short, ignore_errors=True)


@pytest.mark.usefixtures("ray_dirs")
def test_units_run_in_ray_worker_processes(tmp_path: Path) -> None:
    replay = write_replay_file(tmp_path / "replay.jsonl", limit=2)
    config = RunConfig(
        suite="basic",
        limit=2,
        model=f"replay:{replay}",
        max_concurrency=2,
        output=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        run_id="ray-1",
    )
    result = run_ab_matrix(config.model_copy(update={"task_runner": "ray"}))
    assert result["worker_pids"] and os.getpid() not in result["worker_pids"]
    db = connect(tmp_path / "runs")
    assert db.execute("SELECT count(*) FROM cases").fetchone() == (4,)
    assert db.execute("SELECT status FROM runs").fetchall() == [("completed",)]
