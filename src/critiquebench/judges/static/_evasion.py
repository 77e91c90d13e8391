"""Code that hides itself from the static checkers: each hiding place is a finding.

mypy does not check what it is told not to (``@no_type_check``), what it decides is
unreachable from a condition it evaluates itself (``TYPE_CHECKING``, ``sys.version_info``,
``sys.platform``), nor code that only exists as data at run time (``exec``, ``eval``,
``compile``, imports by name, code objects). An answer that moves its code there scores
0 type errors for code with type errors, so each such place is reported under the
``types`` kind with a code of its own (``CB1xx``), never silently accepted:

- ``CB101`` a name ``no_type_check`` (decorator, import or attribute, aliased or not:
  mypy only honours it through that name).
- ``CB102`` a condition mypy decides by itself, so one branch is never type-checked
  (of ``if``, ``while``, ``assert``, a conditional expression or a ``case`` guard):
  any ``TYPE_CHECKING``/``MYPY`` test other than a bare ``if TYPE_CHECKING:`` without
  ``else`` (whose body is checked but never run), and any ``sys.version_info`` or
  ``sys.platform`` test. mypy recognises these by their spelling alone, so the
  spelling is what is matched.
- ``CB103`` a way from data to running code: ``exec``, ``compile``,
  ``__import__``, ``__builtins__``, the modules that load code by name or from bytes
  (``builtins``, ``importlib``, ``runpy``, ``code``, ``codeop``, ``marshal``,
  ``pickle``) or run another interpreter (``subprocess``, ``ctypes``, ``os.system``
  and its kin), the attributes and dunder names that reach another namespace or a
  code object (``__globals__``, ``__code__``, ``__self__``, ``__subclasses__``,
  ``__loader__``, ``sys.modules``, ``FunctionType``, ``CodeType``, also as strings) and
  ``getattr``/``setattr``/``delattr`` with a name that is not a constant string.
  ``eval`` is one too, unless the text it reads, traced back through its function's
  assignments, comes from the function's inputs, names nothing but inputs, local names
  and a few pure builtins, holds no string longer than an operator, and no string of
  the answer holds code (a ``lambda``, ``def``, ``class`` or ``import``): HumanEval/160's
  reference evaluates the arithmetic its arguments spell, which is calculation, not
  hidden code. What is left (code spelled out of numbers at run time, say) is judged
  by the tests alone, as all behaviour is.

File-level directives need no code: ``# type: ignore`` and ``# mypy:`` comments are
blanked before mypy reads the code, and ruff runs with ``--ignore-noqa``, which also
ignores ``# ruff: noqa`` and ``# flake8: noqa`` (tests hold both).

The text is the candidate's (untrusted): the reader never raises, visits each node
once (linear), and reports at most ``MOST_FINDINGS`` places.
"""

from __future__ import annotations

import ast
import contextlib
import warnings

from critiquebench.judges._failure import Failure
from critiquebench.judges.static._tree import child_nodes

MOST_FINDINGS = 20
"""Evasion findings reported per answer at most (one hiding place is enough to know)."""

_NO_TYPE_CHECK = frozenset({"no_type_check", "no_type_check_decorator"})
_STATIC_FLAGS = frozenset({"TYPE_CHECKING", "MYPY", "PY2", "PY3"})
_SYS_CONSTANTS = frozenset({"version_info", "platform"})
_DYNAMIC_NAMES = frozenset({"exec", "eval", "compile", "__import__", "__builtins__"})
_TAINT_ROUNDS = 6
"""Passes over a function's assignments when tracing what an ``eval`` reads (a chain
of more hand-overs than this is not followed: the ``eval`` is then reported)."""
_PURE_BUILTINS = frozenset(
    {"str", "repr", "int", "float", "abs", "len", "range", "zip", "enumerate", "list",
     "tuple", "sorted", "reversed", "min", "max", "sum", "round"}
)  # fmt: skip
_LONGEST_OPERATOR = 2
"""Longest string constant an evaluated text may be built with (``**``, ``//``)."""
_MOST_STRING_TEXT = 50_000
"""Characters of string constants parsed, at most, when looking for code in strings."""
_CODE_NODES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
               ast.ImportFrom)  # fmt: skip
_DYNAMIC_MODULES = frozenset(
    {"builtins", "importlib", "runpy", "code", "codeop", "marshal", "pickle", "_pickle",
     "subprocess", "ctypes"}
)  # fmt: skip
# Attributes only: ``re.compile`` or ``model.eval`` are ordinary; reaching the builtins'
# ``exec`` by attribute needs the builtins module, which every way to it is listed for.
_DYNAMIC_ATTRIBUTES = frozenset(
    {"__globals__", "__code__", "__self__", "__subclasses__", "__builtins__", "__loader__",
     "__spec__", "FunctionType", "CodeType", "__import__"}
)  # fmt: skip
_DUNDER_NAMES = frozenset({"__loader__", "__spec__"})
_OS_RUNNERS = ("system", "popen", "exec", "spawn", "posix_spawn")
_NAME_TAKERS = frozenset({"getattr", "setattr", "delattr"})

