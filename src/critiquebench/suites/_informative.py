"""Feedback checks that can teach: detect checks no candidate can fail.

A loop that sees only feedback checks learns nothing from ``assert True`` or from
a check that never calls the function under test: every draft passes it, so the
loop stops on a wrong answer. The test here is static (AST only, nothing runs):
a check is *informative* when it reaches the candidate, directly (its name or
``candidate``) or through a helper defined in the case's setup that does, and,
for an ``assert``, when its condition is not a constant.
"""

from __future__ import annotations

import ast

from critiquebench.judges import Case, Check
from critiquebench.runtime.ast_turns import parse

_CANDIDATE_ALIAS = "candidate"


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def candidate_names(entry_point: str, setup: str = "") -> frozenset[str]:
    """Names whose use reaches the candidate: itself, ``candidate``, and setup helpers.

    A setup function or constant that uses the candidate (or another such helper)
    counts, so ``assert check_all()`` with ``def check_all(): return f(1) == 2`` in
    the setup is informative.
    """
    reaching = {entry_point, _CANDIDATE_ALIAS}
    try:
        tree = parse(setup) if setup.strip() else ast.Module(body=[], type_ignores=[])
    except SyntaxError:
        return frozenset(reaching)
    helpers: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            helpers[node.name] = _names(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            # A setup constant computed from the candidate, e.g. `EXPECTED = f(3)`.
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    helpers[target.id] = _names(node.value)
    grew = True
    while grew:  # a helper may reach the candidate through another helper
        grew = False
        for name, used in helpers.items():
            if name not in reaching and used & reaching:
                reaching.add(name)
                grew = True
    return frozenset(reaching)


def uninformative_reason(source: str, reaching: frozenset[str]) -> str | None:
    """Why the check ``source`` cannot fail for any candidate, or None if it can.

    Args:
        source: one Python statement.
        reaching: names that reach the candidate (see :func:`candidate_names`).
    """
    try:
        tree = parse(source)
    except SyntaxError:
        return "it is not valid Python"
    if not tree.body:
        return "it is empty"
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert):
        # The message of an assert is evaluated only when the test fails, so only
        # the test decides the outcome.
        test = tree.body[0].test
        if isinstance(test, ast.Constant):
            return f"its condition is the constant {test.value!r}"
        if isinstance(test, ast.Tuple) and test.elts:
            return "its condition is a non-empty tuple, always true (`assert (x, msg)`?)"
        if not _names(test) & reaching:
            return "its condition never calls the function under test"
        return None
    if not _names(tree) & reaching:
        return "it never calls the function under test"
    return None


def check_is_informative(check: Check, case: Case) -> bool:
    """True when some candidate can fail ``check`` (see :func:`uninformative_reason`)."""
    reaching = candidate_names(case.entry_point, case.setup)
    return uninformative_reason(check.source, reaching) is None


def feedback_cannot_fail(case: Case) -> tuple[str, ...]:
    """Reasons per feedback check when *none* of them can fail; empty when one can.

    A case without feedback checks also cannot teach: it gets one reason saying so.
    """
    reaching = candidate_names(case.entry_point, case.setup)
    feedback = case.checks_from(frozenset({"feedback"}))
    if not feedback:
        return ("the case has no feedback checks",)
    reasons = []
    for check in feedback:
        reason = uninformative_reason(check.source, reaching)
        if reason is None:
            return ()
        reasons.append(f"`{check.source}`: {reason}")
    return tuple(reasons)
