"""Work in a fork of this process, for CPU-bound work after slow imports.

The data-quality child has Great Expectations imported and the run's frames in
memory; a fork starts with both at no cost (its pages are shared until written),
so validating some tables there and the others here uses a second core without a
second import, and a validation that may have to be dropped half-way (the rows of
units still landing) can be stopped by killing its fork. Only on Linux: elsewhere
(macOS) forking a process that loaded native libraries is not safe; ``both`` then
runs the work here, one part after the other, and ``CAN_FORK`` is False.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U")

CAN_FORK = sys.platform == "linux"


class Forked(Generic[T]):
    """``function()`` running in a forked process (at this process's priority) from now on.

    ``fileno`` is readable once the value is ready (for ``select``); ``result`` waits
    for it, ``kill`` drops it.
    """

    def __init__(self, function: Callable[[], T]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the fork: run, hand the outcome over, and leave without cleanup
            os.close(read)
            _run_and_exit(function, write)
        os.close(write)
        self._read, self._pid = read, pid
        self._done = False

    def fileno(self) -> int:
        """The pipe the value comes through."""
        return self._read

    def result(self) -> T:
        """The value; an exception the function raised is raised here."""
        with os.fdopen(self._read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._done = True
        if not data:
            raise RuntimeError(f"the forked process exited with status {status} and no result")
        ok, value = pickle.loads(data)
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def kill(self) -> None:
        """Stop the fork without its value (nothing to do once ``result`` returned)."""
        if self._done:
            return
        self._done = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        os.waitpid(self._pid, 0)
        os.close(self._read)


def _run_and_exit(function: Callable[[], object], write: int) -> None:
    # The collector would visit every object inherited, and so copy every page holding
    # one (copy-on-write): CPU time and memory for nothing. Inherited objects are left
    # out of its rounds; what the fork makes is still collected.
    gc.freeze()
    code = 0
    try:
        try:
            data = pickle.dumps((True, function()))
        except Exception as exc:  # raised in the parent
            data = pickle.dumps((False, exc))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
    except BaseException:  # nothing to hand over: the parent reports the exit
        code = 1
    finally:
        os._exit(code)


def both(there: Callable[[], T], here: Callable[[], U]) -> tuple[T, U]:
    """``(there(), here())``, with ``there`` run in a forked process meanwhile.

    An exception ``there`` raised is raised here (after ``here`` finished).
    """
    if not CAN_FORK:
        return there(), here()
    forked = Forked(there)
    try:
        mine = here()
    except BaseException:
        with contextlib.suppress(Exception):  # reaped; the error here is the one to see
            forked.result()
        raise
    return forked.result(), mine