_CONDITIONS = (ast.If, ast.While, ast.IfExp, ast.Assert)
_INSPECTED = frozenset(
    {ast.Name, ast.Attribute, ast.alias, *_CONDITIONS, ast.match_case, ast.Constant, ast.Call}
)
"""The node types :func:`_inspect` reports on."""
_ASSIGNING = frozenset(
    {ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension,
     ast.NamedExpr}
)  # fmt: skip
"""The node types :func:`_record_assignment` records."""
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def evasion_findings(tree: ast.Module) -> tuple[Failure, ...]:
    """The places of the answer ``tree`` that hide code from the checkers."""
    found: list[Failure] = []
    # Never the trusted parent's failure: whatever was found before a surprise stands.
    with contextlib.suppress(Exception):
        _visit(tree, found)
    # One finding per code and line: an import and its use on one line are one place.
    unique = {(finding.code, finding.line): finding for finding in reversed(found)}
    return tuple(sorted(unique.values(), key=lambda f: (f.line, f.code))[:MOST_FINDINGS])


_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


class _Scope:
    """What one function binds: its inputs, and its assignments (targets, value)."""

    def __init__(self, function: _Function) -> None:
        arguments = function.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        self.inputs = {argument.arg for argument in every}
        self.assignments: list[tuple[set[str], ast.AST]] = []


def _visit(tree: ast.Module, found: list[Failure]) -> None:
    # An explicit stack (no recursion): a deeply nested hostile tree cannot overflow it.
    stack: list[tuple[ast.AST, _Scope | None]] = [(tree, None)]
    evals: list[tuple[ast.Call, _Scope | None]] = []
    strings: list[str] = []
    while stack and len(found) < MOST_FINDINGS:
        node, scope = stack.pop()
        if isinstance(node, ast.Call) and _is_eval(node.func):
            evals.append((node, scope))
            stack.extend((child, scope) for child in node.args + [k.value for k in node.keywords])
            continue
        # Exact types (a parsed tree holds no subclasses): most nodes are none of these,
        # and a set lookup passes them by (with child_nodes, 0.82 -> 0.51 ms an answer).
        kind = type(node)
        if kind in _INSPECTED:
            _inspect(node, found)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append(node.value)
        if scope is not None and kind in _ASSIGNING:
            _record_assignment(node, scope)
        inner = _Scope(node) if isinstance(node, _FUNCTIONS) else scope
        stack.extend((child, inner) for child in child_nodes(node))
    if evals and len(found) < MOST_FINDINGS:
        code_in_strings = _code_in(strings)
        for call, scope in evals:
            if code_in_strings or not _reads_inputs(call, scope):
                found.append(
                    _finding("CB103", call.lineno, "`eval` runs code the checkers cannot read")
                )


