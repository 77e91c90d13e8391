"""The trigger judge: did the model use a skill exactly where its description says?

A case holds a skill's description and one user query, labelled ``trigger`` (the
skill must be used), ``near_miss`` (close to the description, but a different job:
it must not be used) or ``clear_miss`` (unrelated). The artifact is the model's
normalised decision (see :mod:`critiquebench.judges.trigger._decision`); a wrong or missing
decision is one defect.

The case's one check carries the label, so a failing check tells the fixer the
answer. Bundled cases therefore hold it out (``heldout_checks``): arm B's fixer is
told nothing (its loop stops after the first draft, like arm A) unless a run shows
held-out checks (``--feedback all``); the critic arms review the decision without
the label. The judge only compares strings: nothing is executed, so no sandbox.
"""

from __future__ import annotations

import time
from typing import Any

from critiquebench.judges._case import Case
from critiquebench.judges._failure import Failure, JudgeResult
from critiquebench.judges.trigger._decision import (
    DECISION_WORDS,
    TRIGGER_FORMAT,
    Decision,
    expected_decision,
    parse_decision,
)

EXPECTS = ("trigger", "near_miss", "clear_miss")
"""A query's label: the skill must trigger; a near miss; a clear miss."""

DATA_KEYS = ("skill", "description", "query", "expect")
"""The keys of a trigger case's ``judge_data``, all required."""

_MESSAGES = {
    "false_trigger": "the skill was used for a query it must not handle",
    "missed_trigger": "the skill was not used for a query its description covers",
    "no_decision": "the reply holds no decision: answer TRIGGER or NO_TRIGGER",
}
_MISS_NOTES = {
    "near_miss": " (a near miss: close to the description, but a different job)",
    "clear_miss": " (a clear miss: unrelated to the description)",
}


def _data_problems(data: dict[str, Any]) -> list[str]:
    problems = [
        f"judge_data: add {key!r} (a non-empty string)"
        for key in DATA_KEYS
        if not isinstance(data.get(key), str) or not data[key].strip()
    ]
    problems += [
        f"judge_data: remove unknown key {key!r} (keys are {', '.join(DATA_KEYS)})"
        for key in data
        if key not in DATA_KEYS
    ]
    expect = data.get("expect")
    if isinstance(expect, str) and expect.strip() and expect not in EXPECTS:
        problems.append(f"judge_data: set 'expect' to one of {', '.join(EXPECTS)} (not {expect!r})")
    return problems


def _text_problems(case: Case) -> list[str]:
    problems = []
    for key in ("description", "query"):
        value = case.judge_data.get(key)
        if isinstance(value, str) and value.strip() and value.strip() not in case.prompt:
            problems.append(
                f"prompt: include the judge_data {key} word for word (the loop sees only "
                "the prompt)"
            )
    reference = case.reference_solution.strip()
    if reference:
        decision = parse_decision(reference)
        right = expected_decision(case)
        if reference.lower() not in DECISION_WORDS or (right and decision != right):
            problems.append(
                f"reference_solution: set it to {right or 'trigger or no_trigger'!r} "
                f"(not {reference!r}; expect is {case.judge_data.get('expect')!r})"
            )
    return problems


def _check_problems(case: Case) -> list[str]:
    if len(case.checks) != 1:
        return [
            f"give exactly one check, not {len(case.checks)}: the decision, e.g. "
            '"heldout_checks": [{"name": "decision"}]'
        ]
    extra = sorted(case.checks[0].spec)
    if extra:
        return [f"check {case.checks[0].source!r}: remove its parameters {extra} (it takes none)"]
    return []


class TriggerJudge:
    """Counts the defects of a trigger decision: 0, or 1 wrong or missing decision."""

    artifact_format = TRIGGER_FORMAT

    @staticmethod
    def case_problems(case: Case) -> list[str]:
        """What is wrong with a trigger case, each problem phrased as a fix."""
        if not isinstance(case.judge_data, dict):
            return ["judge_data: give an object with " + ", ".join(DATA_KEYS)]
        problems = _data_problems(case.judge_data) + _check_problems(case)
        if not problems:
            problems = _text_problems(case)
        return problems

    def __call__(self, case: Case, artifact: str) -> JudgeResult:
        """Judge one decision; never raises (a bad case is an infrastructure error)."""
        start = time.perf_counter()
        try:
            problems = self.case_problems(case)
            if problems:
                return JudgeResult(
                    (), 1, 0, time.perf_counter() - start,
                    infrastructure_error=f"trigger case {case.id}: " + "; ".join(problems),
                )  # fmt: skip
            failures = _judge(case, artifact)
        except Exception as exc:  # the judge's own bug must not stop a run
            return JudgeResult(
                (), 1, 0, time.perf_counter() - start,
                infrastructure_error=f"trigger judge failed on {case.id}: {exc!r}",
            )  # fmt: skip
        return JudgeResult(failures, 1, 1 - len(failures), time.perf_counter() - start)


def _decision_of(artifact: str) -> Decision:
    """The normalised decision; a user's own loop may hand over a raw reply instead."""
    given = artifact.strip().lower()
    if given == "trigger":
        return "trigger"
    if given == "no_trigger":
        return "no_trigger"
    return parse_decision(artifact)


def _judge(case: Case, artifact: str) -> tuple[Failure, ...]:
    """The failure of a wrong or missing decision, if any."""
    right, decision = expected_decision(case), _decision_of(artifact)
    if decision == right:
        return ()
    expect = case.judge_data["expect"]
    if not decision:
        code = "no_decision"
    else:
        code = "missed_trigger" if right == "trigger" else "false_trigger"
    message = _MESSAGES[code]
    if code == "false_trigger":
        message += _MISS_NOTES.get(expect, "")
    check = case.checks[0]
    return (
        Failure(
            kind="trigger",
            code=code,
            message=message,
            source=check.source,
            origin=check.origin,
            expected=right,
            actual=decision,
            file=case.judge_data["skill"],
            line=check.line,
        ),
    )
