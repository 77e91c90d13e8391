"""Splitting a check into what runs in the sandbox and what the trusted parent decides.

For the common shapes (``assert f(args) == expected``, ``assert f(args)``,
``assert not f(args)``, ``assert abs(f(args) - x) < tol``, ``math.isclose(...)``,
any comparison against a literal) the sandbox receives only the *calls* of the
function under test, with their arguments as plain data. It returns each call's
value as plain data, and the parent evaluates the rest of the assertion: the
expected value, the operator and any arithmetic never enter the sandbox, so no
``__eq__`` trick, patched builtin or read frame can turn a wrong answer into a pass.

Checks of other shapes (loops, helpers defined by the test setup, several
statements) run inside the sandbox as before and are marked ``inside``.
"""

from __future__ import annotations

import ast
import builtins
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from critiquebench._ast_turns import compile_expression, parse
from critiquebench.judges._plain import describe_value, encode_argument
from critiquebench.suites import Check

CheckMode = Literal["value", "inside"]

# What a parent-side expression may name: pure functions over plain data.
_SAFE_NAMES: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in (
        "abs", "all", "any", "bool", "bytes", "complex", "dict", "divmod", "enumerate", "float",
        "frozenset", "int", "isinstance", "len", "list", "max", "min", "pow", "range", "repr",
        "reversed", "round", "set", "sorted", "str", "sum", "tuple", "type", "zip",
        "True", "False", "None",
    )
}  # fmt: skip
_SAFE_NAMES["math"] = math
_WRAPPERS = frozenset({"list", "tuple", "set", "sorted"})
_NODES = (
    ast.Expression, ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.Call, ast.keyword, ast.Subscript, ast.Slice, ast.List, ast.Tuple,
    ast.Set, ast.Dict, ast.IfExp, ast.Attribute, ast.operator, ast.unaryop, ast.boolop,
    ast.cmpop,
)  # fmt: skip
_SYMBOLS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip


@dataclass(frozen=True)
class CandidateCall:
    """One call of the function under test: plain-data arguments, optional wrapper."""

    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    wrap: str | None = None

    def request(self) -> dict[str, Any]:
        """The call as the sandbox receives it."""
        return {
            "args": [encode_argument(arg) for arg in self.args],
            "kwargs": {name: encode_argument(value) for name, value in self.kwargs},
            "wrap": self.wrap,
        }


@dataclass(frozen=True)
class PlannedCheck:
    """A check of a case, ready to send: its calls (value mode) or its source (inside)."""

    check: Check
    mode: CheckMode
    calls: tuple[CandidateCall, ...] = ()
    test: ast.expr | None = field(default=None, compare=False)
    message: str = ""

    def request(self) -> dict[str, Any]:
        """What the sandbox receives for this check: never an expected value."""
        if self.mode == "value":
            return {"mode": "value", "calls": [call.request() for call in self.calls]}
        return {"mode": "inside", "source": self.check.source}

    def outcome(self, values: list[Any]) -> CheckOutcome:
        """Decide the check in the parent from the calls' plain values."""
        assert self.test is not None
        names = {**_SAFE_NAMES, **{_placeholder(i): v for i, v in enumerate(values)}}
        try:
            if _evaluate(self.test, names):
                return CheckOutcome(passed=True)
            expected, actual = _explain(self.test, names)
        except Exception as exc:  # the assertion itself raised on the returned value
            return CheckOutcome(False, kind="error", message=f"{type(exc).__name__}: {exc}")
        return CheckOutcome(
            False,
            kind="assertion",
            message=self.message or "assertion failed",
            expected=expected,
            actual=actual,
        )


@dataclass(frozen=True)
class CheckOutcome:
    """The parent's decision on one value-mode check."""

    passed: bool
    kind: str = "assertion"
    message: str = ""
    expected: str | None = None
    actual: str | None = None


def plan_check(check: Check, entry_point: str) -> PlannedCheck:
    """Split ``check`` into sandbox calls and a parent-side assertion where possible."""
    try:
        module = parse(check.source)
    except (SyntaxError, ValueError):
        return PlannedCheck(check, "inside")
    if len(module.body) != 1 or not isinstance(module.body[0], ast.Assert):
        return PlannedCheck(check, "inside")
    statement = module.body[0]
    calls: list[CandidateCall] = []
    test = _Extractor({entry_point, "candidate"}, calls).visit(statement.test)
    if not calls or not isinstance(test, ast.expr) or not _parent_safe(test):
        return PlannedCheck(check, "inside")
    message = statement.msg.value if isinstance(statement.msg, ast.Constant) else ""
    return PlannedCheck(check, "value", tuple(calls), ast.fix_missing_locations(test), str(message))


