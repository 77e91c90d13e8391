"""validate-suite reports a reference solution with static findings as an error."""

from __future__ import annotations

import json
from pathlib import Path

from critiquebench.suites import validate_suite

LINE = {
    "id": "x/add",
    "prompt": "Write add(a: int, b: int) -> int.",
    "entry_point": "add",
    "feedback_tests": ["assert add(1, 2) == 3"],
    "heldout_tests": ["assert add(2, 2) == 4"],
    "reference_solution": "def add(a: int, b: int) -> int:\n    return a + b\n",
}


def _suite(tmp_path: Path, *references: str) -> Path:
    path = tmp_path / "mine.jsonl"
    lines = [
        {**LINE, "id": f"x/add{n}", "reference_solution": ref} for n, ref in enumerate(references)
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_a_reference_that_passes_its_tests_but_has_findings_is_an_error(tmp_path: Path) -> None:
    clean = LINE["reference_solution"]
    # Passes both tests; an unused import (lint) and a str returned for an int (types).
    noisy = "import os\n\n\ndef add(a: int, b: int) -> int:\n    return a + b if a else str(b)\n"
    found = validate_suite(str(_suite(tmp_path, clean, noisy)))
    assert found.references_checked == 2
    [problem] = found.errors
    assert (problem.kind, problem.case_id, problem.where) == (
        "reference",
        "x/add1",
        f"{tmp_path / 'mine.jsonl'}:2",
    )
    assert "reference_solution has 2 static finding(s)" in problem.message
    assert "[lint F401] candidate.py line 1" in problem.message
    assert "[types return-value] candidate.py line 5" in problem.message
    assert "1 of 2 reference solution(s) pass their own checks with no static finding" in (
        found.summary()
    )
    assert not found.ok()


def test_a_reference_hiding_code_from_the_checkers_is_an_error(tmp_path: Path) -> None:
    hidden = (
        "from typing import no_type_check\n\n\n@no_type_check\n"
        "def add(a: int, b: int) -> int:\n    return a + b\n"
    )
    [problem] = validate_suite(str(_suite(tmp_path, hidden))).errors
    assert "[types CB101]" in problem.message
