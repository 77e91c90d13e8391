"""One call in a short-lived child process that imported its modules ahead of time.

A run's process keeps every module it imports, and the memory the module's work
touched, to its end: Great Expectations and pandas for the data-quality check
(~270 MiB), the chart renderer for the report (~90 MiB). A ``WarmChild`` starts at
once and imports the modules named, so that the import overlaps the parent's own
work; ``call`` then hands it one function and its arguments (pickled, through a
private file), and ``result`` waits for the value and what the child cost.

Run as ``python -m critiquebench.warm_child FOLDER MODULE...``; the child starts the
call when a line arrives on its standard input, and stops at end of input without one.
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from critiquebench.peak_memory import peak_rss_mib

T = TypeVar("T")

_STDERR_SHOWN = 2000
_CALL = "call.pickle"
_RESULT = "result.pickle"


@dataclass(frozen=True)
class ChildResult(Generic[T]):
    """A call's value, and what the child process cost."""

    value: T
    peak_rss_mib: float
    """Peak resident memory of the child process itself (not its parent's, see
    ``critiquebench.peak_memory``)."""
    seconds: float
    """Wall time from starting the child to the value."""


class WarmChild(Generic[T]):
    """A child process that imports ``modules`` now and runs one call later."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = tuple(modules)
        self._folder = tempfile.TemporaryDirectory(prefix="critiquebench-child-")
        self._path = Path(self._folder.name)
        self._started = time.monotonic()
        # The child finds what this process finds (a user's own arm module, say).
        path = os.pathsep.join(entry for entry in sys.path if entry)
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(self._path), *modules],
            env={**os.environ, "PYTHONPATH": path},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,  # libraries print progress bars there
            stderr=subprocess.PIPE,
        )

    def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> None:
        """Start ``function(*args, **kwargs)`` in the child (a module-level function)."""
        (self._path / _CALL).write_bytes(pickle.dumps((function, args, kwargs)))
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(b"go\n")
            self._process.stdin.flush()  # result() closes it
        except BrokenPipeError:  # it died early; result() says why
            pass

    def result(self, timeout_s: float | None = None) -> ChildResult[T]:
        """The call's value; an exception it raised is raised here.

        Raises:
            RuntimeError: the child died without a value (its stderr is quoted), or
                did not finish in ``timeout_s``.
        """
        try:
            stderr = self._process.communicate(timeout=timeout_s)[1]
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.communicate()
            self._folder.cleanup()
            raise RuntimeError(f"the child process did not finish in {timeout_s:g} s") from None
        try:
            result = self._path / _RESULT
            if not result.exists():
                text = stderr.decode("utf-8", "replace")[-_STDERR_SHOWN:]
                raise RuntimeError(
                    f"the child process exited with code {self._process.returncode} "
                    f"and no result:\n{text}"
                )
            # Our own child, same code and interpreter: a pickle keeps the value exact.
            failed, value, peak = pickle.loads(result.read_bytes())
        finally:
            self._folder.cleanup()
        if failed:
            raise value
        return ChildResult(value, peak, time.monotonic() - self._started)


def _main(folder: Path, modules: list[str]) -> None:
    for module in modules:
        importlib.import_module(module)
    if not sys.stdin.readline():  # the parent went away, or wants nothing after all
        return
    function, args, kwargs = pickle.loads((folder / _CALL).read_bytes())
    try:
        outcome: tuple[bool, Any] = (False, function(*args, **kwargs))
    except Exception as exc:  # handed to the parent, which raises it
        outcome = (True, exc)
    (folder / _RESULT).write_bytes(pickle.dumps((*outcome, peak_rss_mib())))


if __name__ == "__main__":
    _main(Path(sys.argv[1]), sys.argv[2:])
