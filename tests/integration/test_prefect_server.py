"""The temporary Prefect API of `critiquebench run`: started as a child, stopped after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.prefect_state import seed_home

_SCRIPT = """
import json, os, sys, urllib.request
from critiquebench.runtime.prefect_server import local_prefect_api

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


def test_the_api_runs_as_a_child_and_stops_with_the_context(
    tmp_path: Path, migrated_prefect_state: Path | None
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(seed_home(tmp_path / "prefect", migrated_prefect_state))
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
        "from critiquebench.runtime.prefect_server import local_prefect_api\n"
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


def _gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}


def _wait_gone(pids: list[int], bound_s: float = 60.0) -> list[int]:
    """The pids still running after a bounded poll (a bound, not a timing claim)."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if all(_gone(pid) for pid in pids):
            return []
        time.sleep(0.1)
    return [pid for pid in pids if not _gone(pid)]


def _kill_and_reap(child: subprocess.Popen[str]) -> None:
    child.kill()
    child.wait(timeout=60)


_KILLED_SCRIPT = """
import sys, time
from critiquebench.runtime.prefect_server import local_prefect_api

with local_prefect_api() as server:
    print(server.process.pid, flush=True)
    time.sleep(600)
"""


def test_the_server_dies_with_a_killed_parent(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_SCRIPT], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        server_pid = int(child.stdout.readline())
        assert not _gone(server_pid)
    finally:
        _kill_and_reap(child)  # SIGKILL: no context exit, no atexit, no finally
    assert _wait_gone([server_pid]) == []


# A program that starts a grandchild of its own, then writes both pids to a file.
_SPAWNER_MODULE = """
import os, subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1] + ".tmp", "w") as out:
    out.write(f"{os.getpid()} {grandchild.pid}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
"""

# Starts the tied program from a thread that ends at once: the tie must outlive that
# thread (a parent-death signal set on fork would kill the program right away), then
# reports the pids and waits to be killed.
_THREAD_SCRIPT = """
import os, sys, threading, time
from critiquebench.runtime.prefect_server import spawn_tied

pids_file = sys.argv[1]
started = []
thread = threading.Thread(
    target=lambda: started.append(spawn_tied("spawner", [pids_file], dict(os.environ)))
)
thread.start()
thread.join()
deadline = time.monotonic() + 120
while not os.path.exists(pids_file) and time.monotonic() < deadline:
    time.sleep(0.05)
with open(pids_file) as pids:
    print(pids.read(), flush=True)
time.sleep(600)
"""


def test_a_tied_program_and_its_children_outlive_the_spawning_thread_not_the_process(
    tmp_path: Path,
) -> None:
    (tmp_path / "spawner.py").write_text(_SPAWNER_MODULE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    child = subprocess.Popen(
        [sys.executable, "-c", _THREAD_SCRIPT, str(tmp_path / "pids")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip(), "the tied program died with the thread that started it"
        pids = [int(pid) for pid in line.split()]
        assert not any(_gone(pid) for pid in pids)
    finally:
        _kill_and_reap(child)
    assert _wait_gone(pids) == []
