from __future__ import annotations

import threading
from pathlib import Path

import pytest

from critiquebench.models import (
    CachingProvider,
    CallCache,
    CallContext,
    GenerationParams,
    LimitedProvider,
    Message,
    RateLimiter,
    RateLimits,
    ScriptedProvider,
)

MESSAGES = [Message("user", "write add")]
PARAMS = GenerationParams(seed=1)


def test_second_identical_call_is_a_cache_hit_with_original_cost(tmp_path: Path) -> None:
    inner = ScriptedProvider(["first answer here", "second answer"])
    provider = CachingProvider(inner, CallCache(tmp_path / "calls.sqlite"))
    fresh = provider.complete(MESSAGES, PARAMS, context=CallContext(rep=0))
    hit = provider.complete(MESSAGES, PARAMS, context=CallContext(rep=0))
    assert len(inner.requests) == 1
    assert (fresh.cached, hit.cached) == (False, True)
    assert hit.text == fresh.text
    assert (hit.tokens_in, hit.tokens_out) == (0, 0)
    assert hit.experiment_tokens == (fresh.tokens_in, fresh.tokens_out)
    assert hit.original_latency_s == pytest.approx(fresh.latency_s)


def test_reps_params_and_schema_are_separate_entries(tmp_path: Path) -> None:
    inner = ScriptedProvider(responder=lambda messages: "x")
    provider = CachingProvider(inner, CallCache(tmp_path / "calls.sqlite"))
    provider.complete(MESSAGES, PARAMS, context=CallContext(rep=0))
    provider.complete(MESSAGES, PARAMS, context=CallContext(rep=1))
    provider.complete(MESSAGES, GenerationParams(seed=2), context=CallContext(rep=0))
    provider.complete(MESSAGES, PARAMS, schema={"type": "object"}, context=CallContext(rep=0))
    assert len(inner.requests) == 4


def test_cache_survives_a_new_process_handle(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    CachingProvider(ScriptedProvider(["kept"]), CallCache(path)).complete(MESSAGES, PARAMS)
    later = ScriptedProvider([])  # would raise if asked
    assert CachingProvider(later, CallCache(path)).complete(MESSAGES, PARAMS).text == "kept"


def test_cache_is_safe_under_concurrent_threads(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    provider = CachingProvider(ScriptedProvider(responder=lambda m: m[-1].content), cache)

    def work(n: int) -> None:
        for i in range(25):
            provider.complete([Message("user", f"{n}-{i}")], PARAMS)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 100


def test_in_flight_limit_is_respected() -> None:
    active = 0
    peak = 0
    lock = threading.Lock()
    release = threading.Event()

    def slow(messages: object) -> str:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        release.wait(0.05)
        with lock:
            active -= 1
        return "ok"

    provider = LimitedProvider(
        ScriptedProvider(responder=slow), RateLimiter(RateLimits(max_in_flight=2))
    )
    threads = [
        threading.Thread(target=provider.complete, args=(MESSAGES, PARAMS)) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak == 2


def test_requests_per_minute_makes_the_third_call_wait() -> None:
    now = [0.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(
        RateLimits(max_in_flight=1, requests_per_minute=2), clock=lambda: now[0], sleep=sleep
    )
    provider = LimitedProvider(ScriptedProvider(responder=lambda m: "ok"), limiter)
    for _ in range(3):
        provider.complete(MESSAGES, PARAMS)
    assert sum(sleeps) == pytest.approx(60.0)


def test_tokens_per_minute_waits_for_the_window() -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    limiter = RateLimiter(
        RateLimits(max_in_flight=1, tokens_per_minute=5), clock=lambda: now[0], sleep=sleep
    )
    provider = LimitedProvider(ScriptedProvider(responder=lambda m: "a b c d e f"), limiter)
    provider.complete(MESSAGES, PARAMS)  # 3 in + 6 out: over the budget
    provider.complete(MESSAGES, PARAMS)
    assert now[0] == pytest.approx(60.0)


def test_identical_concurrent_calls_reach_the_model_once(tmp_path: Path) -> None:
    def slow(messages: object) -> str:
        threading.Event().wait(0.2)
        return "answer"

    inner = ScriptedProvider(responder=slow)
    provider = CachingProvider(inner, CallCache(tmp_path / "calls.sqlite"))
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(provider.complete(MESSAGES, PARAMS)))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(inner.requests) == 1
    assert sorted(r.cached for r in results) == [False, True]
    hit = next(r for r in results if r.cached)
    assert hit.latency_s >= 0.1  # it waited for the first call, and says so


def test_calls_made_leave_nothing_in_flight(tmp_path: Path) -> None:
    """The single-flight map holds the calls under way: a long run's every call left a
    lock in it (a key and a lock per call, for the whole run)."""

    def answer(messages: list[Message]) -> str:
        if messages[-1].content == "fail":
            raise RuntimeError("the model failed")
        threading.Event().wait(0.05)
        return "answer"

    provider = CachingProvider(
        ScriptedProvider(responder=answer), CallCache(tmp_path / "calls.sqlite")
    )
    for n in range(5):
        provider.complete([Message("user", f"task {n}")], PARAMS)
    with pytest.raises(RuntimeError):
        provider.complete([Message("user", "fail")], PARAMS)
    threads = [
        threading.Thread(target=provider.complete, args=(MESSAGES, PARAMS)) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert provider._in_flight == {}
