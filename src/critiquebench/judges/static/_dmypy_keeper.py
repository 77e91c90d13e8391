"""The static checkers' keeper: a tiny process that makes a server die with its starter.

Run as a script, never imported by the library:
``python -P _dmypy_keeper.py STARTER_PID --exec IN_FD OUT_FD PROGRAM ARGS...`` keeps a
program (mypy's update loop, ``_mypy_loop.py``, or ruff's server) whose stdin and stdout
are the inherited pipes ``IN_FD`` and ``OUT_FD``. The static checker starts it with a
pipe on its stdin that only the checker's process holds open: the *lifeline*. The keeper
forks the program and waits. (The file's name is from when it kept ``dmypy daemon``.)

Why two processes: mypy spends its time in mypyc-compiled code, which need not give a
watcher thread the interpreter, so it cannot reliably watch for its own orphaning
mid-check; and ``PR_SET_PDEATHSIG`` is tied to the *thread* that forked a process, which
in the checker may be a short-lived one (the warm-up thread). Here the program's parent
is the keeper's only thread, so the kernel kills the program (SIGKILL) when the keeper
dies, however it dies; and the keeper is idle in ``select``, so it sees the lifeline
close (its starter exited, was killed, or closed the checker) or itself orphaned at once
and kills the program. A program given ``--status-file PATH`` has its status file removed
after it; a starter that stops the program itself says ``stop`` on the lifeline first,
and a lifeline that closes without it means the starter died: then the keeper removes
the starter's private folder too (the one holding the status file), which a killed
starter cannot.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_POLL_S = 1.0
STOP = b"stop\n"
"""What the starter writes on the lifeline before it closes it to stop the daemon."""
_REAPED, _STOPPED, _STARTER_DIED = "reaped", "stopped", "starter died"


def main(argv: list[str]) -> int:
    """Keep the program (``argv[4:]``) alive while the starter (pid ``argv[0]``) holds
    stdin."""
    starter = int(argv[0])
    keeper = os.getpid()
    if os.getppid() != starter:
        return 1  # the starter is gone already
    if argv[1:2] != ["--exec"]:
        return 2
    pipes, served = (int(argv[2]), int(argv[3])), argv[4:]
    daemon = os.fork()
    if daemon == 0:
        _run_program(keeper, pipes, served)
    for end in pipes:  # the program's now; held here, they would outlive it
        os.close(end)
    ended = _REAPED
    try:
        ended = _watch(starter, daemon)
    finally:
        if ended != _REAPED:  # never signal a pid already reaped: it may be another's by now
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(daemon, signal.SIGKILL)
                os.waitpid(daemon, 0)
        _clean(served, starter_died=ended == _STARTER_DIED)
    return 0


def _die_with(keeper: int) -> None:
    # Armed in the fork, before anything runs: the kernel kills it with the keeper.
    if sys.platform == "linux":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != keeper:  # the keeper died before the signal was armed
        os._exit(1)


def _run_program(keeper: int, pipes: tuple[int, int], args: list[str]) -> None:
    # In the fork: the parent-death signal survives exec (the program is not set-uid).
    try:
        _die_with(keeper)
        os.dup2(pipes[0], 0)
        os.dup2(pipes[1], 1)
        for end in pipes:
            if end > 1:
                os.close(end)
        os.execv(args[0], args)
    finally:
        os._exit(127)


def _watch(starter: int, daemon: int) -> str:
    """Wait for a reason to stop: the daemon ended (and was reaped), the starter asked,
    or the starter died."""
    said = b""
    while True:
        ready, _, _ = select.select([0], [], [], _POLL_S)
        if ready:
            data = os.read(0, 512)
            said += data
            if not data:  # the lifeline closed: the starter is done or dead
                return _STOPPED if said.endswith(STOP) else _STARTER_DIED
        if os.getppid() != starter:
            return _STARTER_DIED  # orphaned (a fork of the starter may hold the lifeline)
        done, _ = os.waitpid(daemon, os.WNOHANG)
        if done:
            return _REAPED  # the daemon stopped (idle timeout, a crash): nothing left to keep


def _clean(args: list[str], *, starter_died: bool) -> None:
    # A killed program leaves its status file (and the starter's folder, if it died).
    if "--status-file" not in args:
        return
    status = Path(args[args.index("--status-file") + 1])
    if starter_died:  # the status file is in the starter's private folder: all of it goes
        shutil.rmtree(status.parent, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            status.unlink()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
