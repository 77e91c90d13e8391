"""The JSON a unit's rows carry for its failures."""

from __future__ import annotations

import dataclasses
import json

import pytest

from critiquebench.judges import Failure
from critiquebench.pipeline import _units


def test_failures_become_the_json_of_their_fields_without_a_deep_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failures = (
        Failure(kind="assertion", message="boom", line=3, source="assert f(1) == 2",
                expected="2", actual="1", origin="feedback", inside=True, code="c", file="f"),
        Failure(kind="lint", message="unused import", line=1),
    )  # fmt: skip
    expected = json.dumps([dataclasses.asdict(failure) for failure in failures])

    def no_deep_copy(*_: object, **__: object) -> None:
        raise AssertionError("asdict deep-copies every value: a unit's rows never need it")

    monkeypatch.setattr(dataclasses, "asdict", no_deep_copy)
    monkeypatch.setattr(_units, "asdict", no_deep_copy, raising=False)  # imported by name
    written = _units._failure_json(failures)
    assert written == expected  # the same keys, in the same order, with the same values
    assert json.loads(written)[1] == {
        "kind": "lint", "message": "unused import", "line": 1, "source": "",
        "expected": None, "actual": None, "origin": "", "inside": False, "code": "", "file": "",
    }  # fmt: skip
