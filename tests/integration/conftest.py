"""Fixtures shared by the end-to-end tests of tests/integration."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app

SuiteRun = Callable[..., str]


@pytest.fixture()
def run_suite_cli(prefect_harness: None, tmp_path: Path) -> SuiteRun:
    """``critiquebench run`` on a bundled suite, into ``tmp_path / "runs"``; returns its output.

    The CLI runs in this process against the session's Prefect API, as a run would
    against its temporary server: flow, tasks, tables, quality check and reports all
    run; only the interpreter start and the server start (the same for every run,
    and covered by the subprocess tests) are not paid again. The run must succeed.
    """

    def run(suite: str, model: str, *, arms: str, limit: int, run_id: str) -> str:
        command = [
            "run", "--suite", suite, "--model", model, "--arms", arms, "--limit", str(limit),
            "--no-cache", "--output", str(tmp_path / "runs"), "--run-id", run_id,
            "--prices", str(tmp_path / "none.json"),
        ]  # fmt: skip
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, result.output
        return result.output

    return run
