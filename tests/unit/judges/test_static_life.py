"""The static checker cannot be broken, stalled or outlived by an answer (issue 21).

A poison answer gets its own finding and leaves the tools healthy for the next one; a
text too long or too deep is refused before any tool or parser reads it; the mypy
daemon dies with the process that started it, even a SIGKILLed one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from critiquebench.judges import Failure, PythonJudge, StaticChecker, StaticSettings
from critiquebench.judges.static import _checker as _static
from critiquebench.runtime import ast_turns as _ast_turns
from critiquebench.suites import Case, Check

WRONG = "def f(x: int) -> str:\n    return x\n"  # mypy: return-value on line 2
POISON = "def f(x: int) -> object:\n    return " + " and ".join(["x"] * 30_000) + "\n"
"""30,000 terms: mypy's daemon dies on it within seconds (15,000 killed it after ~1 min)."""


def _correct(n: int) -> str:
    return f"def add_{n}(a: int, b: int) -> int:\n    return a + b + {n}\n"


@pytest.fixture
def checker() -> Iterator[StaticChecker]:
    made = StaticChecker(StaticSettings())
    try:
        yield made
    finally:
        made.close()


def _unreadable(findings: tuple[Failure, ...]) -> list[tuple[str, str, str]]:
    return [(f.kind, f.code, f.message) for f in findings if f.code == "unreadable"]


def _count_tools(checker: StaticChecker) -> list[str]:
    """Replace both tools with ones that find nothing and say when they were asked."""
    asked: list[str] = []

    def ruff(code: str, scan: _static.CodeScan) -> tuple[Failure, ...]:
        asked.append("ruff")
        return ()

    def mypy(code: str) -> Callable[[], tuple[Failure, ...]]:
        asked.append("mypy")
        return lambda: ()

    checker._lint = ruff  # type: ignore[method-assign]
    checker._mypy_soon = mypy  # type: ignore[method-assign]
    return asked


# --- bounded cost before any tool sees the text ---------------------------------------


def test_the_scan_estimates_depth_linearly_and_keeps_flat_code_shallow() -> None:
    own = Path(_static.__file__).read_text(encoding="utf-8")
    assert _static.scan_code(own).nesting < 50  # written code is far below the limit
    flat = "TABLE = [" + ", ".join(f"-{n}" for n in range(10_000)) + "]\n"
    assert _static.scan_code(flat).nesting < 10  # a long flat list is not deep
    chain = "ok = " + " and ".join(["x"] * 600) + "\n"
    assert _static.scan_code(chain).nesting >= 599
    nested = "y = " + "(" * 150 + "x" + " + 1)" * 150 + "\n"
    assert _static.scan_code(nested).nesting >= 300  # brackets and their operators
    hidden = 'y = f"{' + "+".join(["x"] * 600) + '}"\n'
    assert _static.scan_code(hidden).nesting >= 599  # inside an f-string's braces too
    assert _static.scan_code('y = f"{{" + "." * 900 + "}}"\n').nesting < 10  # literal text
    lists = "y = " + "[" * 60 + "]" * 60 + "\n"
    assert _static.scan_code(lists).brackets == 60
    assert _static.scan_code('y = f"{' + "[" * 60 + "]" * 60 + '}"\n').brackets > 60
    assert _static.scan_code(own).brackets < 10
    scanned = _static.scan_code("x = 1  # type: ignore\n" + chain)
    assert scanned.blanked.startswith("x = 1  #" + " " * 13 + "\n")
    assert scanned.deepest_line == 2


def test_a_poison_chain_is_the_answers_finding_and_no_tool_reads_it(
    checker: StaticChecker,
) -> None:
    asked = _count_tools(checker)
    for terms, limit in ((2_000, "at most 500 are checked"), (10_000, "at most 60000 are")):
        chain = "def f(x: int) -> bool:\n    return " + " and ".join(["x > 0"] * terms) + "\n"
        report = checker.check(chain)
        assert report.error is None
        [(kind, code, message)] = _unreadable(report.findings)
        assert (kind, code) == ("types", "unreadable") and limit in message
    assert report.findings[0].line == 0  # too long: no line is to blame
    short = "def f(x: int) -> bool:\n    return " + " and ".join(["x"] * 9_000) + "\n"
    [found] = checker.check(short).findings
    assert found.line == 2 and "too deeply nested to check: an expression about 9" in found.message
    assert asked == []


