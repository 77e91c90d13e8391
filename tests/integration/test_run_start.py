"""`critiquebench run` begins the start of the run before it waits for Prefect's server,
runs the preflight checks once, and the flow's start takes what was begun."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from critiquebench.analysis import connect
from critiquebench.cli import app
from tests.helpers import hollow_then_fixed_replay

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_the_start_is_prepared_ahead_and_checked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import critiquebench.pipeline as pipeline
    from critiquebench.pipeline import _head_start, _preflight
    from critiquebench.runtime.prefect_server import LocalServer

    events: list[str] = []

    def recorder(name: str, function: Any) -> Any:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            events.append(f"{name} on {threading.current_thread().name}")
            return function(*args, **kwargs)

        return recorded

    monkeypatch.setattr(_preflight, "choose_cases", recorder("preflight", _preflight.choose_cases))
    monkeypatch.setattr(pipeline, "begin_run", recorder("begin", pipeline.begin_run))
    monkeypatch.setattr(_head_start, "_probe", recorder("probe", _head_start._probe))
    monkeypatch.setattr(LocalServer, "wait_ready", recorder("wait", LocalServer.wait_ready))
    replay = hollow_then_fixed_replay(tmp_path, limit=2)
    output = tmp_path / "runs"
    command = ["run", "--suite", "basic", "--limit", "2", "--model", f"replay:{replay}"]
    command += ["--no-cache", "--output", str(output), "--run-id", "ahead"]
    result = CliRunner().invoke(app, [*command, "--prices", str(tmp_path / "none.json")])
    assert result.exit_code == 0, result.output
    # Once each: the flow's start takes the head start, it checks and probes nothing again.
    main = [event for event in events if event.endswith("MainThread")]
    assert main == ["preflight on MainThread", "begin on MainThread", "wait on MainThread"]
    assert sorted(set(events) - set(main)) == ["probe on run-head-start"]
    assert len(events) == 4
    row = connect(output).execute("SELECT status, units_planned, sandbox FROM runs").fetchone()
    assert row is not None and row[:2] == ("completed", 4) and row[2]
