"""The lazily started worker pool the Python and sql judges share (no worker is started)."""

from __future__ import annotations

import threading
import time

import pytest

from critiquebench.judges.python._judge import PythonJudge
from critiquebench.judges.sandbox._pool import LazySandbox, Sandbox, SandboxExtras, SandboxMode
from critiquebench.judges.sql._judge import SqlJudge
from critiquebench.suites import Case, Check

_MODE = SandboxMode(False, ("/nonexistent/python",), map_users=False, notes=("test pool",))


class _Pool(Sandbox):
    """A pool that never starts a worker and remembers being closed."""

    closed = 0

    def close(self) -> None:
        self.closed += 1


class _Detections:
    """Stands in for ``Sandbox.detect``: counts its calls and the extras it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[SandboxExtras, ...]] = []
        self.lock = threading.Lock()

    def __call__(self, *extras: SandboxExtras) -> Sandbox:
        time.sleep(0.01)  # widen the window in which two first uses could both start one
        with self.lock:
            self.calls.append(extras)
        return _Pool(_MODE)


@pytest.fixture
def detections(monkeypatch: pytest.MonkeyPatch) -> _Detections:
    fake = _Detections()
    monkeypatch.setattr(Sandbox, "detect", fake)
    return fake


def test_nothing_starts_before_first_use(detections: _Detections) -> None:
    lazy = LazySandbox()
    assert lazy.started is None
    lazy.close()  # closing a pool never started starts none
    assert detections.calls == [] and lazy.started is None


def test_the_first_use_starts_one_pool_for_every_thread(detections: _Detections) -> None:
    lazy = LazySandbox()
    seen: list[Sandbox] = []
    threads = [threading.Thread(target=lambda: seen.append(lazy.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(detections.calls) == 1
    assert detections.calls[0] == ()  # no extras: detect() exactly as the Python judge called it
    assert len({id(pool) for pool in seen}) == 1 and lazy.started is seen[0]
    assert lazy.describe().endswith("; test pool")


def test_extras_are_read_once_at_the_start(detections: _Detections) -> None:
    extras = SandboxExtras(import_path="/opt/lib", imports=("duckdb",))
    asked: list[int] = []

    def factory() -> SandboxExtras:
        asked.append(1)
        return extras

    lazy = LazySandbox(extras=factory)
    assert asked == []
    lazy.get()
    lazy.get()
    assert asked == [1] and detections.calls == [(extras,)]


def test_a_given_pool_is_used_as_is_and_closed(detections: _Detections) -> None:
    given = _Pool(_MODE)
    lazy = LazySandbox(given)
    assert lazy.started is given and lazy.get() is given
    lazy.close()
    assert given.closed == 1 and detections.calls == []


def test_both_judges_keep_their_sandbox_argument(detections: _Detections) -> None:
    python_pool, sql_pool = _Pool(_MODE), _Pool(_MODE)
    python = PythonJudge(sandbox=python_pool, static=None)
    sql = SqlJudge(sandbox=sql_pool)
    assert python.sandbox is python_pool and sql.sandbox is sql_pool
    assert python.describe() == sql.describe() == _MODE.description
    python.close()
    sql.close()
    assert (python_pool.closed, sql_pool.closed) == (1, 1) and detections.calls == []


def test_the_sql_judge_starts_its_pool_with_duckdb_inside(detections: _Detections) -> None:
    judge = SqlJudge()
    judge.sandbox  # noqa: B018 - the property starts the pool
    (extras,) = detections.calls[0]
    assert "duckdb" in extras.imports


def test_an_empty_query_starts_no_pool(detections: _Detections) -> None:
    judge = SqlJudge()
    case = Case(
        id="s",
        prompt="p",
        judge="sql",
        judge_data={"schema": "CREATE TABLE t (x INTEGER);"},
        checks=(Check(source="c", origin="feedback", spec={"expected": []}),),
    )
    result = judge(case, "   ")
    assert [failure.code for failure in result.failures] == ["not_a_query", "error"]
    assert result.notes == () and detections.calls == []
