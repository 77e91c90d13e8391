"""The sql judge: a DuckDB query run against each check's fixture, its rows compared.

Each check runs the query on a fresh in-memory database built from the case's
``judge_data.schema`` and the check's ``data``, inside the project's sandbox, with
DuckDB's file access, extensions and settings locked (``_harness.py``). The
parent compares the returned rows with the check's ``expected`` rows
(``_compare.py``). Defects have kind ``sql`` and a code: ``error``, ``timeout``
(the query used its CPU time limit, however long it waited for a CPU),
``missing_row``, ``extra_row``, ``wrong_value``, or ``not_a_query`` for an answer
that is not one SELECT (whole artifact, origin ""). See docs/suites.md, "sql".
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from critiquebench.judges._artifact import ArtifactFormat
from critiquebench.judges._case import Case, Check
from critiquebench.judges._failure import Failure, FailureKind, JudgeResult
from critiquebench.judges.sandbox import Sandbox, SandboxedJudge, SandboxLimits
from critiquebench.judges.sql._compare import RowDifference, compare_rows
from critiquebench.judges.sql._run import AttemptRun, CheckRun, duckdb_extras, run_checks
from critiquebench.judges.sql._spec import SqlCheckSpec, case_problems

MAX_QUERY_CHARS = 20_000
"""Longest query the judge runs; a longer answer is ``not_a_query``."""

SQL_SYSTEM = (
    "You are a careful data analyst who writes DuckDB SQL. Reply with one ```sql code "
    "block holding exactly one SELECT query (a WITH clause is fine) that answers the "
    "question, and nothing else. Do not create, change or drop tables."
)


@dataclass(frozen=True)
class SqlFormat(ArtifactFormat):
    """One SQL query in a ```sql block (the first such block, else the whole reply)."""

    def simulated_reply(self, case: Case, correct: bool, attempt: int) -> str:
        """The reference, or a valid query that is wrong on every check: the
        reference's rows without its first one, plus one row of NULLs."""
        reference = case.reference_solution.strip().rstrip(";").strip()
        if correct:
            return self.fenced(reference)
        wrong = (
            f"(SELECT * FROM (\n{reference}\n) AS sim_answer OFFSET 1)\nUNION ALL\n"
            f"(SELECT sim_blank.* FROM (SELECT 1) AS sim_one(x)\n"
            f"LEFT JOIN (\n{reference}\n) AS sim_blank ON false)"
        )
        return self.fenced(wrong)


SQL_FORMAT = SqlFormat(
    fence="sql",
    aliases=("SQL", "duckdb", "postgresql", "postgres", "sqlite", "mysql"),
    noun="query",
    system=SQL_SYSTEM,
)


class SqlJudge(SandboxedJudge):
    """Counts the defects of a DuckDB query against every check of a sql case.

    Never raises: the query's problems are ``sql`` failures, the judge's own
    (sandbox, DuckDB missing, a broken fixture) are ``infrastructure_error``.
    At most ``max_defects_per_check`` defects are reported per check, so one wrong
    query cannot flood the tables.
    """

    artifact_format = SQL_FORMAT
    case_problems = staticmethod(case_problems)

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        sandbox: Sandbox | None = None,
        *,
        max_defects_per_check: int = 5,
        max_rows: int = 1000,
    ) -> None:
        super().__init__(limits, sandbox, duckdb_extras)  # DuckDB is visible inside its pool
        self.max_defects_per_check = max_defects_per_check
        self.max_rows = max_rows

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        """Count the defects of the query ``artifact`` against every check of ``case``."""
        started = time.perf_counter()
        try:
            return self._judge(case, artifact.strip(), started)
        except Exception as exc:  # the judge's own failure, never the query's defect
            return _result(case, [], started, f"judge error: {type(exc).__name__}: {exc}")

    def _judge(self, case: Case, query: str, started: float) -> JudgeResult:
        problem = _static_problem(query)
        runs = [CheckRun("not_a_query", problem)] * len(case.checks) if problem else None
        if runs is None:
            found = self._run(case, query)
            if isinstance(found, AttemptRun):
                return _result(
                    case, [], started, found.infrastructure_error, owned_kind=found.owned_kind
                )
            runs = found
        failures: list[Failure] = []
        whole = next((run for run in runs if run.tag == "not_a_query"), None)
        if whole is not None:
            failures.append(Failure(kind="sql", code="not_a_query", message=whole.message))
        passed = 0
        for check, run in zip(case.checks, runs, strict=True):
            defects = self._check_failures(check, run)
            failures += defects
            passed += not defects
        pool = self.started_sandbox  # a query judged before it ran starts no workers
        note = pool.description if pool is not None else ""
        return _result(case, failures, started, None, passed, note)

    def fresh(self) -> SqlJudge:
        """A judge for a proof (``judges/_proof.py``): the same settings, new workers."""
        return SqlJudge(
            self.limits,
            sandbox=self.sandbox.fresh(),
            max_defects_per_check=self.max_defects_per_check,
            max_rows=self.max_rows,
        )

    def canary(self) -> tuple[Case, str]:
        """A control of known outcome (every check passes) for cases without a reference."""
        return CANARY_CASE, "SELECT sum(x) AS total FROM t"

    def owned_result(
        self, case: Case, artifact: str, kind: FailureKind, message: str
    ) -> JudgeResult:
        """A query that owns its judge's failure: one defect for the whole answer and
        ``max_defects_per_check`` per check, the most an honest judgement can give."""
        started = time.perf_counter()
        failures = [Failure(kind="sql", code=kind, message=message)]
        for check in case.checks:
            failures += [
                Failure(
                    kind="sql",
                    code=kind,
                    message="not judged: the query broke its judge (counted as the most "
                    "defects a check can have)",
                    source=check.source,
                    origin=check.origin,
                )
            ] * self.max_defects_per_check
        return _result(case, failures, started, None)

    def _run(self, case: Case, query: str) -> list[CheckRun] | AttemptRun:
        """Every check's run, or the attempt when the judge could not judge it."""
        attempt = run_checks(self.sandbox, case, query, self.limits, self.max_rows)
        if attempt.infrastructure_error:
            return attempt
        broken = next(
            (run for run in attempt.checks if run.tag in ("fixture", "unavailable")), None
        )
        if broken is not None:
            what = (
                "the case's fixture failed" if broken.tag == "fixture" else "DuckDB did not start"
            )
            return AttemptRun([], f"{what}: {broken.message}")
        return attempt.checks

    def _check_failures(self, check: Check, run: CheckRun) -> list[Failure]:
        if run.tag == "rows":
            spec = SqlCheckSpec.of(check)
            differences = compare_rows(
                spec.expected, run.rows, run.columns, ordered=spec.ordered, tolerance=spec.tolerance
            )
            if run.truncated:
                differences.append(
                    RowDifference("extra_row", "the result has more rows than were read")
                )
        elif run.tag == "timeout":
            differences = [RowDifference("timeout", run.message or "the query timed out")]
        elif run.tag == "not_a_query":
            differences = [RowDifference("error", "not run: the answer is not one SELECT query")]
        else:
            differences = [RowDifference("error", run.message or "the query failed")]
        return [_failure(check, found) for found in self._capped(differences)]

    def _capped(self, differences: list[RowDifference]) -> list[RowDifference]:
        cap = self.max_defects_per_check
        if len(differences) <= cap:
            return differences
        last = differences[cap - 1]
        more = f" (and {len(differences) - cap} more difference(s) in this check)"
        return [
            *differences[: cap - 1],
            RowDifference(last.code, last.message + more, last.expected, last.actual),
        ]


CANARY_CASE = Case(
    id="canary/sql",
    prompt="Total of x in t.",
    judge="sql",
    judge_data={"schema": "CREATE TABLE t (x INTEGER);"},
    checks=(
        Check(
            source="total of 1 and 2",
            origin="heldout",
            spec={"data": "INSERT INTO t VALUES (1), (2);", "expected": [[3]]},
        ),
    ),
)


def _static_problem(query: str) -> str:
    """What makes the artifact not a query before anything runs, or ""."""
    if not query:
        return "the answer is empty; give one SELECT query"
    if len(query) > MAX_QUERY_CHARS:
        return f"the query is longer than {MAX_QUERY_CHARS} characters"
    return ""


def _failure(check: Check, difference: RowDifference) -> Failure:
    return Failure(
        kind="sql",
        code=difference.code,
        message=difference.message,
        source=check.source,
        expected=difference.expected,
        actual=difference.actual,
        origin=check.origin,
    )


def _result(
    case: Case,
    failures: list[Failure],
    started: float,
    infrastructure_error: str | None,
    passed: int = 0,
    note: str = "",
    owned_kind: FailureKind = "crash",
) -> JudgeResult:
    return JudgeResult(
        failures=tuple(failures) if infrastructure_error is None else (),
        checks_total=len(case.checks),
        checks_passed=passed,
        duration_s=time.perf_counter() - started,
        notes=(note,) if note else (),
        infrastructure_error=infrastructure_error,
        owned_kind=owned_kind,
    )
