"""Warm sandbox workers: bubblewrap around a pre-started interpreter that forks per attempt.

Where bubblewrap (``bwrap``) is installed and works, each worker runs in private PID,
mount, network, IPC, UTS and user namespaces, sees only a read-only view of the system
libraries and the interpreter (no project folder, suites, caches, Prefect state or home
folders), a private ``/tmp`` and ``/dev/shm``, and never runs as a user that owns
anything on the host: as root, the worker runs as ``nobody`` in a user namespace that
the judge maps itself, so the interpreter's library stays readable wherever Python is
installed. Per attempt, the worker adds fresh namespaces again (see ``_worker.py``).

Where bubblewrap is missing or refused, the same worker runs directly, with the fences
the kernel still grants, and :attr:`Sandbox.description` says so in words. It never
runs a candidate as root: as root it switches to ``nobody``, and where ``nobody``
cannot run the interpreter the sandbox is refused (:func:`fallback_refusal`, checked
before a run starts) unless ``CRITIQUEBENCH_SANDBOX=fallback-as-root`` opts in by name.

Measured gain of warm workers (against a fresh worker per attempt, the same fences):
on the replay run of 20 HumanEval cases x arms A, B x 3 reps (120 units, 180 attempts)
at concurrency 2, the fresh workers took 12.4 and 13.5 CPU-s against 6.5 and 7.3, and
their units 84.6 and 69.5 s against 17.4 and 10.9 s: ~33 ms of CPU and ~0.35 s of wall
per attempt on a host at load 17-25 (``bench/pipeline.py --ab fresh-sandbox --quick
--paths library --concurrency 2``, two pairs in turn), ~50 CPU-s of a 1,000-unit run.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

_WORKER_SOURCE = Path(__file__).with_name("_worker.py")
_LAUNCHER_SOURCE = Path(__file__).with_name("_launcher.py")
_CHILD_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
_START_TIMEOUT_S = 30.0
_WORKERS_PER_CORE = 4
_FULL_PREFIX = "bubblewrap sandbox:"
SANDBOX_VARIABLE = "CRITIQUEBENCH_SANDBOX"
"""Environment variable choosing the sandbox: unset (bubblewrap where it works), or one
of ``SANDBOX_CHOICES``."""
FORCE_FALLBACK = "fallback"
"""Use the fallback fences even where bubblewrap works (for comparison); never as root."""
FALLBACK_AS_ROOT = "fallback-as-root"
"""Use the fallback fences and, where ``nobody`` cannot run the interpreter, run the
candidate as root: an explicit opt-in, stated in every run's record."""
SANDBOX_CHOICES = (FORCE_FALLBACK, FALLBACK_AS_ROOT)
_NOBODY_UID = 65534
INSTALL_BUBBLEWRAP = "install bubblewrap (e.g. `apt-get install bubblewrap`)"


def is_full_sandbox(description: str) -> bool:
    """True when a sandbox description (e.g. ``runs.sandbox``) says bubblewrap was in force."""
    return description.startswith(_FULL_PREFIX)


class SandboxUnavailable(RuntimeError):
    """A worker could not be started or stopped answering: an infrastructure failure."""


class SandboxRefused(SandboxUnavailable):
    """No sandbox may start here: the fallback would run the candidate as root."""


@dataclass(frozen=True)
class RawAttempt:
    """What the supervisor of one attempt reported, and the attempt's raw output."""

    report: dict[str, Any]
    output: bytes


@dataclass(frozen=True)
class SandboxExtras:
    """Trusted files a judge's own code needs inside the sandbox (e.g. the sql judge's
    DuckDB): bound read-only at their own paths, and imported once per worker.

    Measured gain: a sql attempt no longer imports DuckDB, about 0.1-0.15 s of its
    0.3-0.4 s (ed2c4cc).
    """

    read_only: tuple[Path, ...] = ()
    """Files or folders visible inside bubblewrap (the fallback sees the host's anyway)."""
    import_path: str = ""
    """A folder added to the worker's module path (it runs with ``-I -S``)."""
    imports: tuple[str, ...] = ()
    """Modules the worker imports before its first fork, so attempts start with them."""


