"""SIGKILL a run mid-way and start it again with the same run id.

Nothing written is lost or duplicated, and no answered call is paid for twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from critiquebench.analysis import connect
from critiquebench.models import CallCache
from critiquebench.suites import load_suite
from critiquebench.testing import StubModelServer, solver_responder
from tests.helpers import written_identities, written_units

pytestmark = pytest.mark.slow
CLI = str(Path(sys.executable).with_name("critiquebench"))
IN_FLIGHT_AT_KILL = 2  # workers, so model calls that can be in flight when the run is killed


def _command(stub_url: str) -> list[str]:
    return [
        CLI, "run", "--suite", "basic", "--limit", "6", "--arms", "A,B",
        "--model", f"openai:stub@{stub_url}", "--output", "out", "--cache-dir", "cache",
        "--run-id", "killed-1", "--max-concurrency", str(IN_FLIGHT_AT_KILL),
    ]  # fmt: skip


def _environment(tmp_path: Path, api_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    # The session's Prefect API: what survives a kill is in the tables and the call cache,
    # which do not depend on who started the server.
    env["PREFECT_API_URL"] = api_url
    return env


def test_killed_run_resumes_without_losing_or_repeating_work(
    tmp_path: Path, prefect_api_url: str
) -> None:
    run_dir = tmp_path / "out" / "killed-1"
    with StubModelServer(solver_responder(load_suite("basic", limit=6)), latency_s=0.3) as stub:
        first = subprocess.Popen(
            _command(stub.url), cwd=tmp_path, env=_environment(tmp_path, prefect_api_url),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 180
            while written_units(run_dir) < 4:
                assert first.poll() is None, "the run ended before it could be killed"
                assert time.monotonic() < deadline, "no progress before the deadline"
                time.sleep(0.05)
        finally:
            os.killpg(first.pid, signal.SIGKILL)  # the CLI and its children, at once
            first.wait()
        written_before = written_identities(run_dir)
        answered_before = dict(stub.requests)
        # RunConfig.provider_settings puts the call cache here.
        cached_at_kill = len(CallCache(tmp_path / "cache" / "calls.sqlite"))
        assert 4 <= len(written_before) < 12

        second = subprocess.run(
            _command(stub.url), cwd=tmp_path, env=_environment(tmp_path, prefect_api_url),
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert second.returncode == 0, second.stderr[-2000:]

    db = connect(tmp_path / "out")
    rows = db.execute("SELECT count(*), count(DISTINCT (case_id, arm, rep)) FROM cases").fetchone()
    assert rows == (12, 12)
    assert written_before <= written_identities(run_dir)
    # A call answered by the server in the instant before the kill may not have reached
    # the cache (the reply was on the wire): only calls in flight then, at most one per
    # worker, may be asked again, and once. Every answer that landed is reused.
    repeated = {k: stub.requests[k] - n for k, n in answered_before.items() if stub.requests[k] > n}
    assert set(repeated.values()) <= {1}
    assert len(repeated) <= len(answered_before) - cached_at_kill <= IN_FLIGHT_AT_KILL
    runs = db.execute("SELECT status, units_skipped FROM runs ORDER BY invocation_started_at")
    statuses = runs.fetchall()
    assert statuses[0][0] == "running"  # the killed start never finished...
    assert statuses[1] == ("completed", len(written_before))  # ...the restart skipped its units
    print(
        f"killed after {len(written_before)}/12 units; {len(answered_before)} calls answered "
        f"before the kill, {len(repeated)} asked again; {sum(stub.requests.values())} in total"
    )
