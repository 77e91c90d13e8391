"""The one door out of the statistics: a suspected infrastructure failure is judged again
alone, beside a control of known outcome, and only a failing control excludes the unit.

The judges here are doubles with scripted outcomes, so each rule is shown on its own;
the sandbox tests (``tests/sandbox/test_load.py``) show them with real workers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from critiquebench.judges import JudgeResult, JudgeSet
from critiquebench.judges._failure import Failure, FailureKind
from critiquebench.suites import Case, Check
from tests.helpers import GOOD_ADD, WRONG_ADD, make_case

REFERENCE = GOOD_ADD + "\n"
BROKEN = "def add(a, b):\n    breaks_the_judge()\n"


def _with_reference(case: Case) -> Case:
    return case.model_copy(update={"reference_solution": REFERENCE})


def _judged(case: Case, failures: int = 0) -> JudgeResult:
    return JudgeResult(
        failures=tuple(Failure(kind="assertion", message="wrong") for _ in range(failures)),
        checks_total=len(case.checks),
        checks_passed=len(case.checks) - failures,
        duration_s=0.0,
    )


def _unjudged(case: Case, message: str, kind: FailureKind = "crash") -> JudgeResult:
    return JudgeResult(
        failures=(),
        checks_total=len(case.checks),
        checks_passed=0,
        duration_s=0.0,
        infrastructure_error=message,
        owned_kind=kind,
    )


@dataclass
class _Double:
    """A judge whose outcome for each artifact is scripted: ``broken`` artifacts fail
    to be judged (``kind`` names the defect they would own), ``raises`` ones raise; a
    ``sick`` judge fails on every artifact. Counts what it was asked, and by whom."""

    kind: FailureKind = "timeout"
    broken: frozenset[str] = frozenset({BROKEN})
    raises: frozenset[str] = frozenset()
    sick: bool = False
    fresh_sick: bool = False
    offers_canary: bool = True
    generation: int = 0
    asked: list[tuple[int, str]] = field(default_factory=list)
    made: list[_Double] = field(default_factory=list)
    closed: bool = False

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        self.asked.append((self.generation, artifact))
        if artifact in self.raises:
            raise RuntimeError("the judge fell over")
        if self.sick or artifact in self.broken:
            return _unjudged(case, "the attempt's wall clock ran out", self.kind)
        return _judged(case, 2 if artifact == WRONG_ADD else 0)

    def fresh(self) -> _Double:
        twin = type(self)(
            self.kind,
            self.broken,
            self.raises,
            self.sick or self.fresh_sick,
            offers_canary=self.offers_canary,
            generation=self.generation + 1,
            asked=self.asked,
        )
        self.made.append(twin)
        return twin

    def canary(self) -> tuple[Case, str]:
        if not self.offers_canary:
            raise LookupError("no canary")
        return make_case(case_id="canary/add"), REFERENCE

    def close(self) -> None:
        self.closed = True


def test_a_healthy_control_makes_a_repeated_failure_the_answers_named_defect() -> None:
    double = _Double(kind="timeout")
    case = _with_reference(make_case())
    result = JudgeSet({"python": double})(case, BROKEN)
    assert result.infrastructure_error is None
    kinds = [failure.kind for failure in result.failures]
    # One defect of the named kind, and every check counted: never fewer than an
    # honest judgement of a wrong answer (here 2) could give.
    assert kinds == ["timeout", "not_run", "not_run", "not_run"]
    assert result.defects() == 4 > _judged(case, 2).defects()
    assert "reference solution" in result.failures[0].message
    assert [origin for origin in (f.origin for f in result.failures[1:])] == [
        "feedback",
        "heldout",
        "heldout",
    ]
    # Judged first, then again and the control on a fresh judge, which is closed after.
    assert double.asked == [(0, BROKEN), (1, BROKEN), (1, REFERENCE)]
    assert double.made and double.made[0].closed


def test_a_failing_control_excludes_the_unit_and_says_why() -> None:
    double = _Double(fresh_sick=True)
    case = _with_reference(make_case())
    result = JudgeSet({"python": double})(case, BROKEN)
    assert result.infrastructure_error == (
        "the attempt's wall clock ran out; the control (the case's reference solution) "
        "failed too: the attempt's wall clock ran out"
    )
    assert result.failures == () and result.defects() == 0


def test_a_control_that_is_judged_but_does_not_pass_excludes_the_unit() -> None:
    double = _Double()
    case = make_case().model_copy(update={"reference_solution": WRONG_ADD})
    result = JudgeSet({"python": double})(case, BROKEN)
    assert result.infrastructure_error and "did not pass" in result.infrastructure_error


def test_an_answer_judged_cleanly_the_second_time_keeps_that_judgement() -> None:
    class Flaky(_Double):
        def __call__(self, case: Case, artifact: str) -> JudgeResult:
            if self.generation == 0:
                return _unjudged(case, "the sandbox worker stopped answering")
            return super().__call__(case, artifact)

    result = JudgeSet({"python": Flaky(broken=frozenset())})(make_case(), WRONG_ADD)
    assert result.infrastructure_error is None and result.defects() == 2
    assert any("judged again alone" in note for note in result.notes)


def test_a_judge_that_raises_on_one_answer_makes_it_a_crash_of_that_answer() -> None:
    double = _Double(raises=frozenset({BROKEN}), broken=frozenset())
    result = JudgeSet({"python": double})(_with_reference(make_case()), BROKEN)
    assert result.infrastructure_error is None
    assert result.failures[0].kind == "crash"
    assert "RuntimeError: the judge fell over" in result.failures[0].message


def test_without_a_reference_the_judges_canary_is_the_control() -> None:
    double = _Double()
    result = JudgeSet({"python": double})(make_case(), BROKEN)
    assert result.infrastructure_error is None and result.failures[0].kind == "timeout"
    assert "canary" in result.failures[0].message
    sick = JudgeSet({"python": _Double(fresh_sick=True)})(make_case(), BROKEN)
    assert sick.infrastructure_error and "canary" in sick.infrastructure_error


def test_without_reference_or_canary_an_answer_judged_cleanly_before_is_the_control() -> None:
    double = _Double(offers_canary=False)
    judges = JudgeSet({"python": double})
    assert judges(make_case(), WRONG_ADD).defects() == 2  # judged cleanly: remembered
    result = judges(make_case(), BROKEN)
    assert result.infrastructure_error is None and result.failures[0].kind == "timeout"
    assert (1, WRONG_ADD) in double.asked  # the known answer, judged again, as the control
    # With nothing of known outcome at all, nothing proves the answer caused it.
    lone = JudgeSet({"python": _Double(offers_canary=False)})(make_case(), BROKEN)
    assert lone.infrastructure_error and "no control" in lone.infrastructure_error


def test_a_registered_judge_without_hooks_goes_through_the_same_door() -> None:
    calls: list[str] = []

    def plain(case: Case, artifact: str) -> JudgeResult:
        calls.append(artifact)
        if artifact == BROKEN:
            raise ValueError("cannot read this answer")
        return _judged(case)

    case = _with_reference(make_case()).model_copy(update={"judge": "plain"})
    result = JudgeSet({"plain": plain})(case, BROKEN)
    assert result.infrastructure_error is None and result.failures[0].kind == "crash"
    assert calls == [BROKEN, BROKEN, REFERENCE]


def test_an_owned_result_hook_counts_the_judges_own_maximum() -> None:
    class Counting(_Double):
        def owned_result(
            self, case: Case, artifact: str, kind: FailureKind, message: str
        ) -> JudgeResult:
            failures = [Failure(kind="sql", code=kind, message=message)] * 11
            return JudgeResult(tuple(failures), len(case.checks), 0, 0.0)

    result = JudgeSet({"python": Counting()})(_with_reference(make_case()), BROKEN)
    assert result.defects() == 11 and result.failures[0].code == "timeout"


def test_a_proof_runs_alone_no_other_judgement_beside_it() -> None:
    inside = threading.Event()
    release = threading.Event()
    overlapping: list[str] = []

    class Slow(_Double):
        def __call__(self, case: Case, artifact: str) -> JudgeResult:
            if self.generation == 1 and artifact == BROKEN:
                inside.set()
                release.wait(5)
            elif inside.is_set() and not release.is_set():
                overlapping.append(artifact)
            return super().__call__(case, artifact)

    judges = JudgeSet({"python": Slow()})
    case = _with_reference(make_case())
    proof = threading.Thread(target=judges, args=(case, BROKEN))
    proof.start()
    assert inside.wait(5)
    other = threading.Thread(target=judges, args=(case, WRONG_ADD))
    other.start()
    other.join(0.3)  # it waits for the proof rather than running beside it
    waited = other.is_alive()
    release.set()
    proof.join(5)
    other.join(5)
    assert waited and overlapping == []


def test_a_judge_that_cannot_be_loaded_is_excluded_without_a_proof() -> None:
    case = make_case().model_copy(update={"judge": "no-such-judge"})
    result = JudgeSet()(case, GOOD_ADD)
    assert result.infrastructure_error and "no-such-judge" in result.infrastructure_error


def test_checks_of_the_case_are_all_counted_even_without_feedback() -> None:
    case = Case(
        id="t/one",
        prompt="p",
        entry_point="add",
        checks=(Check(source="assert add(1, 1) == 2", origin="heldout"),),
        reference_solution=REFERENCE,
    )
    result = JudgeSet({"python": _Double()})(case, BROKEN)
    assert result.defects() == 2 and result.checks_passed == 0
