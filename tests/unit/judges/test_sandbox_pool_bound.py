"""The sandbox pool starts workers on demand up to its bound, then attempts wait for one.

The workers here are stand-ins (no process): the pool's bookkeeping is what is tested.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from critiquebench.judges.sandbox import _pool
from critiquebench.judges.sandbox._pool import (
    RawAttempt,
    Sandbox,
    SandboxMode,
    SandboxUnavailable,
    default_pool_size,
)

_MODE = SandboxMode(False, ("python",), map_users=False)


class _FakeWorker:
    """Judges by recording how many attempts run at once; fails when asked to."""

    started = 0
    running = 0
    most = 0
    lock = threading.Lock()

    def __init__(self, mode: SandboxMode) -> None:
        with _FakeWorker.lock:
            _FakeWorker.started += 1
        self.closed = False

    @property
    def alive(self) -> bool:
        return not self.closed

    def judge(self, request: dict[str, Any]) -> RawAttempt:
        with _FakeWorker.lock:
            _FakeWorker.running += 1
            _FakeWorker.most = max(_FakeWorker.most, _FakeWorker.running)
        try:
            if request.get("fail"):
                raise SandboxUnavailable("the stand-in worker died")
            time.sleep(0.01)  # long enough for the other threads to want a worker
            return RawAttempt(report={"n": request["n"]}, output=b"")
        finally:
            with _FakeWorker.lock:
                _FakeWorker.running -= 1

    def start(self, request: dict[str, Any]) -> None:
        self.sent = request

    def finish(self, request: dict[str, Any]) -> RawAttempt:
        assert request is self.sent
        return self.judge(request)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_workers(monkeypatch: pytest.MonkeyPatch) -> type[_FakeWorker]:
    monkeypatch.setattr(_pool, "Worker", _FakeWorker)
    _FakeWorker.started = _FakeWorker.running = _FakeWorker.most = 0
    return _FakeWorker


def _judge_all(pool: Sandbox, requests: list[dict[str, Any]]) -> list[Any]:
    results: list[Any] = [None] * len(requests)

    def one(index: int) -> None:
        try:
            results[index] = pool.judge(requests[index])
        except SandboxUnavailable as exc:
            results[index] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)  # a guard against a hang, not a speed assertion
    assert not any(thread.is_alive() for thread in threads), "an attempt never got a worker"
    return results


def test_no_more_workers_than_the_bound_however_many_threads_judge(
    fake_workers: type[_FakeWorker],
) -> None:
    pool = Sandbox(_MODE, max_workers=2)
    results = _judge_all(pool, [{"n": n} for n in range(12)])
    assert [r.report["n"] for r in results] == list(range(12))
    assert fake_workers.started <= 2
    assert fake_workers.most <= 2


def test_without_a_bound_a_busy_pool_starts_a_worker_per_waiting_attempt(
    fake_workers: type[_FakeWorker],
) -> None:
    pool = Sandbox(_MODE, max_workers=None)
    results = _judge_all(pool, [{"n": n} for n in range(6)])
    assert [r.report["n"] for r in results] == list(range(6))
    assert fake_workers.started >= 1


def test_a_worker_that_fails_gives_its_place_to_a_fresh_one(
    fake_workers: type[_FakeWorker],
) -> None:
    pool = Sandbox(_MODE, max_workers=1)
    failed = _judge_all(pool, [{"n": 0, "fail": True}])
    assert isinstance(failed[0], SandboxUnavailable)
    # With the failed worker's place still counted, these would wait for ever.
    after = _judge_all(pool, [{"n": n} for n in range(3)])
    assert [r.report["n"] for r in after] == [0, 1, 2]
    assert fake_workers.started == 2


def test_closing_the_pool_frees_the_places_of_its_idle_workers(
    fake_workers: type[_FakeWorker],
) -> None:
    pool = Sandbox(_MODE, max_workers=1)
    _judge_all(pool, [{"n": 0}])
    pool.close()
    assert [r.report["n"] for r in _judge_all(pool, [{"n": 1}])] == [1]
    assert fake_workers.started == 2


def test_a_fresh_pool_keeps_the_bound_and_the_default_scales_with_cores() -> None:
    assert Sandbox(_MODE, max_workers=3).fresh().max_workers == 3
    assert Sandbox(_MODE).max_workers == default_pool_size() >= 4


def test_a_begun_attempt_holds_its_worker_until_it_is_read_or_given_up(
    fake_workers: type[_FakeWorker],
) -> None:
    pool = Sandbox(_MODE, max_workers=1)
    assert pool.begin({"n": 0}).result().report == {"n": 0}
    given_up = pool.begin({"n": 1})  # the worker read before, given back
    assert fake_workers.started == 1
    given_up.discard()  # never read: its worker is stopped and its place freed
    assert [r.report["n"] for r in _judge_all(pool, [{"n": 2}])] == [2]
    assert fake_workers.started == 2
    failing = pool.begin({"n": 3, "fail": True})
    with pytest.raises(SandboxUnavailable):
        failing.result()
    assert [r.report["n"] for r in _judge_all(pool, [{"n": 4}])] == [4]
    assert fake_workers.started == 3
