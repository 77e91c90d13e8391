"""The fast static path (ruff's long-lived server, checks beside the tests) gives exactly
the findings of the plain path (a ``ruff check`` process per text, checks after the
tests), and keeps the plain path's guarantees: a text that breaks the server is its own
finding, a broken server is not used, and the server dies with its starter.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.judges import Failure, PythonJudge, StaticChecker, StaticSettings
from critiquebench.judges.static import _checker as _static
from critiquebench.judges.static._ruff_server import RuffServer, RuffServerError, unhinted
from critiquebench.suites import Case, load_suite

_SABOTAGE = (
    "\n\n_original = {name}\n\n\ndef {name}(*args, **kwargs):\n    return _original(*args)\n"
)

# Texts whose comments a server that honoured them would read: each must keep its findings.
HOSTILE = [
    "import os  # noqa\nimport sys  # noqa: F401\n",
    "# ruff: noqa\nimport os\n",
    "# flake8: noqa\nimport os\n",
    "# ruff: noqa: F401\nimport os\nx = undefined\n",
    "import os  # ruff: disable[F401]\nimport re\n# ruff: disable[F401]\nimport json\n",
    "import os  # \u202e noqa\n",  # a bidirectional control in a comment: PLE2502 stays
    "y = 'a\u202eb'  # noqa\n",
    "s = '\u2028'; import os  # noqa\nimport re  # noqa\n",  # lines as the tokenizer counts
    "import os\x0cimport re  # noqa\n",
    "import os  # noqa\r\nimport re  # noqa\r\n",
    "x = [1,\n  # noqa\n  undefined]\n",
    "def f(x):\n    import os  # type: ignore  # noqa\n    return x == None  # noqa: E711\n",
    "zip([1], [2])  # noqa: B905\nassert (1, 'x')  # noqa\n",
    "def f(a=[]):  # noqa: B006\n    return a\n",
]


def _mutants(case: Case) -> list[str]:
    """The reference wrapped in a redefinition (as bench/judge.py breaks answers) and with
    its entry point's first statement deleted (undefined names)."""
    code = case.reference_solution
    texts = [code + _SABOTAGE.format(name=case.entry_point)]
    functions = [
        node
        for node in ast.parse(code).body
        if isinstance(node, ast.FunctionDef) and node.name == case.entry_point
    ]
    body = [
        node
        for node in functions[-1].body
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    if len(body) >= 2 and body[0].end_lineno is not None:
        lines = code.splitlines(keepends=True)
        texts.append("".join(lines[: body[0].lineno - 1] + lines[body[0].end_lineno :]))
    return texts


def _corpus() -> list[tuple[str, str]]:
    """(answer, prompt) pairs: every HumanEval reference, its mutants, and HOSTILE."""
    pairs = [(text, "") for text in HOSTILE]
    for case in load_suite("humaneval"):
        pairs.append((case.reference_solution, case.prompt))
        pairs.extend((text, case.prompt) for text in _mutants(case))
    return pairs


@pytest.fixture
def fast() -> Iterator[StaticChecker]:
    made = StaticChecker(StaticSettings())
    try:
        yield made
    finally:
        made.close()


def test_the_server_finds_exactly_what_a_process_per_text_finds() -> None:
    # Lint only: the server replaces ruff's process; mypy's path is the same in both.
    server = StaticChecker(StaticSettings(types=False, remembered=0))
    plain = StaticChecker(StaticSettings(types=False, remembered=0, ruff_server=False))
    try:
        pairs = _corpus()
        assert len(pairs) > 450
        differing = []
        for text, prompt in pairs:
            served, processed = server.check(text, prompt), plain.check(text, prompt)
            if served != processed:
                differing.append((text, served, processed))
        assert server._slot.ruff is not None and not server._slot.ruff_broken  # it served
        assert differing == []
        # The corpus exercises the rules: findings of several codes, none excused away.
        found = {f.code for text, _ in pairs for f in plain.check(text).findings}
        assert {"F401", "F821", "PLE2502", "B006"} <= found
        for text in HOSTILE[:4]:
            assert server.check(text).findings  # no comment suppressed a finding
    finally:
        server.close()
        plain.close()


def test_the_full_judge_finds_what_the_plain_path_finds_after_the_tests() -> None:
    # The checks run beside the sandboxed tests now; the findings are those of a plain
    # checker (a process per ruff text) asked afterwards, answer by answer.
    judge = PythonJudge()
    plain = StaticChecker(StaticSettings(ruff_server=False))
    try:
        cases = load_suite("humaneval")[:12]
        for case in cases:
            for answer in (case.reference_solution, *_mutants(case)):
                judged = judge(case, answer)
                assert judged.infrastructure_error is None
                assert judged.findings == plain.check(answer, case.prompt).findings
    finally:
        judge.close()
        plain.close()


def test_unhinted_blanks_ascii_in_comments_only_on_the_tokenizers_rows() -> None:
    text = "s = '\u2028'  # noqa\nimport os  # \u202e noqa\n"
    scan = _static.scan_code(text)
    assert scan.comments is not None
    blanked = "s = '\u2028'  #     \nimport os  # \u202e     \n"
    assert unhinted(text, list(scan.comments)) == blanked
    assert _static.scan_code("x = (\n").comments is None  # the tokenizer gave up


def test_a_text_that_breaks_the_server_is_its_finding_and_the_next_is_served(
    fast: StaticChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = RuffServer.lint
    served: list[str] = []

    def poisoned(self: RuffServer, text: str, timeout_s: float) -> tuple[Failure, ...]:
        if "POISON" in text:
            self.stop()  # as a crash would leave it
            raise RuffServerError("ruff's server is gone")
        served.append(text)
        return real(self, text, timeout_s)

    monkeypatch.setattr(RuffServer, "lint", poisoned)
    fast._mypy_soon = lambda code: lambda: ()  # type: ignore[method-assign]
    report = fast.check("import os\nPOISON = 1\n")
    assert report.error is None
    [finding] = report.findings
    assert (finding.kind, finding.code) == ("lint", "unreadable")
    assert finding.message.startswith("ruff cannot check")
    # A fresh server was proved (on the rule probe, then the known-good text) first.
    assert served[-1] == _static.CANARY and "POISON" not in "".join(served)
    after = fast.check("import os\nGOOD = 1\n")
    assert [f.code for f in after.findings] == ["F401"] and not fast._slot.ruff_broken
    assert served[-1] == "import os\nGOOD = 1\n"  # the server, not a process, read it


def test_a_server_that_fails_the_known_good_text_is_replaced_by_processes(
    fast: StaticChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: RuffServer, text: str, timeout_s: float) -> tuple[Failure, ...]:
        raise RuffServerError("ruff's server wrote no findings")

    monkeypatch.setattr(RuffServer, "lint", broken)
    fast._mypy_soon = lambda code: lambda: ()  # type: ignore[method-assign]
    for text in ("import os\n", "import re\n"):  # the second goes to a process at once
        report = fast.check(text)
        assert report.error is None and [f.code for f in report.findings] == ["F401"]
    assert fast._slot.ruff_broken and fast._slot.ruff is None


_STARTER = """
import sys, threading
from critiquebench.judges import StaticChecker, StaticSettings

checker = StaticChecker(StaticSettings(types=False))
done = []
worker = threading.Thread(target=lambda: done.append(checker.check("import os\\n")))
worker.start()  # started by a thread that then ends
worker.join()
keeper = checker._slot.ruff._process.pid
print([f.code for f in done[0].findings], keeper, flush=True)
threading.Event().wait()
"""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(child) for child in (task / "children").read_text().split())
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2] != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_no_ruff_server_outlives_a_sigkilled_starter() -> None:
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER], stdout=subprocess.PIPE, text=True, env=os.environ
    )
    servers: list[int] = []
    try:
        assert starter.stdout is not None
        codes, keeper = starter.stdout.readline().rsplit(" ", 1)
        assert codes == "['F401']"
        servers = _children(int(keeper))
        [server] = servers
        assert b"server" in Path(f"/proc/{server}/cmdline").read_bytes()
        # Alive after the thread that started it ended (its parent is the keeper).
        assert _alive(server)
        starter.kill()
        starter.wait()
        deadline = time.monotonic() + 60  # a liveness bound, not a timing assertion
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(server)
    finally:
        starter.kill()
        starter.wait()
        for pid in servers:  # hermetic even when the assertion failed
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_closed_checker_stops_its_ruff_server(fast: StaticChecker) -> None:
    assert [f.code for f in fast.check("import os\n").findings] == ["F401"]
    server = fast._slot.ruff
    assert server is not None and server.alive()
    process = server._process
    fast.close()
    assert fast._slot.ruff is None and process is not None and process.poll() is not None


def test_a_server_that_does_not_apply_the_rules_is_never_used(
    fast: StaticChecker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ruff's server falls back to its defaults, silently, on a setting it cannot use.
    real_start = RuffServer.start

    def forgetful(self: RuffServer, timeout_s: float) -> None:
        self.rules, self.ignored = ("F",), ()
        real_start(self, timeout_s)

    monkeypatch.setattr(RuffServer, "start", forgetful)
    fast._mypy_soon = lambda code: lambda: ()  # type: ignore[method-assign]
    report = fast.check("def f(a=[]):\n    return a\n")
    assert report.error is None and [f.code for f in report.findings] == ["B006"]
    assert fast._slot.ruff_broken
