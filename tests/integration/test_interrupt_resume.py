"""Ctrl-C on a real `critiquebench run`, then `critiquebench resume`: the run stops
scheduling, keeps what landed, records `interrupted`, exits 130 with one line naming
the resume command, and the resume finishes only the rest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from critiquebench.pipeline import ResultStore
from critiquebench.suites import load_suite
from critiquebench.testing import StubModelServer, solver_responder
from tests.helpers import written_units

pytestmark = pytest.mark.slow
CLI = str(Path(sys.executable).with_name("critiquebench"))


def _environment(tmp_path: Path, api_url: str) -> dict[str, str]:
    return {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": api_url}


def test_ctrl_c_records_interrupted_and_resume_finishes_the_rest(
    tmp_path: Path, prefect_api_url: str
) -> None:
    env = _environment(tmp_path, prefect_api_url)
    run_dir = tmp_path / "out" / "stop-1"
    with StubModelServer(solver_responder(load_suite("basic", limit=6)), latency_s=0.3) as stub:
        command = [
            CLI, "run", "--suite", "basic", "--limit", "6", "--arms", "A,B", "--no-cache",
            "--model", f"openai:stub@{stub.url}", "--output", "out", "--run-id", "stop-1",
            "--max-concurrency", "2",
        ]  # fmt: skip
        # A session of its own, signalled as a group: what a terminal's Ctrl-C does.
        first = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 240
            while written_units(run_dir) < 2:
                assert first.poll() is None, first.communicate()[1][-2000:]
                assert time.monotonic() < deadline, "no unit landed before the deadline"
                time.sleep(0.05)
            os.killpg(first.pid, signal.SIGINT)
            out, err = first.communicate(timeout=240)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
                first.wait()
        assert first.returncode == 130, err[-3000:]
        assert "Traceback" not in err + out and "websocket" not in (err + out).lower()
        final = [line for line in err.splitlines() if line.strip()][-1]
        assert final.startswith("interrupted: run stop-1 interrupted"), err[-3000:]
        assert final.endswith("resume with: critiquebench resume stop-1 --output out"), final
        assert "Verdict" not in out  # no report on part of the matrix
        rows = ResultStore(tmp_path / "out").run_rows("stop-1")
        assert rows[-1]["status"] == "interrupted"
        landed = written_units(run_dir)
        assert 2 <= landed < 12

        listed = subprocess.run(
            [CLI, "list", "--output", "out", "--format", "json"], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert json.loads(listed.stdout)[0]["status"] == "interrupted", listed.stderr

        second = subprocess.run(
            [CLI, "resume", "stop", "--output", "out"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert second.returncode == 0, second.stderr[-3000:]
    rows = ResultStore(tmp_path / "out").run_rows("stop-1")
    assert rows[-1]["status"] == "completed"
    assert rows[-1]["units_skipped"] == landed  # what landed before Ctrl-C was kept
    assert written_units(run_dir) == 12
    assert "progress: " in second.stderr and f"{12 - landed}/{12 - landed}" in second.stderr
