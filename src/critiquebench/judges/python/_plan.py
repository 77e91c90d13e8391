"""Splitting a check into what runs in the sandbox and what the trusted parent decides.

For the common shapes (``assert f(args) == expected``, ``assert f(args)``,
``assert not f(args)``, ``assert abs(f(args) - x) < tol``, ``math.isclose(...)``,
any comparison against a literal) the sandbox receives only the *calls* of the
function under test, with their arguments as plain data. It returns each call's
value as plain data, and the parent evaluates the rest of the assertion: the
expected value, the operator and any arithmetic never enter the sandbox, so no
``__eq__`` trick, patched builtin or read frame can turn a wrong answer into a pass.

The checks of a case are planned in order, and the planner keeps what the test
side has set up so far: an import of a stdlib module it trusts (``math``, ``random``,
``string``, ``copy``) or an assignment of a closed expression (``lst = list(range(9))``)
is evaluated in the parent, and later checks may name it. Such a statement is a check
that passes in the parent; the sandbox is never asked about it. A ``for`` loop over a
closed iterable whose body only assigns closed expressions and asserts is unrolled:
each iteration's calls go to the sandbox and each of its assertions is decided in the
parent (``for x in range(2, 8): assert candidate(x, x + 1) == str(x)``), so loops, too,
are decided outside the sandbox. An assertion with no call of the function under test
(``assert True``) is decided in the parent alone.

Checks of other shapes (helpers defined by the prompt or the test setup, several
statements) still run inside the sandbox, after the set-up statements the parent took
(so their names exist there too), and are marked ``inside``; ``validate-suite`` counts them.
"""

from __future__ import annotations

import ast
import builtins
import copy
import itertools
import math
import random
import string
from dataclasses import dataclass, field
from functools import cached_property
from types import CodeType
from typing import Any, Literal

from critiquebench.judges._case import Check
from critiquebench.judges._plain import describe_value, encode_argument
from critiquebench.judges.sandbox import CandidateCall, ValueCheck
from critiquebench.runtime.ast_turns import compile_expression, parse

CheckMode = Literal["value", "inside"]

# What a parent-side expression may name: pure functions over plain data.
_SAFE_NAMES: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in (
        "abs", "all", "any", "bool", "bytes", "chr", "complex", "dict", "divmod", "enumerate",
        "float", "frozenset", "int", "isinstance", "len", "list", "max", "min", "ord", "pow",
        "range", "repr", "reversed", "round", "set", "sorted", "str", "sum", "tuple", "type", "zip",
        "True", "False", "None",
    )
}  # fmt: skip
_SAFE_NAMES["math"] = math
# Stdlib modules whose public functions the parent may call on test-side plain data
# (never on a candidate's value: those reach only the comparison).
_MODULES: dict[str, Any] = {"math": math, "random": random, "string": string, "copy": copy}
# A loop is unrolled only up to this many iterations (and calls); a longer one runs inside.
_MAX_UNROLL = 1000
# The statements one check may make the parent run while planning (nested loops).
_MAX_STATEMENTS = 100_000
# Methods of a string literal a parent-side expression may call (``"".join(parts)``);
# never ``format``, whose fields can reach attributes.
_STR_METHODS = frozenset(
    {"join", "lower", "upper", "strip", "split", "replace", "startswith", "endswith"}
)
_WRAPPERS = frozenset({"list", "tuple", "set", "sorted"})
_NODES = (
    ast.Expression, ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.BoolOp,
    ast.Compare, ast.Call, ast.keyword, ast.Subscript, ast.Slice, ast.List, ast.Tuple,
    ast.Set, ast.Dict, ast.IfExp, ast.Attribute, ast.operator, ast.unaryop, ast.boolop,
    ast.cmpop, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.comprehension,
    ast.Store,
)  # fmt: skip
_SYMBOLS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip


@dataclass(frozen=True)
class PlannedCheck:
    """A check of a case, ready to send: its calls (value mode) or its source (inside)."""

    check: Check
    mode: CheckMode
    calls: tuple[CandidateCall, ...] = ()
    test: ast.expr | None = field(default=None, compare=False)
    message: str = ""
    # Further assertions decided in the parent, in order (an unrolled loop's), each with
    # the test-side names it reads; when set, ``test`` is not used.
    steps: tuple[Step, ...] = field(default=(), compare=False)
    # Test-side statements the parent took that this inside check runs first, so that
    # the names they define exist in the sandbox too.
    prelude: str = ""

    def request(self) -> dict[str, Any]:
        """What the sandbox receives for this check: never an expected value."""
        if self.mode == "value":
            return ValueCheck(self.calls).request()
        source = f"{self.prelude}\n{self.check.source}" if self.prelude else self.check.source
        return {"mode": "inside", "source": source}

    def outcome(self, values: list[Any]) -> CheckOutcome:
        """Decide the check in the parent from the calls' plain values."""
        steps = self.steps
        if not steps and self.test is not None:
            steps = (Step(self.test, (), self.message),)
        if not steps and self.calls:
            # Calls with nothing to decide on them would be a silent pass: never.
            return CheckOutcome(False, kind="error", message="no assertion was planned")
        placeholders = {_placeholder(i): v for i, v in enumerate(values)}
        for step in steps:
            names = {**_SAFE_NAMES, **dict(step.names), **placeholders}
            try:
                if _run(step.code, names):
                    continue
                expected, actual = _explain(step, names)
            except Exception as exc:  # the assertion itself raised on the returned value
                return CheckOutcome(False, kind="error", message=f"{type(exc).__name__}: {exc}")
            return CheckOutcome(
                False,
                kind="assertion",
                message=step.message or "assertion failed",
                expected=expected,
                actual=actual,
            )
        return CheckOutcome(passed=True)


@dataclass(frozen=True)
class Step:
    """One assertion decided in the parent: its test (calls replaced by placeholders),
    the test-side names it reads (trusted plain data or trusted modules) and its message."""

    test: ast.expr
    names: tuple[tuple[str, Any], ...]
    message: str

    @cached_property
    def code(self) -> CodeType:
        """The test compiled once: every attempt of the case evaluates it again.

        Measured gain: deciding every HumanEval check once on the reference's values
        took 19-22 ms of CPU instead of 41-45 (with the helpers' ``_codes``), and no
        attempt waits on the lock compiles take turns on (``runtime/ast_turns.py``): at
        concurrency 16 on 0.5 s model calls the unit threads had waited 9 of their 336
        thread-seconds there (py-spy, load ~12).
        """
        return _compiled(self.test)

    @cached_property
    def explanation(self) -> tuple[str, CodeType, CodeType | None, str]:
        """How a failure of the test is shown, compiled once: ``("compare", actual,
        expected, operator)`` for one comparison (the side holding a returned value is
        the actual one), ``("not", operand, None, "")`` for a negation, else ``("truth",
        test, None, "")``.

        Measured gain: made per failure, the two sides were compiled at every failed
        check (2,738 compiles, 0.33 of the full judge's 11.5 s under cProfile on 328
        fresh HumanEval answers, half of them broken); compiled once, the judge's
        reading of an attempt took 0.32 instead of 0.62 ms of CPU (the same 328
        attempts, best of 7), with the same failures on all of them (1,219).
        """
        test = self.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = test.left, test.comparators[0]
            left_is_actual = any(
                isinstance(n, ast.Name) and n.id.startswith("__cb_value_") for n in ast.walk(left)
            )
            actual_node, other = (left, right) if left_is_actual else (right, left)
            symbol = _SYMBOLS.get(type(test.ops[0]), "?")
            return "compare", _compiled(actual_node), _compiled(other), symbol
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return "not", _compiled(test.operand), None, ""
        return "truth", self.code, None, ""


@dataclass(frozen=True)
class CheckOutcome:
    """The parent's decision on one value-mode check."""

    passed: bool
    kind: str = "assertion"
    message: str = ""
    expected: str | None = None
    actual: str | None = None