def test_nested_empty_literals_past_the_bracket_limit_are_one_finding(
    checker: StaticChecker,
) -> None:
    # 199 levels (CPython's most) took mypy 11 s on a loaded host; 50 take 0.2 s.
    asked = _count_tools(checker)
    deep = "def f() -> object:\n    return " + "[" * 199 + "]" * 199 + "\n"
    [(kind, _, message)] = _unreadable(checker.check(deep).findings)
    assert kind == "types" and "199 brackets open at once (at most 50" in message
    assert asked == []
    assert checker.check("y = " + "[" * 50 + "]" * 50 + "\n").findings == ()
    assert asked == ["mypy", "ruff"]  # mypy is asked first, ruff while it reads


def test_a_text_over_the_size_limit_is_one_finding(checker: StaticChecker) -> None:
    asked = _count_tools(checker)
    long = "x = 1\n" * 10_001
    [(kind, _, message)] = _unreadable(checker.check(long).findings)
    assert kind == "types" and "too long to check: 60006 characters" in message
    assert asked == []
    assert checker.check("x = 1\n" * 9_999).findings == ()  # under the limit: read as ever
    assert asked == ["mypy", "ruff"]  # mypy is asked first, ruff while it reads


def test_a_text_too_deep_for_the_parser_is_a_finding_not_an_exception() -> None:
    # The token guard is switched off, so the parser itself meets the text.
    checker = StaticChecker(StaticSettings(max_nesting=10**9))
    _count_tools(checker)
    try:
        for deep in ("y = " + "-" * 50_000 + "1\n", "y = " + "+".join(["x"] * 5_000) + "\n"):
            report = checker.check(deep)
            assert report.error is None
            [(kind, _, message)] = _unreadable(report.findings)
            assert kind == "types" and "too deeply nested" in message
        assert checker.check(_correct(1)) == _static.StaticReport()
    finally:
        checker.close()


def test_the_parse_lock_raises_a_syntax_error_for_a_deep_text_and_is_released() -> None:
    deep = "y = " + "+".join(["x"] * 20_000)
    with pytest.raises(_ast_turns.TooComplex) as raised:
        _ast_turns.parse(deep)
    assert isinstance(raised.value, SyntaxError) and "too deeply nested" in raised.value.msg
    parsed: list[int] = []
    other = threading.Thread(target=lambda: parsed.append(len(_ast_turns.parse("a = 1").body)))
    other.start()
    other.join(timeout=60)
    assert parsed == [1]


# --- a dead or stalled checker is restarted; one answer cannot affect another ---------


def test_a_daemon_that_died_is_replaced_and_the_check_is_not_lost(
    checker: StaticChecker,
) -> None:
    assert [f.code for f in checker.check(WRONG).findings] == ["return-value"]
    status = checker._status
    assert status is not None
    pid = _read_status(status)["pid"]
    assert isinstance(pid, int)
    os.kill(pid, signal.SIGKILL)  # as a crash on the answer before would
    report = checker.check(WRONG + "\n")
    assert report.error is None and [f.code for f in report.findings] == ["return-value"]


def test_a_poison_answer_followed_by_ten_correct_ones_gives_ten_clean_reports() -> None:
    # Limits off: the poison reaches mypy and kills its daemon, as on the code before.
    settings = StaticSettings(max_nesting=10**9, max_chars=10**9)
    checker = StaticChecker(settings)
    try:
        poisoned = checker.check(POISON)
        assert poisoned.error is None
        [(kind, code, message)] = _unreadable(poisoned.findings)
        assert (kind, code) == ("types", "unreadable")
        assert message.startswith("mypy cannot check this code: ")
        reports = [checker.check(_correct(n)) for n in range(10)]
        assert [report.error for report in reports] == [None] * 10
        assert all(report.findings == () for report in reports)
        assert [f.code for f in checker.check(WRONG).findings] == ["return-value"]
    finally:
        checker.close()


