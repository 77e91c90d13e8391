"""Asking a run to stop scheduling units: a file in the run's folder.

A file, not a flag in memory, so every process that runs units (the CLI's threads,
Dask or Ray workers on the same machine) sees the request: a unit about to start
checks for it (one ``stat``) and is left for a resume instead.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from critiquebench.pipeline._catalog import OWNER_FOLDER
from critiquebench.pipeline._location import Root

STOP_FILE = "stop"


def stop_path(output: Root, run_id: str) -> Root:
    """The file whose presence asks run ``run_id`` under ``output`` to stop."""
    return output / run_id / OWNER_FOLDER / STOP_FILE


def request_stop(output: Root, run_id: str) -> None:
    """Ask the run to start no more units; the units running finish and are written.

    Safe in a signal handler: one ``open`` and ``close``, no locks taken.
    """
    path = stop_path(output, run_id)
    if not isinstance(path, Path):  # an object store: an empty object says it
        path.write_bytes(b"")
        return
    with contextlib.suppress(FileExistsError, FileNotFoundError):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))


def stop_requested(output: Root, run_id: str) -> bool:
    """Whether the run was asked to stop."""
    return stop_path(output, run_id).exists()


def clear_stop(output: Root, run_id: str) -> None:
    """Withdraw a stop request (a new start of the run, or the interrupted one ending)."""
    stop_path(output, run_id).unlink(missing_ok=True)
