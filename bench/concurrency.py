"""Throughput of model calls through the shared rate limiter at concurrency 1, 4 and 16,
against a loopback OpenAI-compatible stub that takes 200 ms per call.

Run: .venv/bin/python bench/concurrency.py
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from critiquebench.models import (
    GenerationParams,
    LimitedProvider,
    Message,
    OpenAICompatibleProvider,
    RateLimiter,
    RateLimits,
)
from critiquebench.testing import StubModelServer

CALLS = 48
LATENCY_S = 0.2


def _calls_per_second(url: str, concurrency: int) -> float:
    provider = LimitedProvider(
        OpenAICompatibleProvider(url, "stub"), RateLimiter(RateLimits(max_in_flight=concurrency))
    )
    params = GenerationParams()

    def call(n: int) -> None:
        provider.complete([Message("user", f"request {n}")], params)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(call, range(CALLS)))
    return CALLS / (time.perf_counter() - started)


def main() -> None:
    with StubModelServer(lambda messages: "ok", latency_s=LATENCY_S) as stub:
        print(f"{CALLS} calls, stub latency {LATENCY_S * 1000:.0f} ms")
        baseline = None
        for concurrency in (1, 4, 16):
            rate = _calls_per_second(stub.url, concurrency)
            baseline = baseline or rate
            print(
                f"  concurrency {concurrency:2d}: {rate:6.1f} calls/s "
                f"(speed-up {rate / baseline:.1f}x)"
            )


if __name__ == "__main__":
    main()