def _is_eval(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "eval"


def _record_assignment(node: ast.AST, scope: _Scope) -> None:
    if isinstance(node, ast.Assign):
        targets = {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        scope.assignments.append((targets, node.value))
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
        targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        scope.assignments.append((targets, node.value))
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        scope.assignments.append((targets, node.iter))
    elif isinstance(node, ast.NamedExpr):
        scope.assignments.append(({node.target.id}, node.value))


def _names(node: ast.AST) -> set[str]:
    return {part.id for part in ast.walk(node) if isinstance(part, ast.Name)}


def _reads_inputs(call: ast.Call, scope: _Scope | None) -> bool:
    """Whether ``eval``'s text is built only from its function's inputs: what it reads
    (traced back through the function's assignments) includes an input, names nothing
    but inputs, local names and a few pure builtins, and holds no string longer than
    an operator's."""
    if scope is None or len(call.args) != 1 or call.keywords:
        return False
    needed = _names(call.args[0])
    feeding: list[ast.AST] = [call.args[0]]
    used: set[int] = set()
    for _ in range(_TAINT_ROUNDS):
        grown = set(needed)
        for number, (targets, value) in enumerate(scope.assignments):
            if number not in used and targets & needed:
                used.add(number)
                grown |= _names(value)
                feeding.append(value)
        if grown == needed:
            break
        needed = grown
    else:
        return False  # a longer chain than is followed: not shown to be the inputs
    local = {target for targets, _ in scope.assignments for target in targets}
    if not needed & scope.inputs or needed - scope.inputs - local - _PURE_BUILTINS:
        return False
    return not any(
        isinstance(part, ast.Constant) and isinstance(part.value, (str, bytes))
        and len(part.value) > _LONGEST_OPERATOR
        for value in feeding
        for part in ast.walk(value)
    )  # fmt: skip


def _code_in(strings: list[str]) -> bool:
    """Whether a string constant parses as code that defines or imports something."""
    from critiquebench.runtime.ast_turns import parse

    budget = _MOST_STRING_TEXT
    for text in strings:
        if len(text) > budget:
            return True  # too much text to read: it cannot be shown to hold no code
        budget -= len(text)
        try:
            with warnings.catch_warnings():  # escapes in prose warn; that is not ours to print
                warnings.simplefilter("ignore")
                tree = parse(text)
        except Exception:  # prose, or too deep: not code this reading can run
            continue
        if any(isinstance(node, _CODE_NODES) for node in ast.walk(tree)):
            return True
    return False


def _inspect(node: ast.AST, found: list[Failure]) -> None:
    # A ``case`` has no line of its own: its guard's stands for it.
    line = getattr(node, "lineno", 0) or getattr(getattr(node, "guard", None), "lineno", 0)
    if isinstance(node, ast.Name) and node.id in _NO_TYPE_CHECK:
        found.append(_finding("CB101", line, f"`{node.id}` stops mypy checking a function"))
    elif isinstance(node, ast.Attribute) and node.attr in _NO_TYPE_CHECK:
        found.append(_finding("CB101", line, f"`{node.attr}` stops mypy checking a function"))
    elif isinstance(node, ast.alias):
        _inspect_alias(node, found)
    elif isinstance(node, (*_CONDITIONS, ast.match_case)) and _decided_by_mypy(node):
        found.append(
            _finding(
                "CB102", line,
                "a condition mypy decides by itself (TYPE_CHECKING, sys.version_info, "
                "sys.platform): one branch is never type-checked",
            )
        )  # fmt: skip
    elif isinstance(node, ast.Name) and node.id in _DYNAMIC_NAMES | _DUNDER_NAMES:
        found.append(_finding("CB103", line, f"`{node.id}` runs code the checkers cannot read"))
    elif isinstance(node, ast.Attribute) and _dynamic_attribute(node):
        message = f"`.{node.attr}` reaches code the checkers cannot read"
        found.append(_finding("CB103", line, message))
    elif (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in _DYNAMIC_ATTRIBUTES | _DYNAMIC_NAMES - {"eval", "exec", "compile"}
    ):
        message = f"the name {node.value!r} as data reaches code the checkers cannot read"
        found.append(_finding("CB103", line, message))
    elif isinstance(node, ast.Call) and _dynamic_lookup(node):
        message = "an attribute looked up by a computed name hides what is called"
        found.append(_finding("CB103", line, message))


def _inspect_alias(node: ast.alias, found: list[Failure]) -> None:
    line = getattr(node, "lineno", 0)
    names = {node.name, *node.name.split("."), node.asname or ""}
    if names & _NO_TYPE_CHECK:
        found.append(_finding("CB101", line, "`no_type_check` stops mypy checking a function"))
    elif node.name.split(".")[0] in _DYNAMIC_MODULES or names & _DYNAMIC_NAMES:
        found.append(_finding("CB103", line, f"`{node.name}` loads code the checkers cannot read"))


def _decided_by_mypy(
    node: ast.If | ast.While | ast.IfExp | ast.Assert | ast.match_case,
) -> bool:
    test = node.guard if isinstance(node, ast.match_case) else node.test
    if test is None:
        return False
    static_flag = version_or_platform = False
    for part in ast.walk(test):
        name = part.id if isinstance(part, ast.Name) else getattr(part, "attr", None)
        if name in _STATIC_FLAGS:
            static_flag = True
        elif (
            isinstance(part, ast.Attribute)
            and part.attr in _SYS_CONSTANTS
            and isinstance(part.value, ast.Name)
            and part.value.id == "sys"
        ):
            version_or_platform = True
    if version_or_platform:
        return True
    if not static_flag:
        return False
    # ``if TYPE_CHECKING:`` alone: its body is checked (and never run); nothing hides.
    bare = isinstance(test, (ast.Name, ast.Attribute))
    return not (isinstance(node, ast.If) and bare and not node.orelse)


def _dynamic_attribute(node: ast.Attribute) -> bool:
    if node.attr in _DYNAMIC_ATTRIBUTES:
        return True
    owner = node.value.id if isinstance(node.value, ast.Name) else ""
    if owner == "os" and node.attr.startswith(_OS_RUNNERS):
        return True  # another interpreter started on a text
    return owner == "sys" and node.attr == "modules"


def _dynamic_lookup(node: ast.Call) -> bool:
    if not (isinstance(node.func, ast.Name) and node.func.id in _NAME_TAKERS):
        return False
    if len(node.args) < 2:
        return True  # the name comes from ``*args`` or a keyword: computed
    name = node.args[1]
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return True
    return name.value in _DYNAMIC_NAMES | _DYNAMIC_ATTRIBUTES | _NO_TYPE_CHECK


def _finding(code: str, line: int, message: str) -> Failure:
    # "candidate.py" is judges/static/_checker.py's CANDIDATE_FILE (which imports this module).
    return Failure(
        kind="types", message=message, line=line, code=code, file="candidate.py", origin="static"
    )