@dataclass(frozen=True)
class SandboxMode:
    """How workers are started on this machine, decided once per judge."""

    bubblewrap: bool
    argv: tuple[str, ...]
    map_users: bool
    notes: tuple[str, ...] = ()
    drop_to_nobody: bool = False
    """Fallback only: switch the worker from root to ``nobody`` (bubblewrap maps users itself)."""
    extras: SandboxExtras = field(default_factory=SandboxExtras)
    """What a judge adds for its own trusted code (nothing for the Python judge)."""

    @property
    def description(self) -> str:
        """The fences in words, for the runs table and the report."""
        if self.bubblewrap:
            text = (
                f"{_FULL_PREFIX} private PID, mount, network, IPC and user namespaces; "
                "read-only view of the interpreter and system libraries only; private /tmp, "
                "/dev/shm and IPC objects per attempt; unprivileged user; whole process tree "
                "killed after each attempt; memory capped per process and, by a watchdog, for "
                "the attempt's processes together (no cgroup)"
            )
        else:
            text = (
                "FALLBACK fences (bubblewrap unavailable): resource limits, per-attempt "
                "namespaces where the kernel allows, process tree killed after each "
                "attempt; the candidate can read the host's files"
            )
        return "; ".join((text, *self.notes))


def _python_executable() -> Path:
    """The real interpreter binary (a venv's ``python`` is a symlink to it)."""
    return Path(os.path.realpath(sys.executable))


def _read_only_binds(prefix: Path) -> list[str]:
    args: list[str] = []
    for system in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        args += ["--ro-bind-try", system, system]
    args += ["--ro-bind-try", "/etc/localtime", "/etc/localtime"]
    if not str(prefix).startswith("/usr/"):
        # Same path inside, so the interpreter's own library paths still resolve; the
        # folders above it are created world-traversable and hold nothing else.
        args += _extra_binds((prefix,))
    return args


def _extra_binds(paths: tuple[Path, ...]) -> list[str]:
    """Read-only binds of ``paths`` at their own paths, below world-traversable folders
    (bubblewrap would create the folders above them readable by root only)."""
    args: list[str] = []
    for path in paths:
        for parent in reversed(path.parents[:-1]):
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(path), str(path)]
    return args


def _open_to_others(path: Path, need: int) -> bool:
    """True when a user who is neither owner nor in the group has the permission bits
    ``need`` (of 0o7) on ``path`` and can traverse every folder above it."""
    try:
        if path.stat().st_mode & need != need:
            return False
        return all(part.stat().st_mode & 0o001 for part in path.parents)
    except OSError:
        return False


def _nobody_cannot_run(python: Path, prefix: Path) -> str | None:
    """Why ``nobody`` could not run the interpreter (None: it can).

    The worker starts as root and switches to ``nobody`` before any attempt, so it
    needs the binary's folders traversable and the standard library readable."""
    if not _open_to_others(python, 0o001):
        return f"{python} cannot be run by others"
    if not _open_to_others(prefix / "lib", 0o005):
        return f"{prefix / 'lib'} cannot be read by others"
    return None


def _sandbox_choice() -> str:
    """The value of ``CRITIQUEBENCH_SANDBOX`` ('' when unset); ValueError if unknown."""
    choice = os.environ.get(SANDBOX_VARIABLE, "")
    if choice and choice not in SANDBOX_CHOICES:
        raise ValueError(
            f"{SANDBOX_VARIABLE}={choice!r} is not a sandbox choice: unset it (bubblewrap "
            f"where it works) or use one of {', '.join(SANDBOX_CHOICES)}"
        )
    return choice


def _as_root_refusal(reason: str) -> str | None:
    """The one-line refusal of a fallback that would run the candidate as root here, or
    None (not root, ``nobody`` can run the interpreter, or the user opted in)."""
    if os.geteuid() != 0 or _sandbox_choice() == FALLBACK_AS_ROOT:
        return None
    why = _nobody_cannot_run(_python_executable(), Path(sys.base_prefix).resolve())
    if why is None:
        return None
    return (
        f"the sandbox would run candidate code as root ({reason}, and {why}, so the "
        f"worker cannot switch to nobody): {INSTALL_BUBBLEWRAP}, or set "
        f"{SANDBOX_VARIABLE}={FALLBACK_AS_ROOT} to run candidates as root knowingly"
    )


def fallback_refusal() -> str | None:
    """Why no run may start here, checked before any work and without starting anything:
    bubblewrap is missing (or the fallback is forced) and the fallback would run the
    candidate as root. None when the sandbox may start.

    Bubblewrap installed but refusing to start is found only when a judge starts its
    first worker; the judge then refuses with the same message (every unit an
    infrastructure error), still never running a candidate as root.
    """
    choice = _sandbox_choice()
    if choice:
        return _as_root_refusal(f"{SANDBOX_VARIABLE}={choice}")
    if shutil.which("bwrap") is None:
        return _as_root_refusal("bubblewrap (bwrap) is not installed")
    return None


