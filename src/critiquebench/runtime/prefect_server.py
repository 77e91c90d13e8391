"""The Prefect API a run reports to: a temporary one started early and without
importing it, or the standing one ``critiquebench server`` keeps for the project.

With no ``PREFECT_API_URL``, Prefect starts a temporary server itself on the first
flow call, after importing the whole server application (FastAPI, SQLAlchemy,
migrations) into the flow's process: seconds of CPU and ~100 MiB that the judges
then share the machine with. Here the same server (``prefect.server.api.server``
under uvicorn, UI off, as Prefect runs it) starts as a child process before the
CLI's own imports, so its start-up overlaps them, and the flow's process only talks
to it over HTTP. A thread watches it from the start until it answers.
Automations (the triggers and actions services) are off: a local run defines none,
and they would read every event the run emits.

Measured gain: starting the server as a child before the CLI's imports, automations
off, took a quick run (20 cases x A,B x 3 reps, concurrency 2) from 31.8 to 19.0
CPU-seconds in the flow's process and from 25.2 to 12.4 in the server (0952cc2). (A first
request made from the watching thread took ~0.6 s of set-up off the flow's first request,
78201f9: under 5% of a 1,000-unit run, so it went.)

The server dies with the process that started it, however that one ends (a SIGKILL
included): see ``spawn_tied``.

A temporary server costs every run its start (seconds of CPU on 2 cores). For daily
use ``critiquebench server`` keeps one running for the project (``serve_standing``)
and records where it listens in the Prefect home; a run that finds that record, and a
server answering at it, reports there and starts without one of its own.

Measured gain of the standing server: the flow's fixed cost (``bench/pipeline.py
--targets``: wall = fixed + slope x units, HumanEval x A, B at 1 and 3 reps,
concurrency 2) was 28.6 s with the temporary server and 18.8 s with a standing one
(session 9's closing figures, 2 cores, load not recorded): 9.8 s a run, a third of a
1,000-unit run.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from critiquebench.runtime.background import in_thread

_READY_TIMEOUT_S = 90.0
_SERVER_ENV = {
    "PREFECT_UI_ENABLED": "0",
    "PREFECT__SERVER_EPHEMERAL": "1",
    "PREFECT__SERVER_FINAL": "1",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
}
# The standing server keeps the UI (a user who keeps a server wants to look at it) but
# runs no background services: a local run schedules nothing and defines no automation.
_STANDING_ENV = {"PREFECT__SERVER_WEBSERVER_ONLY": "1"}
STANDING_RECORD = "critiquebench-server.json"
"""The file, in the Prefect home, where ``critiquebench server`` records its API."""
DEFAULT_STANDING_PORT = 4200


# Run by the tied child before its real program: a daemon thread waits on the read end
# of a pipe whose write end only the parent holds. Whatever way the parent ends, the
# kernel closes that end and the read returns; the thread then kills the child's whole
# process group (the child leads it), so whatever the program started dies too. A
# parent-death signal alone would not do: it fires when the *thread* that forked exits,
# and a library caller may start the server from a thread that ends long before the run.
_TIE_SOURCE = """
import os, runpy, signal, sys, threading
fd = int(sys.argv[1])
def watch():
    while True:
        try:
            if not os.read(fd, 64):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    os.killpg(0, signal.SIGKILL)
threading.Thread(target=watch, name="tied-to-parent", daemon=True).start()
sys.argv = sys.argv[3:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


@dataclass
class TiedProcess:
    """A child started by ``spawn_tied``; ``process.pid`` also names its process group."""

    process: subprocess.Popen[bytes]
    _tie: int
    """The write end of the tie: closing it (or this process ending) ends the child."""

    def stop(self, timeout_s: float) -> None:
        """SIGTERM the child, SIGKILL it after ``timeout_s``; then end its group."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.kill_group()

    def kill_group(self) -> None:
        """SIGKILL whatever is left of the child's process group, and cut the tie."""
        with suppress(ProcessLookupError, PermissionError):  # the group is empty
            os.killpg(self.process.pid, signal.SIGKILL)
        if self._tie >= 0:
            os.close(self._tie)
            self._tie = -1
        if self.process.poll() is None:
            self.process.wait()


def spawn_tied(module: str, args: list[str], env: dict[str, str]) -> TiedProcess:
    """Run ``python -m module args`` as a child that dies, with everything it starts,
    when this process ends, even by SIGKILL, from whichever thread it was started.

    The child leads a new process group (so a Ctrl-C to the terminal does not reach it
    before ``stop`` does) and holds the read end of a pipe whose write end stays here.
    """
    tie_read, tie_write = os.pipe()  # both ends close-on-exec: no other child inherits them
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _TIE_SOURCE, str(tie_read), "--", module, *args],
            env=env,
            pass_fds=(tie_read,),
            start_new_session=True,
        )
    except BaseException:
        os.close(tie_write)
        raise
    finally:
        os.close(tie_read)
    return TiedProcess(process, tie_write)


