"""`critiquebench server` stops on SIGINT or SIGTERM even when it was started with
SIGINT ignored, and returns the server's own code when the server ends first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from critiquebench.runtime.prefect_server import _wait_unless_stopped


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30); raise SystemExit(7)"]
    )
    yield process
    process.kill()
    process.wait()


def _signal_self_soon(signum: int) -> None:
    threading.Timer(0.3, os.kill, (os.getpid(), signum)).start()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_ends_the_wait_though_sigint_was_ignored(
    sleeper: subprocess.Popen[bytes], signum: int
) -> None:
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell's background job inherits it
    try:
        _signal_self_soon(signum)
        assert _wait_unless_stopped(sleeper) == 0
        assert sleeper.poll() is None  # stopping the server is the caller's next step
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # the handler was put back
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_the_servers_own_code_is_returned_when_it_ends_first() -> None:
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert _wait_unless_stopped(process) == 3