def _fallback(reason: str) -> SandboxMode:
    """The worker without bubblewrap: as root, ``nobody`` where it can run the
    interpreter; else refused (SandboxRefused) unless the user opted in to root."""
    refusal = _as_root_refusal(reason)
    if refusal is not None:
        raise SandboxRefused(refusal)
    root = os.geteuid() == 0
    python = _python_executable()
    why = _nobody_cannot_run(python, Path(sys.base_prefix).resolve()) if root else None
    drop = root and why is None
    notes = [reason]
    if root and not drop:
        notes.append(
            f"THE CANDIDATE RUNS AS ROOT ({why}; opted in by {SANDBOX_VARIABLE}="
            f"{FALLBACK_AS_ROOT}): it can read and write whatever root can on this host"
        )
    elif root:
        notes.append(f"the candidate runs as the unprivileged user nobody (uid {_NOBODY_UID})")
    return SandboxMode(False, (str(python),), False, tuple(notes), drop_to_nobody=drop)


def detect_mode() -> SandboxMode:
    """Choose bubblewrap when it is installed and can start a worker here."""
    mode, worker = _detect()
    if worker is not None:
        worker.close()
    return mode


def _bubblewrap_argv(
    bwrap: str, python: Path, prefix: Path, extras: SandboxExtras, *, root: bool
) -> list[str]:
    """The command that starts a worker's interpreter ``python`` (installed under
    ``prefix``) inside bubblewrap, with ``extras`` visible."""
    return [
        bwrap,
        *([] if root else ["--unshare-user"]),
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        *(["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"] if root else []),
        # bubblewrap mounts in the order given: the fresh /tmp, /proc and /dev first, so
        # an interpreter or a judge's package that lives below one of them (a virtualenv
        # under /tmp) is bound on top of it rather than hidden under it.
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        *_read_only_binds(prefix),
        *_extra_binds(extras.read_only),
        "--chdir", "/tmp",
        "--", str(python),
    ]  # fmt: skip


def _detect(extras: SandboxExtras | None = None) -> tuple[SandboxMode, Worker | None]:
    """The mode, and the bubblewrap worker started to prove it works (None on fallback)."""
    extras = extras or SandboxExtras()
    bwrap = shutil.which("bwrap")
    python = _python_executable()
    choice = _sandbox_choice()
    if choice:
        reason = f"fallback forced by {SANDBOX_VARIABLE}={choice}"
        return replace(_fallback(reason), extras=extras), None
    if bwrap is None:
        return replace(_fallback("bwrap is not installed"), extras=extras), None
    root = os.geteuid() == 0
    argv = _bubblewrap_argv(bwrap, python, Path(sys.base_prefix).resolve(), extras, root=root)
    mode = SandboxMode(True, tuple(argv), map_users=root, extras=extras)
    try:
        return mode, Worker(mode)
    except SandboxUnavailable as exc:
        return replace(_fallback(f"bwrap refused to start: {exc}"), extras=extras), None


