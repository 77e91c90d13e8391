"""The per-kind bound on a unit's defect counts (README "Bounded counts")."""

from __future__ import annotations

from critiquebench.judges import COUNT_BOUND, Failure, FailureKind, JudgeResult, counted


def _lint(line: int, code: str = "F401") -> Failure:
    return Failure("lint", "unused", line=line, code=code, file="candidate.py", origin="static")


def _result(failures: tuple[Failure, ...] = (), findings: tuple[Failure, ...] = ()) -> JudgeResult:
    return JudgeResult(failures=failures, checks_total=1, checks_passed=1, duration_s=0.0,
                       findings=findings)  # fmt: skip


def test_three_thousand_lint_findings_count_the_bound_and_keep_the_raw_count() -> None:
    result = _result(findings=tuple(_lint(line) for line in range(1, 3001)))
    assert result.defects_by_kind()["lint"] == COUNT_BOUND
    assert result.defects_total() == COUNT_BOUND
    assert result.defects_total_raw() == 3000
    assert result.bounded_kinds() == {"lint": 3000}
    assert result.passed and not result.clean  # pass is the tests'; clean sees the findings


def test_lint_counts_distinct_rule_and_line() -> None:
    repeated = (_lint(3), _lint(3), _lint(3), _lint(3, "E711"), _lint(4))
    result = _result(findings=repeated)
    assert result.defects_total() == 3 and result.defects_total_raw() == 5
    assert result.bounded_kinds() == {"lint": 5}


def test_other_judges_kinds_are_bounded_and_count_in_defects() -> None:
    links = tuple(Failure("markdown", f"broken link {n}", code="broken_link") for n in range(5500))
    result = _result(failures=links)
    assert result.defects() == COUNT_BOUND == result.defects_total()
    assert result.defects_by_kind_raw()["markdown"] == 5500
    assert not result.passed  # zero defects is zero either way; this is not zero


def test_test_failures_are_not_bounded_they_are_one_per_check() -> None:
    checks = tuple(Failure("assertion", "no", line=n, origin="heldout") for n in range(40))
    result = _result(failures=(*checks, Failure("not_run", "skipped")))
    assert result.defects() == 41 == result.defects_total() == result.defects_total_raw()
    assert result.bounded_kinds() == {}


def test_an_ordinary_result_is_unchanged() -> None:
    found = (_lint(1), Failure("types", "bad", line=2, code="assignment", origin="static"))
    failures = (Failure("assertion", "no", line=5, origin="heldout"),)
    result = _result(failures, found)
    assert (result.defects(), result.defects_total(), result.defects_total_raw()) == (1, 3, 3)
    assert result.bounded_kinds() == {}
    kinds: tuple[FailureKind, ...] = ("lint", "types", "sql", "json", "markdown", "trigger")
    for kind in kinds:
        assert counted(kind, ()) == 0