def plan_check(check: Check, entry_point: str, trusted: str = "") -> PlannedCheck:
    """Split ``check`` into sandbox calls and a parent-side assertion where possible."""
    return _Planner(entry_point, trusted).plan(check)


def plan_checks(
    checks: tuple[Check, ...], entry_point: str, trusted: str = ""
) -> list[PlannedCheck]:
    """Plan every check of a case, in order; a check may name what earlier ones set up.

    ``trusted`` is the suite's own code (its test setup, and a HumanEval-style prompt):
    the helpers it defines with a body of assignments and a ``return`` are evaluated
    in the parent (e.g. HumanEval/32's ``poly`` on the answer's returned root), never
    the answer's redefinition of them.
    """
    planner = _Planner(entry_point, trusted)
    return [planner.plan(check) for check in checks]


def trusted_code(setup: str, prompt: str, prompt_is_code: bool) -> str:
    """The suite's own code a case's checks may call: its setup, and a code prompt."""
    return f"{prompt}\n{setup}" if prompt_is_code else setup


@dataclass(frozen=True)
class _Pending:
    """A test-side name bound to a candidate call's value, known only after the call."""

    index: int


@dataclass(frozen=True)
class _Helper:
    """A function of the suite's own code, evaluated in the parent on plain data."""

    name: str
    params: tuple[str, ...]
    body: tuple[tuple[ast.expr | None, ast.expr], ...]  # (assignment target or None, value)
    names: tuple[tuple[str, Any], ...]

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} argument(s)")
        local = {**_SAFE_NAMES, **dict(self.names), **dict(zip(self.params, args, strict=True))}
        for (target, _), code in zip(self.body, self._codes, strict=True):
            result = _run(code, local)
            if target is None:
                return result
            _bind(target, result, local)
        return None

    @cached_property
    def _codes(self) -> tuple[CodeType, ...]:
        """The body's values compiled once (from copies: the suite's tree stays as
        parsed). A helper is called per loop turn while planning and per step of every
        attempt: HumanEval/32's ``poly`` a hundred times an attempt, each call copying
        and compiling its body again before."""
        return tuple(_compiled(copy.deepcopy(value)) for _, value in self.body)


def _helpers(source: str, names: dict[str, Any], targets: set[str]) -> None:
    """Bind into ``names`` the helpers of trusted ``source`` the parent can evaluate."""
    try:
        module = parse(source)
    except (SyntaxError, ValueError):
        return
    for node in module.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _MODULES:
                    names[alias.asname or alias.name] = _MODULES[alias.name]
        elif isinstance(node, ast.FunctionDef) and node.name not in targets:
            helper = _helper(node, names)
            if helper is not None:
                names[node.name] = helper


def _helper(node: ast.FunctionDef, names: dict[str, Any]) -> _Helper | None:
    arguments = node.args
    if (
        node.decorator_list
        or arguments.vararg
        or arguments.kwarg
        or arguments.kwonlyargs
        or arguments.posonlyargs
        or arguments.defaults
    ):
        return None
    params = tuple(arg.arg for arg in arguments.args)
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    known = {**names, **dict.fromkeys(params)}
    steps: list[tuple[ast.expr | None, ast.expr]] = []
    for position, statement in enumerate(body):
        last = position == len(body) - 1
        if last and isinstance(statement, ast.Return) and statement.value is not None:
            if not _parent_safe(statement.value, known):
                return None
            steps.append((None, statement.value))
        elif (
            not last
            and isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and _parent_safe(statement.value, known)
        ):
            known[statement.targets[0].id] = None
            steps.append((statement.targets[0], statement.value))
        else:
            return None
    if not steps or steps[-1][0] is not None:
        return None
    return _Helper(node.name, params, tuple(steps), tuple(names.items()))


class _Refused(Exception):
    """A statement the parent cannot decide alone: the check runs inside."""


