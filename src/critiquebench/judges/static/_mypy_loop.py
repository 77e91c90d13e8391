"""mypy's update loop: one long-lived process that type-checks one text per request.

Run as a script under the keeper (``_dmypy_keeper.py --exec``), never imported by the
library: ``python -P _mypy_loop.py --status-file STATUS -- MYPY_FLAGS...`` with the
request pipe on stdin and the answer pipe on stdout. A request is a 4-byte big-endian
length and the text (UTF-8); the answer is a 4-byte length and a JSON object,
``{"out": mypy's lines}`` or ``{"crash": the last lines of mypy's traceback}`` (the loop
then exits: its state is unknown, the checker starts a fresh one).

Why not ``dmypy``: the loop keeps the build state of mypy's daemon (the
``FineGrainedBuildManager`` of ``mypy.dmypy_server.Server``, built by the daemon's own
first check, with the daemon's options) and asks it only what one answer needs. Each
text is a new module, added with one fine-grained ``update`` and answered at once; it
is removed with a second ``update`` after the answer is written, while the judge is
busy elsewhere. ``dmypy check`` does the same two updates inside one request and, on
top, walks the whole graph for changed files, reachable imports and suppressed
submodules (``fine_grained_increment_follow_imports``), formats statistics and speaks
JSON over a socket through its client: none of it changes one new module's errors (the
same messages as ``dmypy`` on all 328 texts of ``bench/judge.py``'s workload; batch
mypy's on the corpus of ``tests/unit/judges/test_daemon_batch.py``).

One thing neither does: a fine-grained update never analyses a standard-library module
it meets for the first time, so an answer importing a package the build has not loaded
(``import email.message``) would see it unanalysed (``dmypy`` crashed on ``import email``
with a ``KeyError``). Such an answer gets a fresh batch build of the loop's state that
imports those modules too, and is checked on it; the modules then stay loaded for every
later answer.

Measured gain (per answer, ``bench/judge.py --mypy``: 60 fresh HumanEval texts after a
warm pass, 2 cores at load 24; 0caf429): ``dmypy``'s ``check`` used 9.6 ms of CPU a text
on its server side alone, the loop 4.7 ms with the asking process's share included (a
batch ``mypy`` process: 222 ms). In-process, without pipes, at load 12-14: ``check``
6.3-7.6 ms, the update the answer waits for 1.9-2.6 ms and the removal after it ~1 ms.

The loop's build comes from mypy's cache (``--cache-dir``), written for the daemon
(``--cache-fine-grained``) and loaded as ``dmypy --use-fine-grained-cache`` loads it: the
daemon alone never reads a cache (it sets its cache folder to ``/dev/null``), so every
loop used to build builtins, typing and the rest of its first 45 modules from source.
A build that needs a module the cache lacks (the first loop on a new cache, an answer's
new import) writes it there first with a batch build; a build that cannot be loaded
whole is built from source as before. Only the standard library's stubs are cached, and
a fine-grained update never re-analyses one (see :func:`_check`): the cached trees are
what batch mypy with a warm cache checks an answer against. Measured (CPU of a loop's
start and its first, empty request, median of 7 interleaved, 2 cores at load 4-6):
2.33 s from source, 0.47 s from the cache (~0.4 s of it importing mypy); with an answer
importing ``math`` and ``collections`` (a batch rebuild) 3.49 s -> 0.50 s. The first
loop on an empty cache pays for writing it: 3.3 s instead of 2.3 s.

The cache is shared by the loops of every process (a run's, a test session's): each
keeps to a folder of its own mypy and flags (:func:`_keyed`), loads under a shared lock
and writes under an exclusive one, and every write imports all the modules any loop
asked for, so a load brings them all (0.7 s a start with ``asyncio``, ``xml.etree`` and
``email`` among them, against 0.47 s with none).

The status file (``{"pid": ...}``) is written once the first build is done: the
checker waits for it, then watches this process's CPU time per request.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import select
import struct
import sys
import traceback
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_LENGTH = struct.Struct(">I")
_FIRST = "c_first"
_REBUILDS = 8  # most batch builds one answer's imports may need
_LOCK = "loop.lock"
_IMPORTED = "imported.json"  # the modules the cache's builds import (see _write_cache)
_CACHED_MOST = 200  # most modules listed there: every loop's start loads them all


def main(argv: list[str]) -> int:
    """Serve checks until the request pipe closes or ``--idle`` seconds pass unasked."""
    status = Path(argv[argv.index("--status-file") + 1])
    idle = float(argv[argv.index("--idle") + 1]) if "--idle" in argv else None
    flags, cache = _keyed(argv[argv.index("--") + 1 :])
    # The pipes move off fds 0 and 1: nothing mypy prints can reach the answer pipe.
    requests, answers = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    from mypy.defaults import RECURSION_LIMIT

    sys.setrecursionlimit(RECURSION_LIMIT)  # as the daemon's client sets it
    folder = status.parent / "src"
    folder.mkdir(exist_ok=True)
    state = _build(flags, status, folder, [], cache)
    if state is None:
        return 2
    status.write_text(json.dumps({"pid": os.getpid()}) + "\n", encoding="utf-8")
    while True:
        code = _read(requests, idle)
        if code is None:
            return 0
        name = f"c_{uuid.uuid4().hex}"  # never a word of the text (see replace below)
        path = folder / f"{name}.py"
        try:
            path.write_text(code, encoding="utf-8")
            state, messages = _check(state, name, path, flags, status, cache)
        except Exception:
            _write(answers, {"crash": "".join(traceback.format_exc().splitlines(True)[-3:])})
            return 1
        finally:
            path.unlink(missing_ok=True)
            _flush(state.server)
        out = "".join(message + "\n" for message in messages)
        _write(answers, {"out": out.replace(name, "candidate")})
        try:
            state.server.fine_grained_manager.update([], [(name, str(path))])
        except Exception:
            return 1  # the next request meets a closed pipe: a fresh loop is started
        _flush(state.server)


@dataclass
class _State:
    """The daemon's server and the modules its last batch build was asked to import."""

    server: Any
    imported: list[str]


