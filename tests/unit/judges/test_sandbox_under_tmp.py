"""The sql judge's sandbox with its DuckDB under a temporary folder (a virtualenv under
/tmp): bubblewrap's private /tmp must not hide it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from critiquebench.judges.sandbox._pool import Sandbox, SandboxExtras
from critiquebench.judges.sql._judge import SqlJudge
from critiquebench.judges.sql._run import duckdb_extras
from critiquebench.suites import Case, Check

SCHEMA = "CREATE TABLE people (name VARCHAR, city VARCHAR, age INTEGER);"
DATA = "INSERT INTO people VALUES ('ann', 'Oslo', 31), ('bob', 'Lima', 45);"


def _link_or_copy(source: str, target: str) -> None:
    """A hard link where the folders share a file system (DuckDB's library is large)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _packages_under(folder: Path) -> SandboxExtras:
    """The parent's DuckDB (package, compiled module, metadata), placed under ``folder``."""
    real = duckdb_extras()
    if not real.read_only:
        pytest.skip("duckdb is not installed")
    folder.mkdir(parents=True)
    placed = []
    for path in real.read_only:
        target = folder / path.name
        if path.is_dir():
            shutil.copytree(path, target, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(path), str(target))
        placed.append(target)
    return SandboxExtras(tuple(placed), str(folder), real.imports)


@pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="bubblewrap (bwrap) is not installed: the order of its mounts cannot be tried "
    "(make installs it)",
)
def test_duckdb_under_a_temporary_folder_runs_a_query_in_bubblewrap(tmp_path: Path) -> None:
    extras = _packages_under(tmp_path / "venv" / "lib" / "site-packages")
    sandbox = Sandbox.detect(extras)
    try:
        assert sandbox.mode.bubblewrap, sandbox.description
        [worker] = sandbox._idle
        assert not [note for note in worker.facts["notes"] if "duckdb" in note], worker.facts
        case = Case(
            id="sql/oslo", prompt="People in Oslo.", judge="sql",
            judge_data={"schema": SCHEMA},
            checks=(
                Check(source="people", origin="feedback", line=1,
                      spec={"data": DATA, "expected": [["ann", 31]]}),
            ),
        )  # fmt: skip
        judge = SqlJudge(sandbox=sandbox)
        right = judge(case, "SELECT name, age FROM people WHERE city = 'Oslo'")
        wrong = judge(case, "SELECT name, age FROM people")
    finally:
        sandbox.close()
    assert right.infrastructure_error is None and right.passed, right.failures
    assert wrong.infrastructure_error is None and not wrong.passed