class _Planner:
    """Plans the checks of one case in order, keeping the test side's trusted names."""

    def __init__(self, entry_point: str, trusted: str = "") -> None:
        self.targets = {entry_point, "candidate"}
        self.names: dict[str, Any] = {}
        self.pending: list[str] = []
        self.budget = 0
        if trusted:
            _helpers(trusted, self.names, self.targets)

    def plan(self, check: Check) -> PlannedCheck:
        try:
            module = parse(check.source)
        except (SyntaxError, ValueError):
            return self._inside(check)
        if len(module.body) != 1:
            return self._inside(check)
        statement = module.body[0]
        calls: list[CandidateCall] = []
        steps: list[Step] = []
        self.budget = _MAX_STATEMENTS
        try:
            if isinstance(statement, ast.Assert | ast.For):
                # A loop's names stay its own: later checks see the set-up before it.
                self._run([statement], dict(self.names), calls, steps)
            else:
                self._set_up(statement)
                self.pending.append(check.source)
        except _Refused:
            return self._inside(check)
        if len(steps) == 1:
            only = steps[0]
            return PlannedCheck(check, "value", tuple(calls), only.test, only.message, (only,))
        return PlannedCheck(check, "value", tuple(calls), None, "", tuple(steps))

    def _inside(self, check: Check) -> PlannedCheck:
        prelude = "\n".join(self.pending)
        self.pending = []
        return PlannedCheck(check, "inside", prelude=prelude)

    def _set_up(self, statement: ast.stmt) -> None:
        """Take a test-side statement that calls nothing of the candidate's."""
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name not in _MODULES or "." in alias.name:
                    raise _Refused
                self.names[alias.asname or alias.name] = _MODULES[alias.name]
        elif isinstance(statement, ast.ImportFrom):
            module = _MODULES.get(statement.module or "")
            if module is None or statement.level:
                raise _Refused
            for alias in statement.names:
                if alias.name.startswith("_") or not hasattr(module, alias.name):
                    raise _Refused
                self.names[alias.asname or alias.name] = getattr(module, alias.name)
        elif isinstance(statement, ast.Assign):
            self._assign(statement, self.names)
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            pass  # a bare literal: nothing to decide
        elif (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Name)
            and statement.value.id in ("print", *_SAFE_NAMES)
        ):
            pass  # a bare builtin's name (``print``): evaluating it does nothing
        else:
            raise _Refused

    def _assign(self, statement: ast.Assign, names: dict[str, Any]) -> None:
        if len(statement.targets) != 1:
            raise _Refused
        value = _closed(statement.value, names, self.targets)
        _bind(statement.targets[0], value, names)

    def _extract(
        self, node: ast.expr, names: dict[str, Any], calls: list[CandidateCall]
    ) -> ast.expr:
        """``node`` with each candidate call (and each name of a call's value) replaced
        by its placeholder; the calls join ``calls``."""
        # A copy: the extractor rewrites the tree, and a loop's body is planned once per turn.
        test = _Extractor(self.targets, calls, names).visit(copy.deepcopy(node))
        if not isinstance(test, ast.expr) or not _parent_safe(test, names):
            raise _Refused
        return test

    def _assertion(
        self, statement: ast.Assert, names: dict[str, Any], calls: list[CandidateCall]
    ) -> Step:
        test = self._extract(statement.test, names, calls)
        message = statement.msg.value if isinstance(statement.msg, ast.Constant) else ""
        read = {
            name: _snapshot(names[name])
            for name in _names_in(test)
            if name in names and not isinstance(names[name], _Pending)
        }
        return Step(ast.fix_missing_locations(test), tuple(read.items()), str(message))

    def _run(
        self,
        body: list[ast.stmt],
        names: dict[str, Any],
        calls: list[CandidateCall],
        steps: list[Step],
    ) -> None:
        """Run test-side statements in the parent: closed values are computed, candidate
        calls become placeholders, assertions become steps decided after the calls."""
        for statement in body:
            self.budget -= 1
            if self.budget < 0 or len(calls) > _MAX_UNROLL:
                raise _Refused
            if isinstance(statement, ast.Assert):
                steps.append(self._assertion(statement, names, calls))
            elif isinstance(statement, ast.Assign):
                self._assign_any(statement, names, calls)
            elif isinstance(statement, ast.For):
                if statement.orelse or getattr(statement, "type_comment", None):
                    raise _Refused
                iterable = _closed(statement.iter, names, self.targets)
                try:
                    items = list(itertools.islice(iter(iterable), _MAX_UNROLL + 1))
                except Exception:
                    raise _Refused from None
                if len(items) > _MAX_UNROLL:
                    raise _Refused
                for item in items:
                    _bind(statement.target, item, names)
                    self._run(statement.body, names, calls, steps)
            elif isinstance(statement, ast.If):
                branch = (
                    statement.body
                    if _closed(statement.test, names, self.targets)
                    else statement.orelse
                )
                self._run(branch, names, calls, steps)
            elif isinstance(statement, ast.Expr):
                _grow(statement.value, names, self.targets)
            else:
                raise _Refused

    def _assign_any(
        self, statement: ast.Assign, names: dict[str, Any], calls: list[CandidateCall]
    ) -> None:
        """An assignment of a closed value, or of one candidate call's value (kept as a
        placeholder: ``solution = candidate(coeffs)``)."""
        if len(statement.targets) != 1:
            raise _Refused
        target = statement.targets[0]
        mentions = _names_in(statement.value)
        if not mentions & self.targets and not any(
            isinstance(names.get(name), _Pending) for name in mentions
        ):
            _bind(target, _closed(statement.value, names, self.targets), names)
            return
        value = self._extract(statement.value, names, calls)
        if not isinstance(target, ast.Name) or not (
            isinstance(value, ast.Name) and value.id.startswith("__cb_value_")
        ):
            raise _Refused
        names[target.id] = _Pending(int(value.id.removeprefix("__cb_value_").rstrip("_")))


