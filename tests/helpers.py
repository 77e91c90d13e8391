"""Small builders shared by tests."""

from __future__ import annotations

from critiquebench.suites import Case, Check


def make_case(
    feedback: tuple[str, ...] = ("assert add(1, 2) == 3",),
    heldout: tuple[str, ...] = ("assert add(-1, 1) == 0", "assert add(0, 0) == 0"),
    *,
    case_id: str = "t/add",
    entry_point: str = "add",
) -> Case:
    """A case about an ``add`` function, with feedback and held-out checks."""
    checks = [Check(source=s, origin="feedback", line=n) for n, s in enumerate(feedback, 1)]
    checks += [Check(source=s, origin="heldout", line=n) for n, s in enumerate(heldout, 1)]
    return Case(
        id=case_id,
        prompt="Write a Python function `add(a, b)` that returns a + b.",
        entry_point=entry_point,
        checks=tuple(checks),
    )


def fenced(code: str) -> str:
    """A model-style reply holding ``code`` in a python block."""
    return f"Here you go:\n```python\n{code}\n```\nThis adds numbers."


GOOD_ADD = "def add(a, b):\n    return a + b"
WRONG_ADD = "def add(a, b):\n    return a - b"
