"""Correct code scores as correct, wherever Python is installed and however loaded the host."""

from __future__ import annotations

import sys

import pytest

from critiquebench.judges import PythonJudge, SandboxLimits
from critiquebench.judges.python._interpret import interpret
from critiquebench.judges.python._plan import plan_checks
from critiquebench.judges.sandbox._pool import RawAttempt, Sandbox, SandboxMode
from critiquebench.suites import Case, Check
from tests.helpers import GOOD_ADD, make_case
from tests.sandbox.conftest import run

# GUI, platform-specific or side-effecting modules a judged function has no use for.
_SKIPPED = {
    "antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "msvcrt", "winreg",
    "winsound", "_winapi", "nt", "_msi", "msilib", "_overlapped", "_wmi", "nturl2path",
    "ntpath", "_tkinter", "__hello__", "__phello__", "_scproxy",
}  # fmt: skip


def _stdlib_modules() -> list[str]:
    import importlib.util

    names = []
    for name in sorted(sys.stdlib_module_names - _SKIPPED):
        try:
            if importlib.util.find_spec(name) is not None:
                names.append(name)
        except (ImportError, ValueError):
            continue
    return names


def test_every_stdlib_module_is_importable(judge: PythonJudge) -> None:
    modules = _stdlib_modules()
    assert len(modules) > 150
    code = (
        "import importlib\n"
        "def add(a, b):\n"
        f"    failed = []\n"
        f"    for name in {modules!r}:\n"
        "        try:\n"
        "            importlib.import_module(name)\n"
        "        except BaseException as exc:\n"
        "            failed.append(f'{name}: {type(exc).__name__}: {exc}')\n"
        "    return failed or a + b\n"
    )
    result = run(judge, code)
    assert result.passed, result.failures[0].actual if result.failures else ""


@pytest.mark.parametrize(
    "module", ["base64", "glob", "pathlib", "csv", "uuid", "zlib", "threading"]
)
def test_a_correct_answer_that_imports_a_module_passes(judge: PythonJudge, module: str) -> None:
    assert run(judge, f"import {module}\n" + GOOD_ADD).passed


def test_timeouts_scale_with_the_reference_solution() -> None:
    # The reference itself needs ~1 s of CPU per check, more than the 0.2 s floor:
    # a correct answer as slow as the reference must not be a timeout.
    slow = (
        "def add(a, b):\n"
        "    total = 0\n"
        "    for _ in range(20_000_000):\n"
        "        total += 1\n"
        "    return a + b\n"
    )
    case = make_case().model_copy(update={"reference_solution": slow})
    limits = SandboxLimits(check_timeout_s=0.2, timeout_multiple=5.0, wall_s=30.0)
    judge = PythonJudge(limits)
    try:
        assert judge(case, slow).passed
        unscaled = judge(case.model_copy(update={"reference_solution": ""}), slow)
    finally:
        judge.close()
    assert "timeout" in [failure.kind for failure in unscaled.failures]


def test_cpu_time_decides_a_timeout_and_a_wall_clock_only_raises_a_suspicion() -> None:
    limits = SandboxLimits(wall_s=4.0)
    plans = plan_checks(make_case().checks, "add")
    # The attempt waited nearly all its wall clock for a CPU, yet used its CPU budget:
    # a timeout of the answer, however loaded the host was.
    report = {"timed_out": True, "cpu_exhausted": True, "cpu_s": 4.0, "run_queue_wait_s": 20.0}
    judged = interpret(plans, RawAttempt(report, b""), "nonce", limits)
    assert judged.infrastructure_error is None
    assert [f.kind for f in judged.failures] == ["timeout"] + ["not_run"] * 3
    # The wall clock ran out with the CPU budget unused: only a suspicion, to be proved.
    report = {"timed_out": True, "cpu_s": 0.4}
    suspected = interpret(plans, RawAttempt(report, b""), "n", limits)
    assert (
        suspected.infrastructure_error
        and "0.4 of its 4 CPU-seconds" in suspected.infrastructure_error
    )
    assert suspected.owned_kind == "timeout" and suspected.failures == []


def test_a_sandbox_that_cannot_start_is_an_infrastructure_error() -> None:
    broken = Sandbox(SandboxMode(False, ("/nonexistent/python",), map_users=False))
    judge = PythonJudge(sandbox=broken)
    result = judge(make_case(), GOOD_ADD)
    assert result.infrastructure_error is not None
    assert not result.passed
    assert result.defects() == 0  # never counted as the candidate's defects


def test_the_fallback_says_so_and_still_judges(monkeypatch: pytest.MonkeyPatch) -> None:
    # Opted in by name: where nobody cannot run the interpreter (it lives under /root),
    # these trusted test answers run as root; elsewhere the worker still leaves root.
    monkeypatch.setenv("CRITIQUEBENCH_SANDBOX", "fallback-as-root")
    judge = PythonJudge(SandboxLimits(wall_s=8.0))
    try:
        assert "FALLBACK" in judge.describe()
        assert judge(make_case(), "import base64\n" + GOOD_ADD).passed
        wrong = judge(make_case(), "def add(a, b):\n    return a - b")
    finally:
        judge.close()
    assert wrong.defects() == 2


def test_checks_of_other_shapes_run_inside_and_are_counted() -> None:
    # A helper the test setup defines with statements the parent does not evaluate.
    case = Case(
        id="t/helper",
        prompt="",
        entry_point="add",
        setup="def twice(v):\n    while False:\n        pass\n    return 2 * v",
        checks=(
            Check(source="assert add(1, 2) == 3", origin="feedback"),
            Check(source="assert twice(add(1, 1)) == 4", origin="heldout"),
        ),
    )
    judge = PythonJudge()
    try:
        result = judge(case, "def add(a, b):\n    return a - b")
    finally:
        judge.close()
    assert result.checks_inside == 1
    assert [failure.inside for failure in result.failures] == [False, True]


# Passes only when the attempt sees a /proc of its own: then it is the one process there.
_OWN_PROC_ADD = """import os


def add(a, b):
    pids = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    return a + b if pids == ["1"] else a + b + 1
"""


@pytest.mark.parametrize("forced_fallback", [False, True])
def test_the_workers_probe_for_a_fresh_proc_matches_what_attempts_see(
    monkeypatch: pytest.MonkeyPatch, forced_fallback: bool
) -> None:
    # Each worker tries once whether an attempt could mount /proc, and attempts skip a
    # mount the kernel would refuse (it did inside bubblewrap, at ~0.8 ms each time).
    if forced_fallback:
        monkeypatch.setenv("CRITIQUEBENCH_SANDBOX", "fallback-as-root")  # opted in by name
    judge = PythonJudge(SandboxLimits(wall_s=8.0), static=None)
    try:
        result = judge(make_case(), _OWN_PROC_ADD)
        [worker] = judge.sandbox._idle
        fresh = worker.facts["fresh_proc"]
        assert isinstance(fresh, bool)
        assert result.passed == fresh, (fresh, result.failures)
        if judge.sandbox.mode.bubblewrap:
            assert fresh is False  # bubblewrap's /proc has parts mounted over
    finally:
        judge.close()
