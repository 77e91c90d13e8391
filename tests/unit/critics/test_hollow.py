from __future__ import annotations

import textwrap

import pytest

from critiquebench.critics import HollowFinding, find_hollow


def hollow(code: str) -> list[HollowFinding]:
    return find_hollow(textwrap.dedent(code))


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("def f(x):\n    pass\n", "body is only pass"),
        ('def f(x):\n    """Add one."""\n    ...\n', "body is only ..."),
        ("def f(x):\n    return None\n", "returns None only"),
        ("def f(x):\n    return\n", "bare return"),
        ("def f(x):\n    raise NotImplementedError\n", "raises NotImplementedError"),
        ("def f(x):\n    raise NotImplementedError('later')\n", "raises NotImplementedError"),
        ("def f(x):\n    # TODO: write this\n    return 0\n", "placeholder comment"),
        ("def f(x):\n    # your code here\n    return []\n", "placeholder comment"),
        ("def f(x):\n    # FIXME\n    pass\n", "with a placeholder comment"),
        ("def f(x):\n    'Your code here.'\n", "placeholder string"),
        ('def f(x):\n    """Doc."""\n    "implement here"\n', "placeholder string"),
        ('def f(x):\n    """Add one to x."""\n', "only a docstring"),
        ("async def f(x):\n    pass\n", "body is only pass"),
    ],
)
def test_hollow_function_is_flagged(code: str, reason: str) -> None:
    findings = hollow(code)
    assert len(findings) == 1
    assert findings[0].function == "f"
    assert findings[0].line == 1
    assert reason in findings[0].reason


def test_methods_and_nested_functions_are_named_by_qualified_name() -> None:
    code = """
    class Stack:
        def push(self, item):
            pass

    def outer():
        def inner():
            return None
        return inner
    """
    findings = hollow(code)
    assert [(f.function, f.line) for f in findings] == [("Stack.push", 3), ("outer.inner", 7)]
    assert str(findings[0]) == "line 3: Stack.push: body is only pass"


def test_module_with_only_imports_is_hollow() -> None:
    findings = hollow('"""A module."""\nimport os\nfrom sys import argv\n')
    assert findings == [HollowFinding("<module>", 2, "imports and no logic")]


def test_plain_init_in_an_ordinary_class_is_flagged() -> None:
    findings = hollow("class A:\n    def __init__(self):\n        pass\n")
    assert [f.function for f in findings] == ["A.__init__"]


@pytest.mark.parametrize(
    "code",
    [
        "def f(x): return x + 1\n",
        "def f(x):\n    return x * 2  # TODO: handle overflow\n",
        "def zero():\n    return 0\n",
        """
        from abc import ABC, abstractmethod
        class Base(ABC):
            @abstractmethod
            def run(self): ...
        """,
        """
        import abc
        class Base(abc.ABC):
            @property
            @abc.abstractmethod
            def name(self):
                raise NotImplementedError
        """,
        """
        from typing import Protocol, TypeVar
        T = TypeVar("T")
        class Judge(Protocol[T]):
            def __call__(self, item: T) -> bool: ...
        """,
        """
        import typing
        class Sized(typing.Protocol):
            def size(self) -> int:
                pass
        """,
        """
        class BudgetExceeded(Exception):
            def __init__(self):
                pass
        """,
        """
        class ParseError(ValueError):
            def __init__(self, msg):
                pass
        """,
        """
        from typing import overload
        @overload
        def f(x: int) -> int: ...
        @overload
        def f(x: str) -> str: ...
        def f(x):
            return x
        """,
        "import os\nprint(os.getcwd())\n",
        "from x import y\n__all__ = ['y']\n",
        "",
        '"""Only a docstring."""\n',
        "def broken(:\n    pass\n",
        "x = 1\0\n",
    ],
)
def test_not_hollow(code: str) -> None:
    assert hollow(code) == []
