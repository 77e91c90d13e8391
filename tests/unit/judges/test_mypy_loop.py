"""mypy's update loop (``judges/static/_mypy_loop.py``) answers each text as a fresh
module: what an earlier text did (a blocking error, an import) does not change the
findings of a later one. The loop's findings equal batch mypy's on a corpus
(``test_daemon_batch.py``); its life, limits and restarts are ``test_static_life.py``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.judges import StaticChecker, StaticSettings

WRONG = "def f(x: int) -> str:\n    return x\n"


@pytest.fixture
def checker(tmp_path: Path) -> Iterator[StaticChecker]:
    made = StaticChecker(StaticSettings(lint=False, cache_dir=tmp_path / "cache"))
    try:
        yield made
    finally:
        made.close()


def _codes(checker: StaticChecker, code: str) -> list[str]:
    report = checker.check(code)
    assert report.error is None
    return [finding.code for finding in report.findings]


def test_a_blocking_error_is_the_texts_finding_and_the_next_text_is_checked_afresh(
    checker: StaticChecker,
) -> None:
    # Python's parser accepts it; mypy stops at it (a blocking error of its own).
    blocked = checker.check("nonlocal x\n")
    assert [(f.code, f.message) for f in blocked.findings] == [
        ("misc", "nonlocal declaration not allowed at module level")
    ]
    assert _codes(checker, WRONG) == ["return-value"]
    assert _codes(checker, WRONG.replace("f(", "g(")) == ["return-value"]


def test_a_package_imported_by_the_answer_is_checked_not_crashed_on(
    checker: StaticChecker,
) -> None:
    # dmypy's check crashed on this import (KeyError: 'email'): an unreadable finding.
    assert _codes(checker, "import email\n\n\n" + WRONG) == ["return-value"]
    assert _codes(checker, "import email.message\n\n\n" + WRONG) == ["return-value"]


def test_a_text_seen_after_others_has_the_findings_it_has_alone(tmp_path: Path) -> None:
    texts = [
        "import math\n\n\ndef r(x: float) -> int:\n    return math.floor(x)\n",
        "def r(x: float) -> int:\n    return x\n",  # same function name, new module
        "import math\n\n\ndef r(x: float) -> int:\n    return math.sqrt(x)\n",
        WRONG,
        # Packages the first build did not load, then their parents without them: batch
        # mypy reports both attributes as missing, whatever was imported before.
        "import xml.etree.ElementTree\nimport email.mime.text\n",
        "import xml\nimport email\n\n\ndef b(s: str) -> object:\n"
        "    return xml.etree.ElementTree.fromstring(s), email.mime\n",
    ]
    shared = StaticChecker(StaticSettings(lint=False, cache_dir=tmp_path / "cache"))
    try:
        in_turn = [_codes(shared, text) for text in texts]
    finally:
        shared.close()
    alone = []
    for text in texts:
        fresh = StaticChecker(StaticSettings(lint=False, cache_dir=tmp_path / "cache"))
        try:
            alone.append(_codes(fresh, text))
        finally:
            fresh.close()
    missing = ["attr-defined", "attr-defined"]
    expected = [[], ["return-value"], ["return-value"], ["return-value"], [], missing]
    assert in_turn == alone == expected