def _free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answer(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _become_ready(api_url: str, process: subprocess.Popen[bytes] | None, timeout_s: float) -> None:
    """Wait until the server answers its health check; raise if it died (``process``,
    when it is this process's child) or never did."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(
                f"the temporary Prefect server exited with code {process.returncode}"
            )
        if _answer(f"{api_url}/health"):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the temporary Prefect server did not answer in {timeout_s:g} s")


def _watch_ready(api_url: str, process: subprocess.Popen[bytes], timeout_s: float) -> Future[None]:
    """``_become_ready`` on a daemon thread: a server that never answers must not keep
    the process alive."""
    return in_thread(
        partial(_become_ready, api_url, process, timeout_s), "prefect-server-ready", daemon=True
    )


@dataclass
class LocalServer:
    """A Prefect API server child process at ``api_url`` (None: an API was configured).

    ``ready``: the server becoming ready, watched from a thread from its start on.
    """

    api_url: str
    process: subprocess.Popen[bytes] | None
    ready: Future[None] | None = None
    tied: TiedProcess | None = None
    """The server's tie to this process (None: an API was configured)."""

    def wait_ready(self, timeout_s: float = _READY_TIMEOUT_S) -> None:
        """Block until the API answers (see ``_become_ready``); raise if it died or never did."""
        if self.process is None:
            return
        if self.ready is None:
            self.ready = _watch_ready(self.api_url, self.process, timeout_s)
        try:
            self.ready.result(timeout=timeout_s)
        except TimeoutError:
            raise RuntimeError(
                f"the temporary Prefect server did not answer in {timeout_s:g} s"
            ) from None

    @contextmanager
    def applied(self) -> Iterator[None]:
        """Point Prefect at this API for the block, even if Prefect was imported before.

        Prefect reads ``PREFECT_API_URL`` once, at import; in a process that imported
        it earlier (a test session, a notebook), only its settings context can move it.
        """
        from prefect.settings import PREFECT_API_URL, temporary_settings

        with temporary_settings(updates={PREFECT_API_URL: self.api_url}):
            yield

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the server gracefully (it flushes recorded runs), killing it if it hangs.

        Log lines and events this process has queued for the API are delivered first.
        """
        if self.tied is None:
            return
        if self.tied.process.poll() is None:
            deliver_queued_records(timeout_s)
        self.tied.stop(timeout_s)


def deliver_queued_records(timeout_s: float) -> None:
    """Send the log lines and events Prefect has queued in this process, waiting up to
    ``timeout_s`` for each kind.

    Prefect ships them from background workers in batches (every 2 s by default) and
    sends what is left at interpreter exit. Against a temporary server that exit is
    too late: the server has stopped, and each batch is retried for ~60 s before it
    fails with "Error logging to API". How late the last batch is depends on load, so
    only delivering before the server stops makes the run's last lines land.
    """
    if "prefect.logging.handlers" not in sys.modules:
        return  # Prefect never ran here: nothing is queued
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        return  # draining would block this thread's own event loop; exit sends them
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=timeout_s)
    EventsWorker.drain_all(timeout=timeout_s)


def _configured_api() -> str | None:
    """The API Prefect would use: its settings if imported (a test harness sets them), else the
    environment."""
    if "prefect.settings" in sys.modules:
        from prefect.settings import PREFECT_API_URL

        value: str | None = PREFECT_API_URL.value()
        return value
    return os.environ.get("PREFECT_API_URL")


@contextmanager
def local_prefect_api() -> Iterator[LocalServer]:
    """Start a temporary Prefect API unless ``PREFECT_API_URL`` names one; stop it after.

    Call after ``configure_prefect_environment`` (the server keeps its database in
    ``PREFECT_HOME``) and before importing Prefect, which reads ``PREFECT_API_URL``
    at import. The variable is set for this process (and the task runners' worker
    processes, which inherit it) while the context is open.
    """
    configured = _configured_api() or standing_api(_prefect_home())
    if configured:
        yield LocalServer(configured, None)
        return
    server = start_temporary_server(os.environ)
    os.environ["PREFECT_API_URL"] = server.api_url
    try:
        yield server
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        server.stop()


def start_temporary_server(env: Mapping[str, str]) -> LocalServer:
    """Start a temporary Prefect API server (UI and automations off) as a tied child with
    the environment ``env``, whose ``PREFECT_HOME`` holds its database; it is watched
    from now on until it answers (``wait_ready``). The caller stops it (``stop``)."""
    port = _free_port()
    args = ["--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1"]
    args += ["--port", str(port), "--log-level", "error", "--lifespan", "on"]
    tied = spawn_tied("uvicorn", args, {**env, **_SERVER_ENV})
    api_url = f"http://127.0.0.1:{port}/api"
    # Watched from now on, while this process imports.
    ready = _watch_ready(api_url, tied.process, _READY_TIMEOUT_S)
    return LocalServer(api_url, tied.process, ready, tied)


def _prefect_home() -> Path | None:
    home = os.environ.get("PREFECT_HOME")
    return Path(home) if home else None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def standing_api(home: Path | None) -> str | None:
    """The API of the standing server recorded in Prefect home ``home``, if its process
    lives and the API answers its health check; else None (a stale record is ignored)."""
    if home is None:
        return None
    try:
        record = json.loads((home / STANDING_RECORD).read_text(encoding="utf-8"))
        api_url, pid = str(record["api_url"]), int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _process_alive(pid) or not _answer(f"{api_url}/health"):
        return None
    return api_url


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop ``critiquebench server`` cleanly (Ctrl-C, and what ``kill`` and
service managers send)."""


def _wait_unless_stopped(process: subprocess.Popen[bytes], poll_s: float = 0.2) -> int:
    """Wait for ``process`` to exit and return its code; return 0 once a stop signal
    arrives instead.

    The handlers are set here, explicitly, for the time of the wait: a SIGINT disposition
    inherited as "ignore" (Python keeps it and installs no KeyboardInterrupt) left the
    server deaf to Ctrl-C, and a blocking ``waitpid`` that a signal does not interrupt
    never lets Python run its handler. Polling with a short timeout lets the handler
    run whichever thread the kernel delivered the signal to.
    """
    stop: list[int] = []

    def on_stop(signum: int, frame: object) -> None:
        stop.append(signum)

    previous = {number: signal.signal(number, on_stop) for number in STOP_SIGNALS}
    try:
        while not stop:
            with suppress(subprocess.TimeoutExpired):
                return process.wait(timeout=poll_s)
        return 0
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def serve_standing(home: Path, port: int, on_ready: Callable[[str], None]) -> int:
    """Run a Prefect API (with its UI) for Prefect home ``home`` on 127.0.0.1:``port``
    until it exits or this process gets SIGINT or SIGTERM (then 0); return the server's
    exit code.

    While it answers, ``STANDING_RECORD`` in ``home`` names it, so runs of this
    project report to it (see ``local_prefect_api``). The record goes when the server
    does; one left by a killed process names a dead pid and is ignored.
    """
    if standing_api(home) is not None:
        raise RuntimeError(f"a standing Prefect server already serves {home}")
    args = ["--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1"]
    args += ["--port", str(port), "--log-level", "warning", "--lifespan", "on"]
    tied = spawn_tied("uvicorn", args, {**os.environ, **_STANDING_ENV})
    api_url = f"http://127.0.0.1:{port}/api"
    record = home / STANDING_RECORD
    try:
        _become_ready(api_url, tied.process, _READY_TIMEOUT_S)
        partial_record = record.with_suffix(".tmp")
        partial_record.write_text(
            json.dumps({"api_url": api_url, "pid": os.getpid()}), encoding="utf-8"
        )
        partial_record.replace(record)  # a reader sees the whole record or none
        on_ready(api_url)
        return _wait_unless_stopped(tied.process)
    finally:
        with suppress(OSError, ValueError, KeyError):
            if json.loads(record.read_text(encoding="utf-8"))["pid"] == os.getpid():
                record.unlink()
        tied.stop(10.0)