class Worker:
    """One sandboxed interpreter that judges one attempt at a time."""

    def __init__(self, mode: SandboxMode) -> None:
        self.mode = mode
        # Kept open for the worker's lifetime (closed in close()): bubblewrap's errors land here.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        # Bytes read from the worker ahead of the frame being read (its next frame).
        self._pending = bytearray()
        source = _WORKER_SOURCE.read_text(encoding="utf-8")
        argv = [*mode.argv, "-I", "-S", "-B", "-c", source]
        if mode.map_users:
            launcher = _LAUNCHER_SOURCE.read_text(encoding="utf-8")
            argv = [str(_python_executable()), "-I", "-S", "-B", "-c", launcher, json.dumps(argv)]
        # argv is fixed by the judge: model text only ever travels through stdin.
        self._process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=_CHILD_ENV,
            start_new_session=True,
        )
        options = {
            "network": not mode.bubblewrap,
            "drop_to_nobody": mode.map_users or mode.drop_to_nobody,
            "import_path": mode.extras.import_path,
            "imports": list(mode.extras.imports),
        }
        try:
            self._send(options)
            self.facts: dict[str, Any] = json.loads(self._receive(_START_TIMEOUT_S))
            if options["drop_to_nobody"] and self.facts.get("uid") == 0:
                raise SandboxRefused("the sandbox worker stayed root instead of nobody")
        except SandboxUnavailable:
            self.close()
            raise

    @property
    def alive(self) -> bool:
        """False once the worker process has exited."""
        return self._process.poll() is None

    def judge(self, request: dict[str, Any]) -> RawAttempt:
        """Judge one attempt; SandboxUnavailable if the worker died or hung."""
        self.start(request)
        return self.finish(request)

    def start(self, request: dict[str, Any]) -> None:
        """Send one attempt; :meth:`finish` reads its answer (SandboxUnavailable if the
        worker is gone)."""
        self._send(request)

    def finish(self, request: dict[str, Any]) -> RawAttempt:
        """The answer to the attempt :meth:`start` sent; SandboxUnavailable if the worker
        died or hung."""
        # The worker answers within the attempt's wall clock plus its own margin.
        timeout = float(request["wall_s"]) + 40.0
        report = json.loads(self._receive(timeout))
        return RawAttempt(report=report, output=self._receive(timeout))

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        data = json.dumps(message).encode()
        try:
            self._process.stdin.write(struct.pack(">Q", len(data)) + data)
            self._process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise SandboxUnavailable(f"the sandbox worker is gone ({exc}){self._why()}") from exc

    def _receive(self, timeout: float) -> bytes:
        assert self._process.stdout is not None
        stream = self._process.stdout.fileno()
        deadline = time.monotonic() + timeout
        header = self._read(stream, 8, deadline)
        return self._read(stream, struct.unpack(">Q", header)[0], deadline)

    def _read(self, stream: int, size: int, deadline: float) -> bytes:
        """``size`` bytes of the worker's answer. Whatever the pipe holds is read at once:
        an attempt's two frames then cost one wait and one read, not four of each, and
        each wait gives up the GIL, which a busy thread may hold for milliseconds."""
        while len(self._pending) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([stream], [], [], remaining)[0]:
                raise SandboxUnavailable("the sandbox worker stopped answering")
            chunk = os.read(stream, max(size - len(self._pending), 1 << 16))
            if not chunk:
                raise SandboxUnavailable(f"the sandbox worker exited{self._why()}")
            self._pending += chunk
        taken = bytes(self._pending[:size])
        del self._pending[:size]
        return taken

    def _why(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0)
            text = self._stderr.read(2000).decode("utf-8", "replace").strip()
            if text:
                return f": {text.splitlines()[-1]}"
        return ""

    def close(self) -> None:
        """Stop the worker and everything under it."""
        with contextlib.suppress(OSError):
            os.killpg(self._process.pid, 9)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait(timeout=5)
        for pipe in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()
        self._stderr.close()