def plan_checks(checks: tuple[Check, ...], entry_point: str) -> list[PlannedCheck]:
    """Plan every check of a case, in order."""
    return [plan_check(check, entry_point) for check in checks]


def _placeholder(index: int) -> str:
    return f"__cb_value_{index}__"


class _Extractor(ast.NodeTransformer):
    """Replaces each call of the function under test by a placeholder name."""

    def __init__(self, names: set[str], calls: list[CandidateCall]) -> None:
        self.names = names
        self.calls = calls

    def visit_Call(self, node: ast.Call) -> ast.AST:
        wrap = _wrapper_of(node, self.names)
        inner = node.args[0] if wrap else node
        if isinstance(inner, ast.Call) and _calls_target(inner, self.names):
            call = _closed_call(inner)
            if call is None:
                return self._refuse(node)
            self.calls.append(CandidateCall(call[0], call[1], wrap))
            return ast.copy_location(ast.Name(_placeholder(len(self.calls) - 1), ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        # The function itself used other than as a direct call (e.g. passed along).
        return self._refuse(node) if node.id in self.names else node

    def _refuse(self, node: ast.AST) -> ast.AST:
        # A name no parent-side evaluation knows: the plan falls back to "inside".
        return ast.copy_location(ast.Name("__cb_refused__", ast.Load()), node)


def _calls_target(node: ast.Call, names: set[str]) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id in names


def _wrapper_of(node: ast.Call, names: set[str]) -> str | None:
    if (
        isinstance(node.func, ast.Name)
        and node.func.id in _WRAPPERS
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Call)
        and _calls_target(node.args[0], names)
    ):
        return node.func.id
    return None


def _closed_call(node: ast.Call) -> tuple[tuple[Any, ...], tuple[tuple[str, Any], ...]] | None:
    """The call's arguments evaluated in the parent, or None when they are not plain data."""
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return None
    if any(keyword.arg is None for keyword in node.keywords):
        return None
    try:
        args = tuple(_constant(arg) for arg in node.args)
        kwargs = tuple((str(k.arg), _constant(k.value)) for k in node.keywords)
        for value in (*args, *(v for _, v in kwargs)):
            encode_argument(value)
    except (ValueError, TypeError):
        return None
    return args, kwargs


def _constant(node: ast.expr) -> Any:
    """A test-side argument: a literal, or a safe expression over literals."""
    if not _parent_safe(node):
        raise ValueError("not a closed expression")
    return _evaluate(node, _SAFE_NAMES)


def _parent_safe(node: ast.AST) -> bool:
    for child in ast.walk(node):
        if not isinstance(child, _NODES):
            return False
        if isinstance(child, ast.Name) and not (
            child.id in _SAFE_NAMES or child.id.startswith("__cb_value_")
        ):
            return False
        if isinstance(child, ast.Attribute) and not (
            isinstance(child.value, ast.Name) and child.value.id == "math"
        ):
            return False
    return True


def _evaluate(node: ast.expr, names: dict[str, Any]) -> Any:
    code = compile_expression(ast.fix_missing_locations(ast.Expression(body=node)), "<check>")
    return eval(code, {"__builtins__": {}}, names)


def _explain(test: ast.expr, names: dict[str, Any]) -> tuple[str, str]:
    """(expected, actual) texts for a failed assertion, from the parent's own values."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = test.left, test.comparators[0]
        left_is_actual = any(
            isinstance(n, ast.Name) and n.id.startswith("__cb_value_") for n in ast.walk(left)
        )
        actual_node, other = (left, right) if left_is_actual else (right, left)
        actual = describe_value(_evaluate(actual_node, names))
        expected = describe_value(_evaluate(other, names))
        symbol = _SYMBOLS.get(type(test.ops[0]), "?")
        return (expected if symbol == "==" else f"{symbol} {expected}"), actual
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return "a false value", describe_value(_evaluate(test.operand, names))
    return "a true value", describe_value(_evaluate(test, names))