def _build(
    flags: list[str], status: Path, folder: Path, imports: list[str], cache: Path | None
) -> _State | None:
    """A fresh server whose first (batch) build imports ``imports``.

    Loaded from the cache when it holds every module the build needs; else the cache is
    written first (once for all the loops that share it) and loaded; else built from
    source.
    """
    first = folder / f"{_FIRST}.py"
    first.write_text("".join(f"import {module}\n" for module in imports), encoding="utf-8")
    try:
        server = None if cache is None else _cached(flags, status, first, cache)
        if server is None and cache is not None and _write_cache(flags, cache, imports):
            server = _cached(flags, status, first, cache)
        if server is None:
            server = _started(flags, status, first, cached=False)
    finally:
        first.unlink()
    if server is None:
        return None
    server.fine_grained_manager.update([], [(_FIRST, str(first))])
    _flush(server)
    return _State(server, imports)


def _cached(flags: list[str], status: Path, first: Path, cache: Path) -> Any:
    """A server loaded from the cache, or None when the cache lacks a module it needs.

    Loaded while no other loop writes the cache (its trees are all read by the load):
    a load beside a write read a torn cache (``KeyError: 'typing'`` on the next check,
    6 loops started at once on an empty cache)."""
    try:
        with _locked(cache, fcntl.LOCK_SH):
            server = _started(flags, status, first, cached=True)
    except Exception:
        return None
    if server is None:
        return None
    # A module the cache lacks is left to the fine-grained update, which never analyses
    # a standard-library module (see _check): such a server would answer wrongly.
    graph = server.fine_grained_manager.graph
    if any(state.meta is None for name, state in graph.items() if name != _FIRST):
        return None
    return server


def _started(flags: list[str], status: Path, first: Path, *, cached: bool) -> Any:
    """A server after its first check of ``first``: from the cache or from source."""
    from mypy.dmypy_server import Server, process_start_options

    options = process_start_options(flags, allow_sources=False)
    options.use_fine_grained_cache = cached
    server = Server(options, str(status))
    started = server.cmd_check([str(first)], False, False, 80)
    if started.get("status") not in (0, 1) or server.fine_grained_manager is None:
        return None
    return server