def _snapshot(value: Any) -> Any:
    """A step's own copy of a mutable test-side value (later statements may grow it)."""
    return copy.deepcopy(value) if isinstance(value, list | dict | set) else value


def _grow(node: ast.expr, names: dict[str, Any], targets: set[str]) -> None:
    """A test-side ``items.append(x)`` / ``items.extend(xs)`` on a list of its own."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("append", "extend")
        and isinstance(node.func.value, ast.Name)
        and isinstance(names.get(node.func.value.id), list)
        and len(node.args) == 1
        and not node.keywords
    ):
        raise _Refused
    argument = _closed(node.args[0], names, targets)
    items: list[Any] = names[node.func.value.id]
    if node.func.attr == "append":
        items.append(argument)
    else:
        items.extend(argument)


def _bind(target: ast.expr, value: Any, names: dict[str, Any]) -> None:
    """Bind ``value`` to a name or a tuple of names, as Python's assignment would."""
    if isinstance(target, ast.Name):
        names[target.id] = value
        return
    if isinstance(target, ast.Tuple | ast.List) and not any(
        isinstance(element, ast.Starred) for element in target.elts
    ):
        try:
            parts = list(value)
        except TypeError:
            raise _Refused from None
        if len(parts) != len(target.elts):
            raise _Refused
        for element, part in zip(target.elts, parts, strict=True):
            _bind(element, part, names)
        return
    raise _Refused


def _closed(node: ast.expr, names: dict[str, Any], targets: set[str]) -> Any:
    """A test-side expression that calls nothing of the candidate's, evaluated in the parent."""
    if any(
        isinstance(child, ast.Name)
        and (child.id in targets or isinstance(names.get(child.id), _Pending))
        for child in ast.walk(node)
    ):
        raise _Refused
    if not _parent_safe(node, names):
        raise _Refused
    try:
        return _evaluate(node, {**_SAFE_NAMES, **names})
    except Exception:
        raise _Refused from None


