"""Ending a process that has done its work without the interpreter's teardown."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` as a normal exit would, less the teardown.

    A normal exit runs the exit handlers (``atexit``: Prefect's last log lines, the
    judge's sandbox workers and mypy daemon, temporary folders) and then frees every
    object one by one, which with Prefect, DuckDB and the analysis loaded takes
    0.5-1 s (the run's files are written and closed by then). Here the handlers run
    and the standard streams are flushed, then the process ends. While another
    non-daemon thread still runs, a normal exit would wait for it: then the exit is
    a normal one.
    """
    this = threading.current_thread()
    if any(t.is_alive() and not t.daemon and t is not this for t in threading.enumerate()):
        sys.exit(code)
    # The interpreter's own exit runs these same handlers, in the same order.
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken stream has nothing to keep
            stream.flush()
    os._exit(code)