def test_an_answer_over_its_cpu_budget_is_its_finding_and_others_pass() -> None:
    # Six functions of 3,000 terms each cost mypy about 4 CPU-seconds on a quick host
    # (one of 4,000 took under 1 s on some: the test passed or failed by the host's
    # speed; one of 16,000 crashes the daemon); a correct answer and the known-good
    # text cost milliseconds. On mypy's update loop six were checked under 1 CPU-second
    # in some runs of this file (not alone; the cause is not found): twelve.
    term = " and ".join(["x"] * 3_000)
    slow = "".join(f"def f{i}(x: int) -> bool:\n    return {term}\n\n\n" for i in range(12))
    settings = StaticSettings(lint=False, timeout_s=1.0, max_nesting=10**9, max_chars=10**9)
    checker = StaticChecker(settings)
    try:
        [(kind, _, message)] = _unreadable(checker.check(slow).findings)
        assert kind == "types" and message == (
            "mypy cannot check this code: mypy used over 1 CPU-seconds"
        )
        reports = [checker.check(_correct(n)) for n in range(3)]
        assert [(report.error, report.findings) for report in reports] == [(None, ())] * 3
    finally:
        checker.close()


@pytest.mark.skipif(sys.platform != "linux", reason="CPU time is read from /proc")
def test_a_check_that_waits_for_a_cpu_is_not_over_its_limit() -> None:
    # The daemon is stopped for 3 s of a check limited to 1 s: a starved host, as seen
    # from the daemon. It used no CPU meanwhile, so the check is neither cut nor retried.
    checker = StaticChecker(StaticSettings(lint=False, timeout_s=1.0))
    try:
        checker.warm()
        status = checker._status
        assert status is not None
        pid = _read_status(status)["pid"]
        assert isinstance(pid, int)
        os.kill(pid, signal.SIGSTOP)
        resume = threading.Timer(3.0, _resume, (pid,))
        resume.start()
        try:
            report = checker.check(WRONG)
        finally:
            resume.join()
            with contextlib.suppress(ProcessLookupError):  # replaced: the assertion says so
                os.kill(pid, signal.SIGCONT)
        assert report.error is None and [f.code for f in report.findings] == ["return-value"]
        assert checker._status == status and _read_status(status)["pid"] == pid  # not replaced
    finally:
        checker.close()


def test_the_python_judge_scores_a_poison_answer_and_passes_ten_correct_ones_after() -> None:
    case = Case(
        id="add",
        prompt="Write add(a, b).",
        entry_point="add",
        checks=(Check(source="assert add(1, 2) == 3", origin="heldout"),),
    )
    poison = (
        "def add(a: int, b: int) -> int:\n    if "
        + " and ".join(["a == a"] * 15_000)
        + ":\n        return a + b\n    return a + b\n"
    )
    judge = PythonJudge(static=StaticSettings())
    try:
        poisoned = judge(case, poison)
        assert poisoned.infrastructure_error is None and poisoned.passed
        assert [(f.kind, f.code) for f in poisoned.findings] == [("types", "unreadable")]
        answers = [f"def add(a: int, b: int) -> int:\n    return b + a  # {n}\n" for n in range(10)]
        results = [judge(case, answer) for answer in answers]
        assert [result.infrastructure_error for result in results] == [None] * 10
        assert all(result.passed and result.clean for result in results)
    finally:
        judge.close()


