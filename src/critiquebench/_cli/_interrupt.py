"""Ctrl-C during ``critiquebench run``: the first asks the run to stop scheduling
units (those running finish and are kept), the second ends the process at once."""

from __future__ import annotations

import os
import shlex
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from critiquebench.pipeline import Root, clear_stop, request_stop

INTERRUPTED_EXIT = 130
"""Exit code of a run stopped by Ctrl-C (128 + SIGINT, what shells report)."""


def resume_command(run_id: str, output: Root, default_output: Root) -> str:
    """The command that resumes ``run_id``: ``critiquebench resume RUN`` (and the
    ``--output`` it is under, when that is not the default)."""
    words = ["critiquebench", "resume", run_id]
    if isinstance(output, Path) and isinstance(default_output, Path):
        default = output.resolve() == default_output.resolve()
    else:
        default = str(output) == str(default_output)
    if not default:
        words += ["--output", str(output)]
    return shlex.join(words)


def _say(line: str) -> None:
    # os.write, not print: a signal handler must not take the locks a stream holds.
    os.write(2, (line + "\n").encode("utf-8", errors="replace"))


@contextmanager
def stop_on_interrupt(output: Root, run_id: str, resume: str) -> Iterator[None]:
    """While inside: Ctrl-C (SIGINT) asks the run to stop (``request_stop``); a second
    one ends the process with exit code 130, naming ``resume``. A stop request left
    by an earlier start is withdrawn first."""
    clear_stop(output, run_id)
    presses = 0

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            request_stop(output, run_id)
            _say(
                "stopping: no new units start, the running ones finish and are kept "
                "(Ctrl-C again to quit at once)"
            )
            return
        _say(f"interrupted; resume with: {resume}")
        os._exit(INTERRUPTED_EXIT)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
