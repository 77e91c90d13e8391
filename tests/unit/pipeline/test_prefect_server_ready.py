"""The temporary Prefect API is watched from its start until it answers."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from critiquebench.runtime.prefect_server import LocalServer, _become_ready


class _Recorder(BaseHTTPRequestHandler):
    paths: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.paths.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def api() -> Iterator[tuple[str, list[str]]]:
    handler = type("Handler", (_Recorder,), {"paths": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api", handler.paths
    server.shutdown()


@pytest.fixture
def alive() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process
    process.kill()
    process.wait()


def test_ready_once_the_health_check_answers(
    api: tuple[str, list[str]], alive: subprocess.Popen[bytes]
) -> None:
    url, paths = api
    _become_ready(url, alive, timeout_s=10)
    assert paths == ["/api/health"]


def test_wait_ready_waits_for_the_watch_started_with_the_server(
    api: tuple[str, list[str]], alive: subprocess.Popen[bytes]
) -> None:
    url, paths = api
    server = LocalServer(url, alive)
    server.wait_ready(timeout_s=10)
    assert server.ready is not None and server.ready.done()
    assert paths[-1] == "/api/health"


def test_a_server_that_died_is_an_error() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    dead.wait()
    with pytest.raises(RuntimeError, match="exited with code 3"):
        LocalServer("http://127.0.0.1:9/api", dead).wait_ready(timeout_s=10)


def test_a_server_that_never_answers_times_out(alive: subprocess.Popen[bytes]) -> None:
    with pytest.raises(RuntimeError, match=r"did not answer in 0\.5 s"):
        LocalServer("http://127.0.0.1:9/api", alive).wait_ready(timeout_s=0.5)
