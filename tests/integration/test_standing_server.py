"""`critiquebench server` keeps a Prefect API for the project; runs report to it and
start no temporary server of their own; a record left by a dead server is ignored."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from critiquebench.runtime.prefect_server import STANDING_RECORD, standing_api
from tests.prefect_state import seed_home

pytestmark = pytest.mark.slow
CLI = str(Path(sys.executable).with_name("critiquebench"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _flow_run_names(api_url: str) -> list[str]:
    request = urllib.request.Request(
        f"{api_url}/flow_runs/filter", data=b"{}", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return [str(run["name"]) for run in json.load(response)]


def test_a_run_reports_to_the_standing_server(
    tmp_path: Path, migrated_prefect_state: Path | None
) -> None:
    home = seed_home(tmp_path / "prefect", migrated_prefect_state)
    env = {**os.environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    port = _free_port()
    server = subprocess.Popen(
        [CLI, "server", "--port", str(port)], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    record = home / STANDING_RECORD
    try:
        deadline = time.monotonic() + 180
        while standing_api(home) is None:
            assert server.poll() is None, server.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the standing server never answered"
            time.sleep(0.5)
        api_url = f"http://127.0.0.1:{port}/api"
        before = _flow_run_names(api_url)
        command = [CLI, "run", "--suite", "basic", "--limit", "2", "--arms", "A", "--model"]
        command += ["sim:", "--output", "out", "--run-id", "standing-1", "--no-cache"]
        completed = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert completed.returncode == 0, completed.stderr[-2000:]
        assert f"Prefect API: {api_url} (already running)" in completed.stdout
        # The run's flow is recorded by the standing server, not by a server of its own.
        assert len(_flow_run_names(api_url)) == len(before) + 1
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    assert server.returncode == 0
    assert not record.exists()


def test_a_record_of_a_dead_server_is_ignored(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / STANDING_RECORD).write_text(
        json.dumps({"api_url": "http://127.0.0.1:9/api", "pid": int(dead.stdout)})
    )
    assert standing_api(tmp_path) is None
    (tmp_path / STANDING_RECORD).write_text("{not json")
    assert standing_api(tmp_path) is None
