"""Opening, checking and reporting a run reads that run's files only, however many runs
are stored beside it (the default output folder keeps every run ever made)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.analysis import (
    connect,
    latest_run,
    query_table,
    table_files,
    views_sql,
    write_reports,
)
from critiquebench.pipeline import TABLES
from critiquebench.quality import check_run
from tests.integration.replay_run import build_replay_run

RUN = "latest"


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output folder holding one run only."""
    output = tmp_path_factory.mktemp("alone") / "runs"
    build_replay_run(output, RUN, limit=3, reps=1)
    return output


def _crowded(alone: Path, folder: Path, earlier: int, *, corrupt: bool) -> Path:
    """``alone``'s run plus ``earlier`` other runs: copies of it, or files that are not Parquet."""
    output = folder / "runs"
    shutil.copytree(alone / RUN, output / RUN)
    for index in range(earlier):
        target = output / f"earlier-{index:02d}"
        shutil.copytree(alone / RUN, target)
        if corrupt:  # reading any of these would fail loudly
            for path in target.glob("*/*.parquet"):
                path.write_bytes(b"not parquet")
    return output


@pytest.fixture
def globbed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Every folder listed through ``Path.glob`` or ``Path.iterdir`` while the test runs."""
    listed: list[Path] = []
    glob, iterdir = Path.glob, Path.iterdir

    def spy_glob(self: Path, pattern: str, **kwargs: object) -> Iterator[Path]:
        listed.append(self)
        return glob(self, pattern, **kwargs)  # type: ignore[arg-type]

    def spy_iterdir(self: Path) -> Iterator[Path]:
        listed.append(self)
        return iterdir(self)

    monkeypatch.setattr(Path, "glob", spy_glob)
    monkeypatch.setattr(Path, "iterdir", spy_iterdir)
    yield listed


def test_a_run_is_read_from_its_own_files_only(
    alone: Path, tmp_path: Path, globbed: list[Path]
) -> None:
    output = _crowded(alone, tmp_path, 20, corrupt=True)
    globbed.clear()
    expected = write_reports(alone, RUN).report.to_json()
    assert write_reports(output, RUN).report.to_json() == expected
    assert check_run(output, RUN).passed
    _, note = query_table(output, "SELECT * FROM cases", runs=[RUN])
    assert note == "6 row(s)"
    assert "earlier-" not in views_sql(output, [RUN])
    counted = connect(output, [RUN]).execute("SELECT count(*) FROM attempts").fetchone()
    assert counted == connect(alone).execute("SELECT count(*) FROM attempts").fetchone()
    touched = {path for path in globbed if path.is_relative_to(output)}
    assert touched and all(path.is_relative_to(output / RUN) for path in touched), touched
    files = table_files(output, [RUN])
    assert sorted(files) == sorted(TABLES)
    assert all(path.is_relative_to(output / RUN) for paths in files.values() for path in paths)


def test_every_run_is_still_one_call_away(alone: Path, tmp_path: Path) -> None:
    output = _crowded(alone, tmp_path, 2, corrupt=False)
    counted = connect(output).execute("SELECT count(*) FROM cases").fetchone()
    assert counted == (18,)
    assert "*/cases/*.parquet" in views_sql(output)
    assert latest_run(alone) == RUN
    assert latest_run(tmp_path / "nothing here") is None


def _report_seconds(output: Path) -> float:
    fastest = float("inf")
    for _ in range(3):  # the machine is shared: the fastest of three is the least noisy
        started = time.perf_counter()
        write_reports(output, RUN)
        fastest = min(fastest, time.perf_counter() - started)
    return fastest


def test_report_time_is_flat_in_the_number_of_stored_runs(alone: Path, tmp_path: Path) -> None:
    one = _report_seconds(_crowded(alone, tmp_path / "one", 1, corrupt=False))
    twenty = _report_seconds(_crowded(alone, tmp_path / "twenty", 20, corrupt=False))
    # Reading every stored run made this ~20x; a flat cost leaves only noise.
    assert twenty < 2.0 * one + 0.5, (one, twenty)
