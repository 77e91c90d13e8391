"""The static rule set counts bugs, not style: correct code scores 0, bugs still count."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from critiquebench.judges import Failure, StaticChecker, StaticSettings
from critiquebench.judges.static._calibration import (
    returning_functions,
    unproven_invariant,
    without_task_findings,
)
from critiquebench.suites import BUNDLED_SUITES, load_suite


@pytest.fixture(scope="module")
def checker() -> Iterator[StaticChecker]:
    checker = StaticChecker(StaticSettings())
    try:
        yield checker
    finally:
        checker.close()


def _python_references() -> list[tuple[str, str, str]]:
    return [
        (case.id, case.reference_solution, case.prompt)
        for name in sorted(BUNDLED_SUITES)
        for case in load_suite(name)
        if case.judge == "python" and case.reference_solution
    ]


def test_every_bundled_reference_solution_has_no_finding_of_any_kind(
    checker: StaticChecker,
) -> None:
    references = _python_references()
    # HumanEval's 164 and basic's 44: before calibration 12 of them carried 15
    # findings (B905 x4, F401 x3, B007, 7 mypy errors).
    assert len(references) >= 164 + 44
    found = {}
    for case_id, code, prompt in references:
        report = checker.check(code, prompt)
        assert report.error is None, (case_id, report.error)
        if report.findings:
            found[case_id] = [f.describe() for f in report.findings]
    assert found == {}


@pytest.mark.parametrize(
    ("code", "codes"),
    [
        # Undefined name (ruff F821 counts it once; mypy's twin is off).
        ("def f(x: int) -> int:\n    return x + y\n", ["F821"]),
        # Wrong types in annotated code.
        ("def f(x: int) -> str:\n    return x\n", ["return-value"]),
        ("def f(x: int) -> int:\n    return len(x)\n", ["arg-type"]),
        ("def f(x: list[int]) -> int:\n    return x.size\n", ["attr-defined"]),
        # A value return declared, none made: not an unproven invariant.
        ("def f(x: int) -> int:\n    print(x)\n", ["return"]),
        # Likely bugs of bugbear and pyflakes.
        ("def f(x: list[int] = []) -> list[int]:\n    return x\n", ["B006"]),
        ("def f() -> list[object]:\n    return [lambda: i for i in range(3)]\n", ["B023"]),
        ("def f(x: int) -> bool:\n    x == 1\n    return True\n", ["B015"]),
        ("def f(x: int) -> bool:\n    return x is 1\n", ["F632"]),
    ],
)
def test_real_bugs_are_still_found(checker: StaticChecker, code: str, codes: list[str]) -> None:
    report = checker.check(code)
    assert report.error is None
    assert [f.code for f in report.findings] == codes


@pytest.mark.parametrize(
    "code",
    [
        # Style, not defects (each was counted before calibration).
        "def f(a: list[int], b: list[int]) -> list[int]:\n"
        "    return [x + y for x, y in zip(a, b)]\n",
        "def f(n: int) -> int:\n    total = 0\n    for i in range(n):\n"
        "        total += 1\n    return total\n",
        "def f(x):\n    out = {}\n    return out\n",
        "def f(n):\n    xs = [1, 3]\n    xs.append(n / 2)\n    return xs\n",
        "def f(n: int) -> int:\n    for i in range(n, 0, -1):\n"
        "        if n % i == 0:\n            return i\n",
    ],
)
def test_style_is_not_a_defect(checker: StaticChecker, code: str) -> None:
    assert checker.check(code).findings == ()


PROMPT = 'from typing import List, Tuple\n\n\ndef head(xs: List[int]) -> int:\n    """First."""\n'


def test_the_prompts_own_findings_are_the_tasks_not_the_answers(checker: StaticChecker) -> None:
    answer = PROMPT + "    return xs[0]\n"
    alone = checker.check(answer)
    assert [(f.code, f.line) for f in alone.findings] == [("F401", 1)]
    assert checker.check(answer, PROMPT).findings == ()


def test_a_prompt_line_cannot_hide_a_bug_of_the_answer(checker: StaticChecker) -> None:
    # The prompt's import twice: its one unused-import finding excuses one F401; the
    # copy's redefinitions of List and Tuple stay.
    twice = "from typing import List, Tuple\n" + PROMPT + "    return xs[0]\n"
    assert sorted(f.code for f in checker.check(twice).findings) == ["F401", "F811", "F811"]
    assert [f.code for f in checker.check(twice, PROMPT).findings] == ["F811", "F811"]
    # A bug on a line that reads like a prompt line is still the answer's.
    wrong = PROMPT + '    return "x"\n'
    assert [f.code for f in checker.check(wrong, PROMPT).findings] == ["return-value"]
    # Another unused import, or one indented differently, is the answer's.
    other = "from typing import Dict\n" + PROMPT + "    return xs[0]\n"
    assert [(f.code, f.line) for f in checker.check(other, PROMPT).findings] == [("F401", 1)]


def test_prose_prompts_excuse_nothing(checker: StaticChecker) -> None:
    code = "import os\n\n\ndef f() -> int:\n    return 1\n"
    assert [f.code for f in checker.check(code, "Write f(); import os if you like.").findings] == [
        "F401"
    ]


def _types(message: str, code: str = "return-value", line: int = 3) -> Failure:
    return Failure(kind="types", message=message, code=code, line=line, origin="static")


def test_only_unproven_invariants_are_excused() -> None:
    excused = [
        'Incompatible return value type (got "tuple[float, ...] | None", '
        'expected "tuple[float, float]")',
        'Incompatible return value type (got "int | None", expected "int")',
    ]
    for message in excused:
        assert unproven_invariant(_types(message)), message
    kept = [
        'Incompatible return value type (got "str", expected "int")',
        'Incompatible return value type (got "None", expected "int")',
        'Incompatible return value type (got "tuple[int, str]", expected "tuple[int, int]")',
        'Incompatible return value type (got "int | str", expected "int")',
        'Incompatible return value type (got "list[int | None]", expected "list[int]")',
    ]
    for message in kept:
        assert not unproven_invariant(_types(message)), message
    assert unproven_invariant(
        _types('Argument 1 to "f" has incompatible type "int | None"; expected "int"', "arg-type")
    )
    to_len = 'Argument 1 to "len" has incompatible type "int | None"; expected "Sized"'
    assert not unproven_invariant(_types(to_len, "arg-type"))


def test_a_missing_return_is_excused_only_where_a_value_is_returned() -> None:
    tree = ast.parse(
        "def a(n: int) -> int:\n    for i in range(n):\n        return i\n"
        "def b(n: int) -> int:\n    print(n)\n"
        "def c(n: int) -> int:\n    def d() -> int:\n        return 1\n    d()\n"
    )
    returning = returning_functions(tree)
    missing = "Missing return statement"
    assert unproven_invariant(_types(missing, "return", 1), returning)
    assert not unproven_invariant(_types(missing, "return", 4), returning)
    assert not unproven_invariant(_types(missing, "return", 6), returning)  # only d returns


def test_task_findings_are_matched_by_text_and_count() -> None:
    finding = Failure(kind="lint", code="F401", message="`os` imported but unused", line=1)
    moved = Failure(kind="lint", code="F401", message="`os` imported but unused", line=3)
    prompt = "import os\n"
    assert without_task_findings("import os\n", [finding], prompt, [finding]) == ()
    # Same text two lines down: still the prompt's line.
    assert without_task_findings("\n\nimport os\n", [moved], prompt, [finding]) == ()
    # Twice in the answer, once in the prompt: one stays.
    twice = without_task_findings("import os\nimport os\n", [finding] * 2, prompt, [finding])
    assert twice == (finding,)
    # Indented differently: a different line.
    assert without_task_findings("if 1:\n  import os\n", [finding], prompt, [finding]) == (finding,)


def test_a_ruff_directive_in_a_comment_hides_nothing(checker: StaticChecker) -> None:
    for directive in ("# ruff: noqa", "# flake8: noqa", "# ruff: disable[F401]"):
        code = f"{directive}\nimport os\n"
        assert [f.code for f in checker.check(code).findings] == ["F401"], directive
    for directive in ("# mypy: ignore-errors", "# type: ignore"):
        code = f"{directive}\ndef f(x: int) -> str:\n    return x\n"
        assert [f.code for f in checker.check(code).findings] == ["return-value"], directive
