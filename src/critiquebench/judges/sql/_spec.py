"""What a sql case gives the judge, and what can be wrong with it (checked when a suite is read).

``judge_data``: ``schema`` (DDL creating the fixture's tables). Each check's
``spec``: ``expected`` (rows, each a list of values), optionally ``data`` (INSERTs
filling the tables for this check), ``ordered`` (row order matters) and
``tolerance`` (for numbers). See docs/suites.md, "sql".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from critiquebench.judges.sql._compare import DEFAULT_TOLERANCE

if TYPE_CHECKING:
    from critiquebench.judges._case import Case, Check

MAX_SQL_CHARS = 200_000
"""Longest schema, data or reference text a suite may give (characters)."""
MAX_EXPECTED_ROWS = 1000
"""Most expected rows a check may list (the judge reads no more rows of a result)."""

_CHECK_FIELDS = ("data", "expected", "ordered", "tolerance")
_JUDGE_DATA_FIELDS = ("schema",)
_SCHEMA_STATEMENTS = frozenset({"CREATE"})
_DATA_STATEMENTS = frozenset({"INSERT"})


@dataclass(frozen=True)
class SqlCheckSpec:
    """One check's parameters, read from ``Check.spec``."""

    expected: list[list[Any]]
    data: str = ""
    ordered: bool = False
    tolerance: float = DEFAULT_TOLERANCE

    @classmethod
    def of(cls, check: Check) -> SqlCheckSpec:
        """The spec of a check that :func:`case_problems` accepted."""
        spec = check.spec
        return cls(
            expected=[list(row) for row in spec.get("expected", [])],
            data=str(spec.get("data") or ""),
            ordered=bool(spec.get("ordered", False)),
            tolerance=float(spec.get("tolerance", DEFAULT_TOLERANCE)),
        )


def case_problems(case: Case) -> list[str]:
    """What is wrong with a sql case's ``judge_data`` and checks, each phrased as a fix."""
    problems = _judge_data_problems(case.judge_data)
    for check in case.checks:
        where = f"check {check.source!r}"
        if check.line > 0:
            where += f" ({check.origin}_checks[{check.line - 1}])"
        problems += [f"{where}: {problem}" for problem in _check_problems(check.spec)]
    if case.reference_solution:
        problem = _statement_problem(case.reference_solution, frozenset({"SELECT"}))
        if problem:
            problems.append(f"field 'reference_solution': {problem}")
    return problems


def _judge_data_problems(judge_data: dict[str, Any]) -> list[str]:
    problems = [
        f"judge_data: unknown field {name!r}; the sql judge reads only 'schema'"
        for name in judge_data
        if name not in _JUDGE_DATA_FIELDS
    ]
    problems += _script_problems(
        "judge_data.schema",
        judge_data.get("schema"),
        _SCHEMA_STATEMENTS,
        "required, the DDL creating the fixture's tables, "
        'e.g. "CREATE TABLE t (id INTEGER, name VARCHAR);"',
        required=True,
    )
    return problems


def _check_problems(spec: dict[str, Any]) -> list[str]:
    problems = [
        f"unknown field {name!r}; a sql check reads {', '.join(_CHECK_FIELDS)}"
        for name in spec
        if name not in _CHECK_FIELDS
    ]
    problems += _script_problems(
        "field 'data'",
        spec.get("data", ""),
        _DATA_STATEMENTS,
        "give the INSERT statements as one string",
        required=False,
    )
    problems += _expected_problems(spec.get("expected"))
    if not isinstance(spec.get("ordered", False), bool):
        problems.append("field 'ordered': give true or false")
    tolerance = spec.get("tolerance", DEFAULT_TOLERANCE)
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
        problems.append("field 'tolerance': give a number >= 0, e.g. 0.01")
    return problems


def _script_problems(
    label: str, value: object, allowed: frozenset[str], fix: str, *, required: bool
) -> list[str]:
    """What is wrong with a fixture script (the schema's DDL, a check's INSERTs), each
    message led by ``label``: ``fix`` when it is not a string (or, if ``required``,
    blank), else why it is not SQL of the ``allowed`` statement kinds. A blank script
    that is not required sets nothing up and is fine."""
    if not isinstance(value, str) or (required and not value.strip()):
        return [f"{label}: {fix}"]
    if not value.strip():
        return []
    problem = _statement_problem(value, allowed, many=True)
    return [f"{label}: {problem}"] if problem else []


def _expected_problems(expected: Any) -> list[str]:
    example = 'e.g. [["alice", 3], ["bob", 1]] (or [] for no rows)'
    if expected is None:
        return [f"field 'expected': required, the rows the query must return, {example}"]
    if not isinstance(expected, list) or not all(isinstance(row, list) for row in expected):
        return [f"field 'expected': give a list of rows, each a list of values, {example}"]
    if len(expected) > MAX_EXPECTED_ROWS:
        return [f"field 'expected': at most {MAX_EXPECTED_ROWS} rows, found {len(expected)}"]
    widths = sorted({len(row) for row in expected})
    if len(widths) > 1:
        return [f"field 'expected': every row needs the same number of values, found {widths}"]
    if widths == [0]:
        return ["field 'expected': a row needs at least one value"]
    return []


def _statement_problem(text: str, allowed: frozenset[str], *, many: bool = False) -> str:
    """Why ``text`` is not SQL of the allowed statement kinds, or "" when it is.

    Suite text is the suite author's, not the model's: it is only parsed here (never
    executed), and bounded in size first. A cursor of DuckDB's default database parses
    it: a database of our own would cost ~40 ms per text (seconds per suite), and a
    cursor, unlike the shared default connection, is safe while other threads parse.
    """
    if len(text) > MAX_SQL_CHARS:
        return f"longer than {MAX_SQL_CHARS} characters; use a smaller fixture"
    import duckdb  # here: reading a suite of other judges never loads DuckDB

    cursor = duckdb.cursor()
    try:
        statements = cursor.extract_statements(text)
    except duckdb.Error as exc:
        return f"does not parse as DuckDB SQL ({str(exc).splitlines()[0]}); fix the SQL"
    finally:
        cursor.close()
    kinds = [statement.type.name for statement in statements]
    wanted = " or ".join(sorted(allowed))
    if not kinds:
        return f"holds no SQL statement; give {wanted} statement(s)"
    if not many and len(kinds) > 1:
        return f"holds {len(kinds)} statements; give exactly one {wanted} query"
    wrong = sorted({kind for kind in kinds if kind not in allowed})
    if wrong:
        return f"holds {', '.join(wrong)} statement(s); only {wanted} statements belong here"
    return ""
