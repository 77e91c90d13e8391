"""Judge throughput: attempts per second on HumanEval's 164 canonical solutions and
on broken variants of them, sequentially and with one worker per core.

Run: .venv/bin/python bench/judge.py
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from critiquebench.judges import JudgeResult, PythonJudge
from critiquebench.suites import Case, load_suite


def _broken(case: Case) -> str:
    # The canonical answer with an off-by-one injected into its first return, so
    # the candidate runs every check and fails some: the judge's typical workload.
    body = case.reference_solution.replace("return ", "return 1 + ", 1)
    return body if body != case.reference_solution else case.prompt + "    return None\n"


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
    judge = PythonJudge()
    variants: dict[str, Callable[[Case], str]] = {
        "canonical": lambda case: case.reference_solution,
        "broken": _broken,
    }
    cores = os.cpu_count() or 1
    print(f"judge throughput over {len(cases)} HumanEval problems ({cores} cores)")
    for name, make in variants.items():
        work = [(case, make(case)) for case in cases]
        for workers in sorted({1, cores}):
            rate, results = _throughput(judge, work, workers)
            defects = sum(result.defects() for result in results)
            print(
                f"  {name:9s} workers={workers}: {rate:6.1f} attempts/s "
                f"({defects} defects found, {sum(r.passed for r in results)} passed)"
            )


if __name__ == "__main__":
    main()
