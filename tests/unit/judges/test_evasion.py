"""Code that hides itself from ruff and mypy is a finding of its own (CB1xx, types)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from critiquebench.judges import StaticChecker, StaticSettings
from critiquebench.judges.static._evasion import MOST_FINDINGS, evasion_findings

# Each hides a type error (an int returned as str) from mypy, which reports 0 for it.
HIDDEN = {
    "no_type_check": (
        "from typing import no_type_check\n\n\n@no_type_check\n"
        "def f(x: int) -> str:\n    return x + 1\n",
        [("CB101", 1), ("CB101", 4)],
    ),
    "no_type_check aliased": (
        "import typing as t\n\nskip = t.no_type_check\n\n\n@skip\n"
        "def f(x: int) -> str:\n    return x + 1\n",
        [("CB101", 3)],
    ),
    "TYPE_CHECKING else": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n\n"
        "    def f(x: int) -> str:\n        return str(x)\n\nelse:\n\n"
        "    def f(x: int) -> str:\n        return x + 1\n",
        [("CB102", 3)],
    ),
    "not TYPE_CHECKING": (
        "import typing\n\nif not typing.TYPE_CHECKING:\n\n"
        "    def f(x: int) -> str:\n        return x + 1\n",
        [("CB102", 3)],
    ),
    "version test": (
        "import sys\n\nif sys.version_info >= (3, 12):\n\n"
        "    def f(x: int) -> str:\n        return x + 1\n",
        [("CB102", 3)],
    ),
    "platform assert": (
        "import sys\n\nassert sys.platform == 'win32'\n\n\ndef f(x: int) -> str:\n    return x\n",
        [("CB102", 3)],
    ),
    "case guard": (
        "from typing import TYPE_CHECKING\n\n\ndef f(x: int) -> str:\n    match x:\n"
        "        case _ if not TYPE_CHECKING:\n            return x\n    return ''\n",
        [("CB102", 6)],
    ),
    "exec of a string": (
        "SOURCE = 'def f(x: int) -> str:\\n    return x + 1\\n'\nexec(SOURCE)\n",
        [("CB103", 2)],
    ),
    "eval of a lambda": (
        "def f(x: int) -> str:\n    g = eval('lambda y: y + 1')\n    return g(x)\n",
        [("CB103", 2)],
    ),
    "eval of code tied to an input": (
        "def f(x: int) -> str:\n    return eval('(lambda y: y + 1)' + str(x)[:0])(x)\n",
        [("CB103", 2)],
    ),
    "builtins reached by attribute": (
        "def f(x: int) -> str:\n    return getattr(print.__self__, 'ev' + 'al')('x + 1')\n",
        [("CB103", 2)],
    ),
    "eval of a module constant, tied to an input": (
        "CODE = '(lambda y: y + 1)'\n\n\ndef f(x: int) -> str:\n"
        "    text = CODE + str(x)[:0]\n    return eval(text)(x)\n",
        [("CB103", 6)],
    ),
    "eval of a decoded text, tied to an input": (
        "import codecs\n\n\ndef f(x: int) -> str:\n"
        "    text = codecs.decode('ynzoqn l: l + 1', 'rot13') + str(x)[:0]\n"
        "    return eval(text)(x)\n",
        [("CB103", 6)],
    ),
    "builtins reached through globals": (
        "def f(x: int) -> str:\n    return globals()['__builtins__'].eval('x')\n",
        [("CB103", 2)],
    ),
    "another interpreter": (
        "import subprocess\nimport sys\n\n\ndef f(x: int) -> str:\n"
        "    return subprocess.run([sys.executable, '-c', 'print(1)']).stdout\n",
        [("CB103", 1)],
    ),
    "import by name": (
        "import importlib\n\n\ndef f(x: int) -> str:\n"
        "    return importlib.import_module('m').g(x)\n",
        [("CB103", 1)],
    ),
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_each_hiding_place_is_a_finding(name: str) -> None:
    code, expected = HIDDEN[name]
    found = evasion_findings(ast.parse(code))
    assert [(f.code, f.line) for f in found] == expected
    assert all(f.kind == "types" and f.origin == "static" for f in found)


@pytest.mark.parametrize(
    "code",
    [
        # HumanEval/160's reference: eval of the arithmetic its own arguments spell.
        "def do_algebra(operator: list[str], operand: list[int]) -> int:\n"
        "    expression = str(operand[0])\n"
        "    for oprt, oprn in zip(operator, operand[1:]):\n"
        "        expression += oprt + str(oprn)\n"
        "    return eval(expression)\n",
        # A bare TYPE_CHECKING import block: checked, never run, nothing hidden.
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import os\n",
        "def f(x: object) -> str:\n    return getattr(x, 'name', '')\n",
        "import math\n\n\ndef f(x: float) -> int:\n    return math.floor(x)\n",
        # Ordinary methods that share a name with a builtin that runs code.
        "import re\n\n\ndef f(s: str) -> bool:\n    return bool(re.compile('a+').match(s))\n",
        "def f(model: object) -> None:\n    model.eval()\n",
        "import os\n\n\ndef f(p: str) -> str:\n    return os.path.join(p, 'x')\n",
    ],
)
def test_plain_code_hides_nothing(code: str) -> None:
    assert evasion_findings(ast.parse(code)) == ()


def test_hostile_trees_are_read_in_bounded_work_and_never_raise() -> None:
    many = "\n".join(f"exec('x{n}')" for n in range(5000))
    found = evasion_findings(ast.parse(many))
    assert len(found) == MOST_FINDINGS
    deep = "x = " + "[" * 150 + "]" * 150 + "\n" + "if sys.platform:\n    pass\n" * 3
    assert [f.code for f in evasion_findings(ast.parse(deep))] == ["CB102"] * 3
    nested = (
        "def f(x):\n"
        + "".join("    " * depth + f"def g{depth}(y{depth}):\n" for depth in range(1, 60))
        + "    " * 60
        + "return eval(y59)\n"
    )
    assert evasion_findings(ast.parse(nested)) == ()  # eval of its own function's input


@pytest.fixture(scope="module")
def checker() -> Iterator[StaticChecker]:
    checker = StaticChecker(StaticSettings())
    try:
        yield checker
    finally:
        checker.close()


def test_code_hidden_from_mypy_scores_findings_through_the_checker(
    checker: StaticChecker,
) -> None:
    for name, (code, expected) in HIDDEN.items():
        report = checker.check(code)
        assert report.error is None
        codes = [(f.code, f.line) for f in report.findings if f.code.startswith("CB")]
        assert codes == expected, name
    # The same type error in plain sight is a plain type finding.
    plain = "def f(x: int) -> str:\n    return x + 1\n"
    assert [f.code for f in checker.check(plain).findings] == ["return-value"]
