"""The temporary Prefect API of `critiquebench run`: started as a child, stopped after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import json, os, sys, urllib.request
from critiquebench.prefect_server import local_prefect_api

with local_prefect_api() as server:
    server.wait_ready()
    status = urllib.request.urlopen(server.api_url + "/health").status
    seen = os.environ["PREFECT_API_URL"]
    imported = "prefect.server.api.server" in sys.modules
    pid = server.process.pid
print(json.dumps({"url": server.api_url, "status": status, "seen": seen, "pid": pid,
                  "imported": imported, "alive": server.process.poll() is None,
                  "after": os.environ.get("PREFECT_API_URL")}))
"""


def test_the_api_runs_as_a_child_and_stops_with_the_context(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["status"] == 200
    assert found["seen"] == found["url"] and found["url"].startswith("http://127.0.0.1:")
    # The server app stays out of this process; the child is gone once the block ends.
    assert found["imported"] is False
    assert found["alive"] is False
    assert found["after"] is None
    assert not Path(f"/proc/{found['pid']}").exists()


def test_a_configured_api_is_used_as_it_is(tmp_path: Path) -> None:
    script = (
        "from critiquebench.prefect_server import local_prefect_api\n"
        "with local_prefect_api() as server:\n"
        "    server.wait_ready()\n"
        "    print(server.api_url, server.process)\n"
    )
    env = {**os.environ, "PREFECT_API_URL": "http://127.0.0.1:9/api"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["http://127.0.0.1:9/api", "None"]