def _write_cache(flags: list[str], cache: Path, imports: list[str]) -> bool:
    """Write what the daemon needs to load a build importing ``imports`` (a batch build
    that reuses what the cache holds already); False if it failed.

    The build imports every module any loop asked the cache for, not only ``imports``: a
    write of other modules made the cache refuse those it left out (an ``asyncio`` build
    loaded whole before an ``xml`` one was written, no longer after it). Past
    ``_CACHED_MOST`` modules nothing more is written: an answer importing half the
    standard library must not slow every later loop's start.
    """
    import mypy.build
    from mypy.dmypy_server import process_start_options
    from mypy.modulefinder import BuildSource

    options = process_start_options(flags, allow_sources=False)
    options.cache_fine_grained = True
    options.incremental = True
    listed = cache / _IMPORTED
    try:
        with _locked(cache, fcntl.LOCK_EX):
            known = json.loads(listed.read_text(encoding="utf-8")) if listed.exists() else []
            every = sorted(set(known) | set(imports))
            if len(every) > _CACHED_MOST:
                return False  # answers that import much are built from source instead
            source = cache / "first" / f"{_FIRST}.py"
            source.parent.mkdir(exist_ok=True)
            source.write_text("".join(f"import {name}\n" for name in every), encoding="utf-8")
            mypy.build.build([BuildSource(str(source), _FIRST)], options)
            listed.write_text(json.dumps(every), encoding="utf-8")
    except Exception:
        return False  # no cache to load: the plain build follows
    return True


def _check(
    state: _State, name: str, path: Path, flags: list[str], status: Path, cache: Path | None
) -> tuple[_State, list[str]]:
    """mypy's messages for the module ``name``, and the state to check the next one on.

    A fine-grained update never analyses a standard-library module it meets for the
    first time (``mypy.server.update`` leaves them as they were loaded, which is
    unanalysed when the cache has none): an answer whose imports bring modules the build
    has not loaded gets a new batch build that imports them too, and is checked on it.
    """
    for _ in range(_REBUILDS):
        manager = state.server.fine_grained_manager
        before = set(manager.graph)
        messages: list[str] = manager.update([(name, str(path))], [])
        added = sorted(set(manager.graph) - before - {name})
        if not added:
            return state, messages
        # The update stops at the first new module it cannot analyse: a rebuild may
        # meet more behind it.
        rebuilt = _build(flags, status, path.parent, state.imported + added, cache)
        if rebuilt is None:
            raise RuntimeError("mypy's build failed on the standard library's modules")
        state = rebuilt
    raise RuntimeError("mypy's build did not load every module the answer imports")


def _keyed(flags: list[str]) -> tuple[list[str], Path | None]:
    """The flags with ``--cache-dir`` moved to a folder of its own for this mypy, these
    flags and this config, and that folder (None without ``--cache-dir``).

    mypy's cache keeps one entry a module: loops of other flags (or another mypy) sharing
    the folder would overwrite each other's entries, and a load would mix them."""
    if "--cache-dir" not in flags:
        return flags, None
    from mypy.version import __version__

    at = flags.index("--cache-dir") + 1
    config = flags.index("--config-file") + 1 if "--config-file" in flags else -1
    kept = [flag for index, flag in enumerate(flags) if index not in (at, config)]
    try:
        text = Path(flags[config]).read_text(encoding="utf-8") if config > 0 else ""
        key = hashlib.sha256(json.dumps([__version__, kept, text]).encode()).hexdigest()
        folder = Path(flags[at]) / f"loop-{key[:16]}"
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError):
        return flags, None  # no cache: built from source
    return [*flags[:at], str(folder), *flags[at + 1 :]], folder


@contextlib.contextmanager
def _locked(cache: Path, how: int) -> Iterator[None]:
    """The cache's lock (``fcntl.LOCK_SH`` to load, ``LOCK_EX`` to write), held inside."""
    lock = os.open(cache / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, how)
        yield
    finally:
        os.close(lock)  # the lock goes with it


def _flush(server: Any) -> None:
    # What dmypy does after every check: the next text is read from disk, not memory.
    server.fscache.flush()
    server.fine_grained_manager.flush_cache()


def _read(stream: int, idle: float | None) -> str | None:
    ready, _, _ = select.select([stream], [], [], idle)
    if not ready:
        return None  # idle too long: the checker starts a fresh loop when asked again
    head = _exactly(stream, _LENGTH.size)
    if head is None:
        return None
    body = _exactly(stream, _LENGTH.unpack(head)[0])
    return None if body is None else body.decode("utf-8")


def _exactly(stream: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(stream, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _write(stream: int, answer: dict[str, str]) -> None:
    body = json.dumps(answer).encode("utf-8")
    data = _LENGTH.pack(len(body)) + body
    while data:
        data = data[os.write(stream, data) :]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
