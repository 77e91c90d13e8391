"""Whatever the attempt writes or however it ends, the judge returns a result."""

from __future__ import annotations

import json

import pytest

from critiquebench.judges import PythonJudge
from critiquebench.judges._plain import MAX_TEXT
from critiquebench.pipeline._escalation import escalation_markdown
from tests.helpers import GOOD_ADD, make_case
from tests.sandbox.conftest import kinds, run

_WRITE = "import os\ndef _out(data):\n    os.write(3, data)\n"

GARBAGE = {
    "deep nesting": "_out(b'[' * 200000 + b'\\n')",
    "huge number": "_out(b'9' * 5000 + b'\\n')",
    "check index not a number": (
        "import gc\n"
        "nonce = next(o['nonce'] for o in gc.get_objects()\n"
        "             if isinstance(o, dict) and 'nonce' in o)\n"
        "line = {'n': nonce, 'e': 'check', 'i': 'zero', 'values': [3]}\n"
        "_out(json.dumps(line).encode() + b'\\n')"
    ),
    "value with an unknown tag": (
        "import gc\n"
        "nonce = next(o['nonce'] for o in gc.get_objects()\n"
        "             if isinstance(o, dict) and 'nonce' in o)\n"
        "line = {'n': nonce, 'e': 'check', 'i': 0, 'values': [{'evil': 1}]}\n"
        "_out(json.dumps(line).encode() + b'\\n')"
    ),
    "not UTF-8": "_out(b'\\xff\\xfe\\x00garbage\\n')",
}


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_garbage_on_the_results_channel_is_a_defect_never_an_exception(
    judge: PythonJudge, name: str
) -> None:
    code = (
        "import json\n"
        + _WRITE
        + "def add(a, b):\n    "
        + GARBAGE[name].replace("\n", "\n    ")
        + "\n    return a - b\n"
    )
    result = run(judge, code)
    assert result.infrastructure_error is None
    assert not result.passed
    assert result.defects() >= 2, (name, kinds(result))


def test_a_huge_message_is_truncated_everywhere(judge: PythonJudge) -> None:
    case = make_case(heldout=("assert add(0, 0) == 0, 'x' * 900_000",))
    code = "def add(a, b):\n    raise ValueError('y' * 900_000)\n"
    result = judge(case, code)
    assert result.failures
    for failure in result.failures:
        assert len(failure.message) <= MAX_TEXT + 40


def test_lone_surrogates_become_valid_utf8(judge: PythonJudge) -> None:
    code = "def add(a, b):\n    raise ValueError('bad \\udcff text')\n"
    result = run(judge, code)
    message = result.failures[0].message
    message.encode("utf-8")  # would raise on a lone surrogate
    assert "bad" in message
    json.dumps([failure.message for failure in result.failures]).encode("utf-8")


def test_exiting_early_is_a_crash_not_a_pass(judge: PythonJudge) -> None:
    result = run(judge, "import os\nos._exit(0)\n" + GOOD_ADD)
    assert kinds(result)[0] == "crash"
    assert kinds(result).count("not_run") == 3


def test_stdout_and_stderr_floods_are_discarded(judge: PythonJudge) -> None:
    code = "import sys\nfor _ in range(2000):\n    print('x' * 10000)\n"
    code += "    sys.stderr.write('y' * 10000)\n"
    assert run(judge, code + GOOD_ADD).passed


def test_a_flood_on_the_results_channel_is_cut_off(judge: PythonJudge) -> None:
    code = _WRITE + "def add(a, b):\n    while True:\n        _out(b'x' * 65536)\n"
    result = run(judge, code)
    assert any("exceeded" in failure.message for failure in result.failures)


def test_escalation_records_accept_whatever_the_judge_reports() -> None:
    from critiquebench.judges import Failure, JudgeResult
    from critiquebench.loop import Attempt, LoopOutcome

    failure = Failure(kind="error", message="bad \udcff" + "z" * 900_000)
    result = JudgeResult(failures=(failure,), checks_total=1, checks_passed=0, duration_s=0.0)
    attempt = Attempt(0, "x = '\udcff'", result, (failure,), "")
    outcome = LoopOutcome("t", attempt, (attempt,), (), "stagnation", 0, 0, 0, None)
    text = escalation_markdown("t", outcome)
    text.encode("utf-8")  # would raise on a lone surrogate
    assert len(text) < 20_000