def _names_in(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _placeholder(index: int) -> str:
    return f"__cb_value_{index}__"


class _Extractor(ast.NodeTransformer):
    """Replaces each call of the function under test by a placeholder name."""

    def __init__(
        self, names: set[str], calls: list[CandidateCall], known: dict[str, Any] | None = None
    ) -> None:
        self.names = names
        self.calls = calls
        self.known = known or {}

    def visit_Call(self, node: ast.Call) -> ast.AST:
        wrap = _wrapper_of(node, self.names)
        inner = node.args[0] if wrap else node
        if isinstance(inner, ast.Call) and _calls_target(inner, self.names):
            call = _closed_call(inner, self.known)
            if call is None:
                return self._refuse(node)
            self.calls.append(CandidateCall(call[0], call[1], wrap))
            return ast.copy_location(ast.Name(_placeholder(len(self.calls) - 1), ast.Load()), node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        pending = self.known.get(node.id)
        if isinstance(pending, _Pending):
            # A name bound to an earlier call's value: that value, as plain data.
            return ast.copy_location(ast.Name(_placeholder(pending.index), ast.Load()), node)
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


def _closed_call(
    node: ast.Call, known: dict[str, Any] | None = None
) -> tuple[tuple[Any, ...], tuple[tuple[str, Any], ...]] | None:
    """The call's arguments evaluated in the parent, or None when they are not plain data."""
    known = known or {}
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return None
    if any(keyword.arg is None for keyword in node.keywords):
        return None
    try:
        args = tuple(_constant(arg, known) for arg in node.args)
        kwargs = tuple((str(k.arg), _constant(k.value, known)) for k in node.keywords)
        for value in (*args, *(v for _, v in kwargs)):
            encode_argument(value)
    except Exception:  # not plain data, or the test side's own expression raised
        return None
    return args, kwargs


def _constant(node: ast.expr, known: dict[str, Any]) -> Any:
    """A test-side argument: a literal, or a safe expression over literals and the
    names the test side set up before."""
    if not _parent_safe(node, known):
        raise ValueError("not a closed expression")
    return _evaluate(node, {**_SAFE_NAMES, **known})


def _parent_safe(node: ast.AST, known: dict[str, Any] | None = None) -> bool:
    known = known or {}
    # Names a comprehension binds are its own (``i`` in ``[i * i for i in lst]``).
    local = {
        child.id
        for generator in ast.walk(node)
        if isinstance(generator, ast.comprehension)
        for child in ast.walk(generator.target)
        if isinstance(child, ast.Name)
    }
    for child in ast.walk(node):
        if not isinstance(child, _NODES):
            return False
        if isinstance(child, ast.Name) and not (
            child.id in _SAFE_NAMES
            or child.id in known
            or child.id in local
            or child.id.startswith("__cb_value_")
        ):
            return False
        if isinstance(child, ast.Attribute) and not _module_attribute(child, known):
            return False
    return True


def _module_attribute(node: ast.Attribute, known: dict[str, Any]) -> bool:
    """Whether ``node`` names a public member of a trusted module (``math.fabs``), a
    method of the test side's own ``random.Random``, or a plain method of a string literal."""
    if node.attr.startswith("_"):
        return False
    if isinstance(node.value, ast.Constant):
        return isinstance(node.value.value, str) and node.attr in _STR_METHODS
    if not isinstance(node.value, ast.Name):
        return False
    owner = known.get(node.value.id, _SAFE_NAMES.get(node.value.id))
    return type(owner) is random.Random or any(owner is trusted for trusted in _MODULES.values())


def _evaluate(node: ast.expr, names: dict[str, Any]) -> Any:
    return _run(_compiled(node), names)


def _compiled(node: ast.expr) -> CodeType:
    return compile_expression(ast.fix_missing_locations(ast.Expression(body=node)), "<check>")


def _run(code: CodeType, names: dict[str, Any]) -> Any:
    # One namespace: in a comprehension (a function of its own) names resolve as globals.
    return eval(code, {**names, "__builtins__": {}})


def _explain(step: Step, names: dict[str, Any]) -> tuple[str, str]:
    """(expected, actual) texts for a failed assertion, from the parent's own values."""
    shape, actual, other, symbol = step.explanation
    if shape == "compare":
        assert other is not None
        actual_text = describe_value(_run(actual, names))
        expected = describe_value(_run(other, names))
        return (expected if symbol == "==" else f"{symbol} {expected}"), actual_text
    if shape == "not":
        return "a false value", describe_value(_run(actual, names))
    return "a true value", describe_value(_run(actual, names))
