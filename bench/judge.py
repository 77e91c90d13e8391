"""Judge throughput: attempts per second on HumanEval's 164 canonical solutions and
on broken variants of them, sequentially and with one worker per core, with the
OS-level containment (network namespace, unprivileged user) on and off.

Run: .venv/bin/python bench/judge.py
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from critiquebench.judges import JudgeResult, PythonJudge, SandboxLimits
from critiquebench.suites import Case, load_suite

_SABOTAGE = """
_original = {name}


def {name}(*args, **kwargs):
    result = _original(*args, **kwargs)
    if isinstance(result, bool):
        return not result
    if isinstance(result, (int, float)):
        return result + 1
    if isinstance(result, (str, list, tuple)):
        return result[::-1] + result[:1]
    return result
"""


def _broken(case: Case) -> str:
    # The canonical answer wrapped so that most results are subtly wrong: the
    # candidate runs every check and fails most of them, the judge's usual workload.
    return case.reference_solution + _SABOTAGE.format(name=case.entry_point)


def _throughput(
    judge: PythonJudge, work: list[tuple[Case, str]], workers: int
) -> tuple[float, list[JudgeResult]]:
    started = time.perf_counter()
    if workers == 1:
        results = [judge(case, artifact) for case, artifact in work]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda item: judge(*item), work))
    return len(work) / (time.perf_counter() - started), results


def main() -> None:
    cases = load_suite("humaneval")
    variants: dict[str, Callable[[Case], str]] = {
        "canonical": lambda case: case.reference_solution,
        "broken": _broken,
    }
    judges = {
        "contained": PythonJudge(SandboxLimits()),
        "unconfined": PythonJudge(SandboxLimits().unconfined()),
    }
    cores = os.cpu_count() or 1
    print(f"judge throughput over {len(cases)} HumanEval problems ({cores} cores)")
    rates: dict[tuple[str, str, int], float] = {}
    for name, make in variants.items():
        work = [(case, make(case)) for case in cases]
        for mode, judge in judges.items():
            for workers in sorted({1, cores}):
                rate, results = _throughput(judge, work, workers)
                rates[(name, mode, workers)] = rate
                defects = sum(result.defects() for result in results)
                passed = sum(result.passed for result in results)
                print(
                    f"  {name:9s} {mode:10s} workers={workers}: {rate:6.1f} attempts/s "
                    f"({defects} defects, {passed} passed)"
                )
    for name in variants:
        for workers in sorted({1, cores}):
            on = rates[(name, "contained", workers)]
            off = rates[(name, "unconfined", workers)]
            extra_ms = (1 / on - 1 / off) * 1000 * workers
            print(
                f"containment cost, {name}, workers={workers}: {off / on:.2f}x time "
                f"({extra_ms:+.1f} ms per attempt)"
            )


if __name__ == "__main__":
    main()