def test_a_ruff_crash_on_one_answer_is_its_finding_and_others_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process per text (the server's twin is in test_static_speed.py).
    checker = StaticChecker(StaticSettings(ruff_server=False))
    real = _static._ruff_binary()
    fake = tmp_path / "ruff"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, subprocess, sys\n"
        "data = sys.stdin.buffer.read()\n"
        "if b'POISON' in data:\n"
        "    os.abort()  # a crashing tool, as a panic would be\n"
        f"sys.exit(subprocess.run([{real!r}, *sys.argv[1:]], input=data).returncode)\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    monkeypatch.setattr(_static, "_ruff_binary", lambda: str(fake))
    checker._mypy_soon = lambda code: lambda: ()  # type: ignore[method-assign]
    try:
        poisoned = checker.check("import os\nPOISON = 1\n")
        assert poisoned.error is None
        [(kind, code, message)] = _unreadable(poisoned.findings)
        assert (kind, code) == ("lint", "unreadable") and message.startswith("ruff cannot check")
        after = checker.check("import os\nGOOD = 1\n")
        assert after.error is None and [f.code for f in after.findings] == ["F401"]
    finally:
        checker.close()


def test_a_checker_that_fails_the_known_good_text_is_an_infrastructure_error() -> None:
    broken = StaticChecker(StaticSettings(lint=False, mypy_flags=("--no-such-flag",)))
    try:
        report = broken.check(_correct(1))
        assert report.findings == () and report.error is not None
        assert "known-good text" in report.error
    finally:
        broken.close()


# --- the daemon dies with its starter --------------------------------------------------

_STARTER = """
import sys, threading
from pathlib import Path
from critiquebench.judges import StaticChecker, StaticSettings

settings = StaticSettings(
    lint=False, cache_dir=Path(sys.argv[1]), timeout_s=600, max_nesting=10**9
)
checker = StaticChecker(settings)
warm = threading.Thread(target=checker.warm)  # started by a thread that then ends
warm.start()
warm.join()
report = checker.check("def f(x: int) -> str:\\n    return x\\n")
print(report.error, [f.code for f in report.findings], flush=True)
print(checker._folder, flush=True)
if sys.argv[2] == "busy":  # killed while the daemon works (seconds of mypyc code)
    checker.check("def g(x: int) -> bool:\\n    return " + " and ".join(["x"] * 6000))
threading.Event().wait()
"""


def _marked(marker: bytes) -> list[int]:
    """Processes whose command line holds ``marker`` (the test's own cache folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue  # ended meanwhile
    return found


def _resume(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


def _read_status(status: Path) -> dict[str, object]:
    import json

    data = json.loads(status.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("daemon", ["idle", "busy"])
def test_no_daemon_nor_folder_outlives_a_sigkilled_starter(tmp_path: Path, daemon: str) -> None:
    cache = tmp_path / "cache"
    marker = b"--cache-dir\0" + str(cache).encode()  # only this test's daemon has it
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER, str(cache), daemon], stdout=subprocess.PIPE, text=True
    )
    try:
        assert starter.stdout is not None
        assert starter.stdout.readline().strip() == "None ['return-value']"
        folder = Path(starter.stdout.readline().strip())
        assert folder.is_dir() and _marked(marker)  # the daemon runs, the marker finds it
        starter.kill()
        starter.wait()
        deadline = time.monotonic() + 60  # a liveness bound, not a timing assertion
        while _marked(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _marked(marker) == []
        # The checker's private folder (in the temp folder) goes with the daemon: a
        # killed starter cannot remove it, so its keeper does.
        assert not folder.exists()
    finally:
        starter.kill()
        starter.wait()
        for pid in _marked(marker):  # hermetic even when the assertion failed
            os.kill(pid, signal.SIGKILL)


def test_a_closed_checker_leaves_no_daemon_and_starts_none() -> None:
    checker = StaticChecker(StaticSettings(lint=False))
    checker.warm()
    daemon = checker._slot.daemon
    assert daemon is not None and daemon.alive()
    checker.close()
    assert not daemon.alive() and checker._slot.daemon is None
    assert checker.check(WRONG).error is not None  # closed: no daemon is started again


def test_comments_are_blanked_on_the_rows_the_tokenizer_numbers() -> None:
    # "\x0c" and "\u2028" inside a string are line breaks to str.splitlines, not to the
    # tokenizer: a comment after them must be blanked where it is, and nothing else.
    code = 'x = "a\x0cb\u2028c"  # first\ny = 1  # second\n'
    blanked = _static.scan_code(code).blanked
    assert blanked == 'x = "a\x0cb\u2028c"  #      \ny = 1  #       \n'
