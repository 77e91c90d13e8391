"""Work split between this process and a fork of it, for CPU-bound work after slow imports.

The data-quality child has Great Expectations imported and the run's frames in
memory; a fork starts with both at no cost (its pages are shared until written),
so validating some tables there and the others here uses a second core without a
second import. Only on Linux: elsewhere (macOS) forking a process that loaded
native libraries is not safe, and the work runs here, one part after the other.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")


def both(there: Callable[[], T], here: Callable[[], U]) -> tuple[T, U]:
    """``(there(), here())``, with ``there`` run in a forked process meanwhile.

    An exception ``there`` raised is raised here (after ``here`` finished).
    """
    if sys.platform != "linux":
        return there(), here()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the fork: run, hand the outcome over, and leave without cleanup
        os.close(read)
        code = 0
        try:
            try:
                data = pickle.dumps((True, there()))
            except Exception as exc:  # raised in the parent
                data = pickle.dumps((False, exc))
            with os.fdopen(write, "wb") as pipe:
                pipe.write(data)
        except BaseException:  # nothing to hand over: the parent reports the exit
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    try:
        mine = here()
    finally:
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"the forked process exited with status {status} and no result")
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value, mine
