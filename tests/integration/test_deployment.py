"""prefect.yaml end to end: a real server, `prefect deploy --all`, a run, a process worker.

Everything Prefect writes goes to a temporary PREFECT_HOME; the children also get a
temporary HOME, so neither the user's home nor the project's .prefect is touched.
The flow's parameters point every output (runs, call cache) at the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from critiquebench.analysis import connect
from tests.integration.replay_run import write_replay_file
from tests.prefect_state import seed_home

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
PREFECT = str(Path(sys.executable).with_name("prefect"))
POOL = "critiquebench-process"
PULL_STEP = "prefect.deployments.steps.set_working_directory"
SERVER_START_TIMEOUT_S = 90
FLOW_RUN_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL it: a worker may ignore the first signal."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:
            time.sleep(0.5)  # let children of the group go too, then make sure


def _wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"prefect server exited ({server.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    pytest.fail(f"prefect server not healthy after {SERVER_START_TIMEOUT_S} s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def prefect_env(
    tmp_path_factory: pytest.TempPathFactory, migrated_prefect_state: Path | None
) -> Iterator[dict[str, str]]:
    """A `prefect server start` of its own; yields the environment for CLI children.

    Its home holds the session's migrated database: what is tested is the deployment,
    not a first start (the session's own server and a first CLI run make one on an
    empty home). `prefect server start` answered after 7.5 s and 7 CPU-s on a migrated
    home, 21.6 s and 19 CPU-s on an empty one (quiet 2-core host).
    """
    root = tmp_path_factory.mktemp("deployment")
    (root / "home").mkdir()
    seed_home(root / "prefect-home", migrated_prefect_state)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(root / "prefect-home"),
        "HOME": str(root / "home"),
        "PREFECT_API_URL": url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_CLI_PROMPT": "false",
    }
    env.pop("CRITIQUEBENCH_HOME", None)  # only the worker gets it (see the test)
    log = root / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=root,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_healthy(url, server, log)
        yield env
    finally:
        _stop(server)


def _prefect(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [PREFECT, *args], env=env, cwd=PROJECT, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _read(env: dict[str, str], path: str) -> dict[str, Any]:
    """An object from the server's REST API, as `prefect ... inspect` would print it.

    Read over HTTP: each `prefect` command costs an interpreter and Prefect's import.
    """
    with urllib.request.urlopen(f"{env['PREFECT_API_URL']}/{path}", timeout=30) as response:
        found: dict[str, Any] = json.loads(response.read())
    return found


def _run_worker_once(env: dict[str, str], log: Path) -> None:
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [PREFECT, "worker", "start", "--pool", POOL, "--run-once"],
            env={**env, "CRITIQUEBENCH_HOME": str(PROJECT)},
            cwd=log.parent,  # the pull step, not the worker's folder, decides where the run is
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        worker.wait(timeout=FLOW_RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"worker still running after {FLOW_RUN_TIMEOUT_S} s:\n{log.read_text()}")
    finally:
        _stop(worker)


def test_deploy_run_smoke_on_a_process_worker(prefect_env: dict[str, str], tmp_path: Path) -> None:
    _prefect(prefect_env, "work-pool", "create", POOL, "--type", "process")
    _prefect(prefect_env, "--no-prompt", "deploy", "--all")

    nightly = _read(prefect_env, "deployments/name/ab-matrix/nightly")
    assert [s["schedule"]["cron"] for s in nightly["schedules"]] == ["0 2 * * *"]
    assert nightly["schedules"][0]["active"]
    smoke = _read(prefect_env, "deployments/name/ab-matrix/smoke")
    assert smoke["schedules"] == []
    # Deployed without CRITIQUEBENCH_HOME, the pull step keeps the placeholder and each
    # worker fills it from its own environment (set when deploying, it would be fixed).
    assert smoke["pull_steps"] == [{PULL_STEP: {"directory": "{{ $CRITIQUEBENCH_HOME }}"}}]

    replay = write_replay_file(tmp_path / "replay.jsonl", limit=2)
    # Flat parameters, merged over the deployment's own (suite, arms, reps, limit 3).
    settings = {
        "model": f"replay:{replay}",
        # Relative to the project: the rows land in tmp_path only if the pull step
        # moved the run from the worker's folder (tmp_path) into CRITIQUEBENCH_HOME.
        "output": os.path.relpath(tmp_path / "runs", PROJECT),
        "cache_dir": str(tmp_path / "cache"),
        "run_id": "deployed-1",
    }
    started = _prefect(
        prefect_env,
        "deployment",
        "run",
        "ab-matrix/smoke",
        "--params",
        json.dumps(settings),
        "--param",
        "limit=2",
    )
    match = re.search(r"UUID:\s*([0-9a-f-]{36})", started)
    assert match, started
    flow_run_id = match.group(1)

    _run_worker_once(prefect_env, tmp_path / "worker.log")

    flow_run = _read(prefect_env, f"flow_runs/{flow_run_id}")
    worker_log = (tmp_path / "worker.log").read_text()
    assert flow_run["state"]["type"] == "COMPLETED", worker_log
    assert flow_run["parameters"]["run_id"] == "deployed-1"
    assert (flow_run["parameters"]["limit"], flow_run["parameters"]["suite"]) == (2, "basic")
    db = connect(tmp_path / "runs")
    cases = db.execute("SELECT run_id, count(*) FROM cases GROUP BY run_id").fetchall()
    assert cases == [("deployed-1", 4)]
    assert db.execute("SELECT status, quality FROM runs").fetchall() == [("completed", "passed")]
    assert (tmp_path / "runs" / "deployed-1" / "report.html").exists()
    assert (Path(prefect_env["PREFECT_HOME"]) / "prefect.db").exists()
