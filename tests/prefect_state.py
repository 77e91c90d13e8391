"""A migrated Prefect database for the tests whose subject starts a Prefect server of its own.

A temporary server on an empty Prefect home first migrates its database: 15.8 CPU-s to
its first answer against 6.7-7.5 on a home that held a migrated one (a quiet 2-core
host). The session's own server (``pytest_configure`` in ``tests/conftest.py``) migrates
one anyway; a copy taken once it answers, before any flow has run, gives those tests
(their own ``critiquebench server``, a run's temporary server, the launcher's tests) a
home in the state a user's second run meets. The tests that are about a first run on an
empty home keep an empty one.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

DATABASE = "prefect.db"
MEMO = "memo_store.toml"  # Prefect's record of the block types it registered: not redone
STARTUP_TABLES = {"alembic_version", "block_schema", "block_schema_reference", "block_type"}
"""The tables a server fills as it starts; a copy with rows anywhere else is not taken."""
DONE = "done"


def save_migrated_state(home: Path, template: Path, wait_ready: Callable[[], None]) -> None:
    """Once the server of the Prefect home ``home`` answers (``wait_ready`` returns), copy
    its database into ``template / "home"`` if no run has written to it yet; then mark
    ``template`` done, whether a copy was taken or not."""
    try:
        wait_ready()
        copy = template / "home"
        copy.mkdir()
        # Closed before ``DONE`` is written: the copy is then one complete file, nothing
        # of it left in a write-ahead log (``sqlite3``'s ``with`` only commits).
        source, target = sqlite3.connect(home / DATABASE), sqlite3.connect(copy / DATABASE)
        with closing(source), closing(target):
            source.backup(target)  # consistent, while the server may be writing
        if _written_tables(copy / DATABASE) - STARTUP_TABLES:
            shutil.rmtree(copy)  # a run had reached it: not the state of a fresh start
        elif (home / MEMO).is_file():
            shutil.copy2(home / MEMO, copy / MEMO)
    except (OSError, sqlite3.Error, RuntimeError):  # RuntimeError: the server never answered
        shutil.rmtree(template / "home", ignore_errors=True)
    finally:
        (template / DONE).touch()


def _written_tables(database: Path) -> set[str]:
    with closing(sqlite3.connect(database)) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {name for name in tables if db.execute(f'SELECT 1 FROM "{name}" LIMIT 1').fetchone()}


def migrated_state(template: Path, timeout_s: float) -> Path | None:
    """The migrated home ``save_migrated_state`` left in ``template``, waiting up to
    ``timeout_s`` for it; None when no copy was taken."""
    deadline = time.monotonic() + timeout_s
    while not (template / DONE).exists():
        if time.monotonic() > deadline:
            return None
        time.sleep(0.2)
    copy = template / "home"
    return copy if copy.is_dir() else None


def seed_home(home: Path, state: Path | None) -> Path:
    """Create the Prefect home ``home`` holding a copy of ``state`` (empty if None)."""
    home.mkdir(parents=True, exist_ok=True)
    if state is not None:
        for item in state.iterdir():
            shutil.copy2(item, home / item.name)
    return home
