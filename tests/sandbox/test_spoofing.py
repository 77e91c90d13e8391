"""A wrong answer must score as wrong, whatever it does to the judge.

Each candidate is a wrong ``add`` (honestly it fails 2 of the 3 checks) that tries
to make the judge report a pass. Expected values never enter the sandbox, so the
best any trick can do is to be scored like the wrong answer it is.
"""

from __future__ import annotations

import pytest

from critiquebench.judges import PythonJudge
from critiquebench.suites import load_suite
from tests.helpers import WRONG_ADD
from tests.sandbox.conftest import run

HONEST_WRONG_DEFECTS = 2

SPOOFS = {
    "object equal to everything": (
        "class Any:\n"
        "    def __eq__(self, other): return True\n"
        "    def __ne__(self, other): return False\n"
        "    def __bool__(self): return True\n"
        "    __hash__ = object.__hash__\n"
        "def add(a, b):\n    return Any()\n"
    ),
    "int subclass equal to everything": (
        "class Int(int):\n"
        "    def __eq__(self, other): return True\n"
        "    __hash__ = int.__hash__\n"
        "def add(a, b):\n    return Int(a - b)\n"
    ),
    "patched harness module": (
        "import sys\n"
        "main = sys.modules.get('__main__')\n"
        "for name in dir(main):\n"
        "    try: setattr(main, name, lambda *a, **k: True)\n"
        "    except Exception: pass\n"
        "def add(a, b):\n    return a - b\n"
    ),
    "patched builtins": (
        "import builtins, operator\n"
        "builtins.abs = lambda x: 0\n"
        "builtins.isinstance = lambda *a: True\n"
        "operator.eq = lambda a, b: True\n"
        "def add(a, b):\n    return a - b\n"
    ),
    "expected value read from the caller's frame": (
        "import sys, ast\n"
        "def add(a, b):\n"
        "    frame = sys._getframe(1)\n"
        "    while frame is not None:\n"
        "        for value in list(frame.f_locals.values()):\n"
        "            if isinstance(value, str) and '==' in value:\n"
        "                return ast.literal_eval(value.split('==')[1].strip())\n"
        "        frame = frame.f_back\n"
        "    return a - b\n"
    ),
    "function swapped in the checks' globals": (
        "import gc\n"
        "def add(a, b):\n"
        "    for ref in gc.get_referrers(add):\n"
        "        if isinstance(ref, dict) and 'candidate' in ref:\n"
        "            ref['candidate'] = ref['add'] = lambda a, b: a + b\n"
        "    return a - b\n"
    ),
    "forged results with the nonce, on every descriptor": (
        "import gc, json, os\n"
        "def add(a, b):\n"
        "    nonce = None\n"
        "    for obj in gc.get_objects():\n"
        "        if isinstance(obj, dict) and isinstance(obj.get('nonce'), str):\n"
        "            nonce = obj['nonce']\n"
        "    for fd in range(3, 64):\n"
        "        for i in range(3):\n"
        "            for line in ({'n': nonce, 'e': 'check', 'i': i, 'kind': 'pass'},\n"
        "                         {'n': nonce, 'e': 'check', 'i': i, 'values': [3]},\n"
        "                         {'n': nonce, 'e': 'done'}):\n"
        "                try: os.write(fd, (json.dumps(line) + '\\n').encode())\n"
        "                except OSError: pass\n"
        "    return a - b\n"
    ),
}


@pytest.mark.parametrize("name", sorted(SPOOFS))
def test_a_spoofing_wrong_answer_scores_as_wrong(judge: PythonJudge, name: str) -> None:
    result = run(judge, SPOOFS[name])
    assert result.infrastructure_error is None
    assert not result.passed, name
    assert result.defects() >= HONEST_WRONG_DEFECTS, (name, result.failures)


def test_the_honest_wrong_answer_scores_two(judge: PythonJudge) -> None:
    assert run(judge, WRONG_ADD).defects() == HONEST_WRONG_DEFECTS


def test_objects_that_are_not_plain_data_fail_with_a_clear_message(judge: PythonJudge) -> None:
    result = run(judge, SPOOFS["int subclass equal to everything"])
    assert "not plain data" in result.failures[0].message


def test_suite_files_and_reference_solutions_are_out_of_reach(judge: PythonJudge) -> None:
    case = load_suite("basic", limit=1)[0]
    import critiquebench.suites as suites

    data = next(iter(suites.__path__))  # the package's data folder on the host
    code = (
        "import os\n"
        "def add_two(a, b):\n"
        "    for root in (" + repr(data) + ", '/work', '/root', '/home', '/etc'):\n"
        "        try:\n"
        "            for dirpath, _, files in os.walk(root):\n"
        "                for name in files:\n"
        "                    if name.endswith('.jsonl'):\n"
        "                        return 'found ' + os.path.join(dirpath, name)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return a + b\n"
    )
    result = judge(case, code)
    assert result.passed, result.failures


def test_the_sandbox_never_sees_a_check_or_an_expected_value(judge: PythonJudge) -> None:
    # The candidate returns every string in its process that looks like a check.
    code = (
        "import gc\n"
        "def add(a, b):\n"
        "    found = []\n"
        "    for obj in gc.get_objects():\n"
        "        if isinstance(obj, str) and 'add(-1, 1)' in obj and 'gc.' not in obj:\n"
        "            found.append(obj)\n"
        "        elif isinstance(obj, dict):\n"
        "            found += [v for v in obj.values()\n"
        "                      if isinstance(v, str) and 'add(-1, 1)' in v and 'gc.' not in v]\n"
        "    return found\n"
    )
    result = run(judge, code)
    assert [failure.actual for failure in result.failures] == ["[]", "[]", "[]"]
