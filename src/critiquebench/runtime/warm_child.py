"""One call in a short-lived child process that imported its modules ahead of time.

A run's process keeps every module it imports, and the memory the module's work
touched, to its end: Great Expectations and pandas for the data-quality check
(~270 MiB), the chart renderer for the report (~90 MiB). A ``WarmChild`` starts at
once, imports the modules named and runs an optional warm-up (work that needs no
data, e.g. bundling the chart library), so all of that overlaps the parent's own
work; at a raised ``nice`` value it takes only CPU time the parent leaves idle.
``call`` then hands it one function and its arguments (pickled, through a private
file) and gives it back the parent's priority, and ``result`` waits for the value
and what the child cost. A call can stop half-way until the parent lets it go on
(``wait_for_parent`` in the child, ``go_on`` in the parent): e.g. read the run's
files while another check runs, then report once the run's end is recorded.

Measured gain, on the report's child (``pipeline/_report_child.py``): 1.8 s median of
the phase after a 984-unit run's units on a quiet host, ~6% of its wall time. The
check's child is there first for its memory: ~270 MiB of Great Expectations and pandas
kept out of the run's process (fdca5ac).

A process that has imported the child's modules already (``imported``) gains nothing
from a child: the memory is taken, and the child would only import them a second time
(~4 CPU-s for the check's, ~1.5 for the report's, on 2 cores). Made with
``in_process=True``, a ``WarmChild`` starts no process and runs its call in this one
when ``result`` is asked for: the same function on the same arguments. Measured, in a
process that had checked and reported a run before: a 12-unit run's check and report
took 2.6 CPU-s (3.8 s wall) in it instead of 9.7 CPU-s (16.4 s wall) with the two
children (medians of 5 interleaved pairs, load 3-6).

Run as ``python -m critiquebench.runtime.warm_child FOLDER MODULE...``; the child starts
the call when a line arrives on its standard input, and stops at end of input without one.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from critiquebench.runtime.peak_memory import peak_rss_mib

T = TypeVar("T")

_STDERR_SHOWN = 2000
_CALL = "call.pickle"
_RESULT = "result.pickle"
_WARM_UP = "warm_up.pickle"
_PARENT_VARIABLE = "CRITIQUEBENCH_WARM_CHILD_PARENT"
_PARENT_LOOK_S = 0.5
_HERE: contextvars.ContextVar[bool] = contextvars.ContextVar("warm_child_here", default=False)
"""Set while a call runs in the parent's own process (``in_process``)."""


def imported(modules: Sequence[str]) -> bool:
    """Whether this process has imported every one of ``modules`` (see the module doc)."""
    return all(module in sys.modules for module in modules)


@dataclass(frozen=True)
class ChildResult(Generic[T]):
    """A call's value, and what the child process cost."""

    value: T
    peak_rss_mib: float
    """Peak resident memory of the child process itself (not its parent's, see
    ``critiquebench.runtime.peak_memory``)."""
    seconds: float
    """Wall time from the call to the value."""
    in_process: bool = False
    """The call ran in the parent's process (``peak_rss_mib`` is then the parent's)."""

    @property
    def where(self) -> str:
        """Where the call ran, for a log line: "this process" or "a child process"."""
        return "this process" if self.in_process else "a child process"


