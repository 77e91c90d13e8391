"""Reading a worker's answer: what the pipe holds is taken at once."""

from __future__ import annotations

import collections
import os
import select

import pytest

from critiquebench.judges import PythonJudge
from tests.helpers import GOOD_ADD, make_case


def test_an_attempts_answer_costs_one_wait_and_one_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each wait and read gives up the GIL; at two workers the other thread may then
    # hold it for milliseconds, so the two frames of an answer are read together.
    judge = PythonJudge(static=None)
    try:
        assert judge(make_case(), GOOD_ADD).passed  # the worker is up
        calls: collections.Counter[str] = collections.Counter()
        real_read, real_select = os.read, select.select

        def counted_read(fd: int, size: int) -> bytes:
            calls["read"] += 1
            return real_read(fd, size)

        def counted_select(*args: object) -> object:
            calls["select"] += 1
            return real_select(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "read", counted_read)
        monkeypatch.setattr(select, "select", counted_select)
        result = judge(make_case(), GOOD_ADD)
        monkeypatch.undo()
        assert result.passed and result.checks_passed == 3
        # Two frames (report, output) written by the worker in one flush.
        assert calls["read"] <= 2 and calls["select"] <= 2, calls
        wrong = judge(make_case(), "def add(a, b):\n    return a - b\n")
        assert wrong.checks_passed == 1  # the frames that follow still line up
    finally:
        judge.close()
