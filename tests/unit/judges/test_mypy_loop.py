"""mypy's update loop (``judges/static/_mypy_loop.py``) answers each text as a fresh
module: what an earlier text did (a blocking error, an import) does not change the
findings of a later one, nor does what an earlier loop left in the cache. The loop's
findings equal batch mypy's on a corpus (``test_daemon_batch.py``); its life, limits and
restarts are ``test_static_life.py``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.judges import StaticChecker, StaticSettings

WRONG = "def f(x: int) -> str:\n    return x\n"


@pytest.fixture
def checker() -> Iterator[StaticChecker]:
    made = StaticChecker(StaticSettings(lint=False))
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


def test_the_build_is_kept_in_the_cache_and_a_broken_cache_changes_no_finding(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    first = StaticChecker(StaticSettings(lint=False, cache_dir=cache))
    try:
        assert _codes(first, WRONG) == ["return-value"]
    finally:
        first.close()
    kept = [path for path in cache.rglob("*") if path.is_file()]
    assert kept  # the next loop loads its build from there
    for path in kept:
        path.write_bytes(b"not mypy's cache")
    again = StaticChecker(StaticSettings(lint=False, cache_dir=cache))
    try:
        assert _codes(again, WRONG) == ["return-value"]
        assert _codes(again, "import email.message\n\n\n" + WRONG) == ["return-value"]
    finally:
        again.close()


def test_a_text_seen_after_others_has_the_findings_it_has_alone() -> None:
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
    shared = StaticChecker(StaticSettings(lint=False))
    try:
        in_turn = [_codes(shared, text) for text in texts]
    finally:
        shared.close()
    alone = []
    for text in texts:
        fresh = StaticChecker(StaticSettings(lint=False))
        try:
            alone.append(_codes(fresh, text))
        finally:
            fresh.close()
    missing = ["attr-defined", "attr-defined"]
    expected = [[], ["return-value"], ["return-value"], ["return-value"], [], missing]
    assert in_turn == alone == expected