class WarmChild(Generic[T]):
    """A child process that imports ``modules`` now and runs one call later.

    ``warm_up``: a module-level function the child runs after the imports, before the
    call (its value is dropped; what it caches stays). ``nice``: how much lower the
    child's CPU priority is until the call arrives (0: as the parent's). ``in_process``:
    start no process; ``result`` runs the call here (see the module doc).
    """

    def __init__(
        self,
        modules: Sequence[str],
        warm_up: Callable[[], object] | None = None,
        nice: int = 0,
        in_process: bool = False,
    ) -> None:
        self.modules = tuple(modules)
        self.in_process = in_process
        self._called = time.monotonic()
        self._call: tuple[Callable[..., T], tuple[Any, ...], dict[str, Any]] | None = None
        if in_process:
            return
        self._folder = tempfile.TemporaryDirectory(prefix="critiquebench-child-")
        self._path = Path(self._folder.name)
        self._nice = nice
        self._priority = os.getpriority(os.PRIO_PROCESS, 0)
        if warm_up is not None:
            (self._path / _WARM_UP).write_bytes(pickle.dumps(warm_up))
        # The child finds what this process finds (a user's own arm module, say).
        path = os.pathsep.join(entry for entry in sys.path if entry)
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(self._path), *modules],
            env={**os.environ, "PYTHONPATH": path, _PARENT_VARIABLE: str(os.getpid())},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,  # libraries print progress bars there
            stderr=subprocess.PIPE,
            # Out of the terminal's process group: a Ctrl-C is the parent's to handle
            # (a run asked to stop still checks and reports what it completed), and a
            # child that got it too died mid-import, failing the check it was there for.
            # It ends with its parent all the same (``_exit_with_parent``).
            start_new_session=True,
        )
        if nice:  # set from here, so that a call made at once cannot come before it
            with contextlib.suppress(ProcessLookupError):
                os.setpriority(os.PRIO_PROCESS, self._process.pid, min(self._priority + nice, 19))

    def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> None:
        """Start ``function(*args, **kwargs)`` in the child (a module-level function)."""
        if self.in_process:  # run by result(), which is what waits for it
            self._call = (function, args, kwargs)
            self._called = time.monotonic()
            return
        (self._path / _CALL).write_bytes(pickle.dumps((function, args, kwargs)))
        self._called = time.monotonic()
        if self._nice:
            # The call is what this process waits for now, so the child gets its priority
            # back at once, mid-import if need be: on a busy machine a niced child barely
            # runs. Raising a priority needs privileges; without them it stays niced.
            with contextlib.suppress(PermissionError, ProcessLookupError):
                os.setpriority(os.PRIO_PROCESS, self._process.pid, self._priority)
        self._send()

    def go_on(self) -> None:
        """Let the call go on past its ``wait_for_parent``."""
        if not self.in_process:  # in this process the call waits for nothing
            self._send()

    def _send(self) -> None:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(b"go\n")
            self._process.stdin.flush()  # result() closes it
        except BrokenPipeError:  # it died early; result() says why
            pass

    def close(self) -> None:
        """Stop a child whose result is not wanted (any more), and remove its files.

        Nothing to do after ``result``."""
        if self.in_process:
            self._call = None
            return
        if self._process.returncode is None:
            self._process.kill()
            self._process.communicate()
        self._folder.cleanup()

    def result(self, timeout_s: float | None = None) -> ChildResult[T]:
        """The call's value; an exception it raised is raised here.

        In this process (``in_process``) the call runs now, with no ``timeout_s``.

        Raises:
            RuntimeError: the child died without a value (its stderr is quoted), or
                did not finish in ``timeout_s``; in this process: no call was made.
        """
        if self.in_process:
            return self._run_here()
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
        return ChildResult(value, peak, time.monotonic() - self._called)

    def _run_here(self) -> ChildResult[T]:
        if self._call is None:
            raise RuntimeError("no call to run in this process")
        function, args, kwargs = self._call
        self._call = None
        token = _HERE.set(True)
        try:
            value = function(*args, **kwargs)
        finally:
            _HERE.reset(token)
        return ChildResult(value, peak_rss_mib(), time.monotonic() - self._called, in_process=True)


def wait_for_parent() -> bool:
    """In a call running in a ``WarmChild``: wait until the parent calls ``go_on``.

    False when the parent went away (or closed the child's input) instead. True at once
    in the parent's own process (``in_process``): the parent asked for the result.
    """
    if _HERE.get():
        return True
    return bool(sys.stdin.readline())


def _exit_with_parent(parent: int, folder: Path) -> None:
    """End this process as soon as ``parent`` is gone (this process is re-parented).

    The end of input says the same, but only once the imports and the warm-up are
    done: seconds of CPU, or a minute at a raised ``nice`` on a loaded host, that a
    killed run's child would otherwise go on spending. A thread of its own, watching
    the parent process rather than the thread that started the child. The private
    folder goes too: a killed parent cannot remove it.
    """
    while os.getppid() == parent:
        time.sleep(_PARENT_LOOK_S)
    shutil.rmtree(folder, ignore_errors=True)
    os._exit(1)


def _orphaned(parent: int, wait_s: float) -> bool:
    """Whether ``parent`` is gone, waiting up to ``wait_s`` to see it.

    A dying parent's open files close before its children are re-parented, so the end
    of input can come a moment before the new parent shows.
    """
    deadline = time.monotonic() + wait_s
    while os.getppid() == parent:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _main(folder: Path, modules: list[str], parent: int) -> None:
    for module in modules:
        importlib.import_module(module)
    if (folder / _WARM_UP).exists():
        # Only work done ahead: if it fails, the call does it again and says why.
        with contextlib.suppress(Exception):
            pickle.loads((folder / _WARM_UP).read_bytes())()
    if not sys.stdin.readline():  # the parent went away, or wants nothing after all
        if _orphaned(parent, _PARENT_LOOK_S):  # then nobody else removes the folder
            shutil.rmtree(folder, ignore_errors=True)
        return
    function, args, kwargs = pickle.loads((folder / _CALL).read_bytes())
    try:
        outcome: tuple[bool, Any] = (False, function(*args, **kwargs))
    except Exception as exc:  # handed to the parent, which raises it
        outcome = (True, exc)
    (folder / _RESULT).write_bytes(pickle.dumps((*outcome, peak_rss_mib())))


if __name__ == "__main__":
    _parent = int(os.environ.get(_PARENT_VARIABLE) or os.getppid())
    threading.Thread(
        target=_exit_with_parent,
        args=(_parent, Path(sys.argv[1])),
        name="exit-with-parent",
        daemon=True,
    ).start()
    _main(Path(sys.argv[1]), sys.argv[2:], _parent)