def default_pool_size() -> int:
    """Most workers a pool keeps: four per usable core (see :class:`Sandbox`)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform (macOS)
        cores = os.cpu_count() or 1
    return _WORKERS_PER_CORE * max(1, cores)


@dataclass
class Sandbox:
    """A pool of warm workers shared by the threads of one judge.

    A worker is started when every running one is busy, up to ``max_workers``; beyond
    that an attempt waits for a worker to come free. Attempts are CPU work on this host,
    so more workers than a few per core add none: at concurrency 64 on 2 cores, every
    unit judging at once started a worker of its own (an interpreter in bubblewrap,
    ~30 ms of CPU and ~0.4 s at load 14 to start). Four per core leaves room for
    attempts that wait (a candidate that sleeps) without a worker per thread.

    Measured gain (issue 24), 0.5 s model calls at concurrency 64, the bound against
    none, in turn (``bench/pipeline.py --ab pool-unbounded --api-bound --paths library
    --concurrency 64``, load 12-28): 200 units, a bound of 6: 14.6 vs 19.8 and 11.6 vs
    14.3 CPU-s, units span 15.9 vs 23.0 and 19.0 vs 27.4 s; the default bound of 8:
    11.4 vs 12.0 and 13.4 vs 14.7 CPU-s, span 23.4 vs 21.5 and 19.0 vs 26.4 s; 328
    units: 19.0 vs 18.8 CPU-s, span 34.3 vs 47.8 s. At concurrency 2 (the replay run)
    no pool reaches the bound. None: no bound.
    """

    mode: SandboxMode
    # Looked up when a pool is made, so a benchmark can compare it with no bound.
    max_workers: int | None = field(default_factory=lambda: default_pool_size())
    _idle: list[Worker] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _started: int = 0
    """Workers of this pool alive now, idle or judging."""

    def __post_init__(self) -> None:
        self._freed = threading.Condition(self._lock)
        # Workers are processes: stop them when the pool is dropped, not at interpreter exit.
        weakref.finalize(self, _close_all, self._idle)

    @classmethod
    def detect(cls, extras: SandboxExtras | None = None) -> Sandbox:
        """A pool in the strongest mode this machine offers; the worker that proved the
        mode works becomes its first idle worker instead of being thrown away."""
        mode, worker = _detect(extras)
        sandbox = cls(mode)
        if worker is not None:
            with sandbox._lock:
                sandbox._started += 1
            sandbox._release(worker)
        return sandbox

    @property
    def description(self) -> str:
        """The fences in force, in words."""
        return self.mode.description

    def fresh(self) -> Sandbox:
        """A new pool in the same mode, sharing no worker with this one (for a proof:
        nothing an earlier attempt did to a worker can reach it)."""
        return Sandbox(self.mode, self.max_workers)

    def judge(self, request: dict[str, Any]) -> RawAttempt:
        """Run one attempt on an idle worker (started on demand, up to ``max_workers``)."""
        return self.begin(request).result()

    def begin(self, request: dict[str, Any]) -> PendingAttempt:
        """Send one attempt to an idle worker and return at once: the caller does other
        work while the worker judges, then reads the answer with
        :meth:`PendingAttempt.result` (or gives it up with :meth:`PendingAttempt.discard`).
        SandboxUnavailable if the worker cannot take it."""
        worker = self._acquire()
        try:
            worker.start(request)
        except BaseException:
            self._discard(worker)
            raise
        return PendingAttempt(self, worker, request)

    def _acquire(self) -> Worker:
        with self._lock:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive:
                        return worker
                    # It stopped on its own (idle too long, or killed): its place is free.
                    worker.close()
                    self._started -= 1
                if self.max_workers is None or self._started < self.max_workers:
                    self._started += 1
                    break
                self._freed.wait()
        try:
            return Worker(self.mode)
        except BaseException:
            with self._lock:
                self._started -= 1
                self._freed.notify()
            raise

    def _release(self, worker: Worker) -> None:
        with self._lock:
            self._idle.append(worker)
            self._freed.notify()

    def _discard(self, worker: Worker) -> None:
        """Stop a worker that failed, making room for a fresh one."""
        worker.close()
        with self._lock:
            self._started -= 1
            self._freed.notify()

    def close(self) -> None:
        """Stop every idle worker."""
        with self._lock:
            self._started -= len(self._idle)
            _close_all(self._idle)


@dataclass
class PendingAttempt:
    """An attempt a worker of ``sandbox`` is judging (see :meth:`Sandbox.begin`): read it
    once with :meth:`result`, or :meth:`discard` it; either gives the worker back."""

    sandbox: Sandbox
    worker: Worker
    request: dict[str, Any]

    def result(self) -> RawAttempt:
        """The worker's answer; SandboxUnavailable if it died or hung."""
        try:
            attempt = self.worker.finish(self.request)
        except BaseException:
            self.sandbox._discard(self.worker)
            raise
        self.sandbox._release(self.worker)
        return attempt

    def discard(self) -> None:
        """Give the attempt up unread: its worker is stopped, never asked again."""
        self.sandbox._discard(self.worker)


def _close_all(workers: list[Worker]) -> None:
    while workers:
        workers.pop().close()


class LazySandbox:
    """A judge's worker pool, started on first use and shared by the judge's threads.

    Starting a pool detects bubblewrap and starts a worker (a second or more), so a
    judge that never judges (a dry run, a suite check) never pays for it. A pool given
    at construction (tests, a pipeline sharing one pool) is used as is. ``extras`` is
    called once, at the start, for the files the judge's own code needs inside.
    """

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        extras: Callable[[], SandboxExtras] | None = None,
    ) -> None:
        self._sandbox = sandbox
        self._extras = extras
        self._lock = threading.Lock()

    def get(self) -> Sandbox:
        """The pool, started now if this is its first use."""
        with self._lock:
            if self._sandbox is None:
                extras = self._extras
                self._sandbox = Sandbox.detect(extras()) if extras else Sandbox.detect()
            return self._sandbox

    @property
    def started(self) -> Sandbox | None:
        """The pool if it was given or started already, else None (never starts it)."""
        return self._sandbox

    def describe(self) -> str:
        """The fences in force, in words (starts the pool to know them)."""
        return self.get().description

    def close(self) -> None:
        """Stop the pool's idle workers, if it was ever started."""
        if self._sandbox is not None:
            self._sandbox.close()
