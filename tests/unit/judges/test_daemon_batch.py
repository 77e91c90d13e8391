"""mypy's update loop (the build state of mypy's daemon, ``judges/static/_mypy_loop.py``)
gives the same errors as batch mypy with the same flags.

Before the flags were fixed, 52 of 452 HumanEval texts (canonical solutions and
mutants) disagreed: the daemon's incremental path dropped ``used-before-def`` and
``has-type``, and forces local partial types that batch mypy did not use.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from critiquebench.judges import MYPY_FLAGS, StaticChecker, StaticSettings
from critiquebench.judges.static._checker import blank_comments
from critiquebench.suites import load_suite

_ERROR = re.compile(r"^(?:.*/)?(?P<file>\w+)\.py:(?P<line>\d+): error: (?P<message>.*)$")

# Uses before definitions, in functions, methods and at module level.
HANDWRITTEN = [
    "def f(x: int) -> int:\n    y = z + 1\n    z = undefined_name\n    return y\n",
    "class A:\n    def m(self) -> int:\n        return self.v + 1\n\n"
    "    def n(self) -> None:\n        self.v = foo(self.v)\n",
    "def k(n: int) -> int:\n    total = total + n\n    return total\n",
    "def g(s: str) -> int:\n    for c in s:\n        count += 1\n    count = 0\n    return count\n",
    "w = h()\n\n\ndef h() -> int:\n    return w\n",
    # Imports of modules the loop's first build did not load (a module, a package's
    # submodule), each checked after the loop has dropped the text before it.
    "import math\n\n\ndef r(x: float) -> int:\n    return math.sqrt(x)\n",
    "import heapq\nfrom fractions import Fraction\n\n\ndef s(x: list[int]) -> str:\n"
    "    return heapq.nsmallest(1, x) + [Fraction(1, 2)]\n",
    "import email.message\n\n\ndef t() -> int:\n    return email.message.Message()\n",
]


def _mutants(code: str, entry_point: str) -> list[str]:
    """The first two statements of the entry point swapped (uses before definitions),
    its first statement deleted (undefined names), and its first returned value put in
    a list (wrong types)."""
    lines = code.splitlines(keepends=True)
    functions = [
        node
        for node in ast.parse(code).body
        if isinstance(node, ast.FunctionDef) and node.name == entry_point
    ]
    body = [
        statement
        for statement in functions[-1].body
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
    ]
    mutants = []
    if len(body) >= 2:
        first, second = body[0], body[1]
        assert first.end_lineno is not None and second.end_lineno is not None
        if first.end_lineno < second.lineno:
            mutants.append("".join(
                lines[: first.lineno - 1] + lines[second.lineno - 1 : second.end_lineno]
                + lines[first.end_lineno : second.lineno - 1]
                + lines[first.lineno - 1 : first.end_lineno] + lines[second.end_lineno :]
            ))  # fmt: skip
            end = first.end_lineno
            mutants.append("".join(lines[: first.lineno - 1] + lines[end:]))
    returns = [
        node
        for node in ast.walk(functions[-1])
        if isinstance(node, ast.Return)
        and node.value is not None
        and node.lineno == node.end_lineno
    ]
    if returns:
        value = returns[0].value
        assert value is not None and value.end_col_offset is not None
        line = lines[value.lineno - 1]
        wrapped = (
            line[: value.col_offset] + "[" + line[value.col_offset : value.end_col_offset] + "]"
            + line[value.end_col_offset :]
        )  # fmt: skip
        mutants.append("".join([*lines[: value.lineno - 1], wrapped, *lines[value.lineno :]]))
    return mutants


def _corpus() -> list[str]:
    texts = list(HANDWRITTEN)
    for number, case in enumerate(load_suite("humaneval")):
        texts.append(case.reference_solution)
        if number % 2 == 0:  # half the cases' mutants keep the run short
            texts.extend(_mutants(case.reference_solution, case.entry_point))
    return [blank_comments(text) for text in texts]


def _batch(texts: list[str], folder: Path) -> list[list[tuple[int, str]]]:
    (folder / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    files = []
    for number, text in enumerate(texts):
        path = folder / f"b{number}.py"
        path.write_text(text, encoding="utf-8")
        files.append(str(path))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(folder / "mypy.ini"),
         "--cache-dir", str(folder / "cache"), *MYPY_FLAGS, *files],
        capture_output=True, text=True, cwd=folder, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    found: list[list[tuple[int, str]]] = [[] for _ in texts]
    for line in done.stdout.splitlines():
        match = _ERROR.match(line)
        if match is not None:
            message = match["message"].replace(match["file"], "candidate")
            found[int(match["file"][1:])].append((int(match["line"]), message))
    return found


def test_the_daemon_reports_what_batch_mypy_reports(tmp_path: Path) -> None:
    texts = _corpus()
    assert len(texts) > 250
    checker = StaticChecker(StaticSettings(lint=False, cache_dir=tmp_path / "daemon"))
    try:
        daemon = [
            sorted((f.line, f"{f.message}  [{f.code}]") for f in checker._mypy(text))
            for text in texts
        ]
    finally:
        checker.close()
    batch = [sorted(errors) for errors in _batch(texts, tmp_path)]
    differing = [
        (number, texts[number], daemon[number], batch[number])
        for number in range(len(texts))
        if daemon[number] != batch[number]
    ]
    assert differing == []
    # The corpus exercises the checks: some texts do have errors.
    assert sum(1 for errors in batch if errors) >= 10
