"""Planted effects through the real loop, store and report: the sim's fix and break
rates per round, and the test-fed loop against resampling at its tokens.

The sim's answers are judged by a judge that reads the sim's own marks (a wrong
answer fails every check, a broken one has a syntax error too), so a run of hundreds
of units takes seconds; the Python judge's scoring of the same answers is tested in
``test_selftest.py``.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from critiquebench.analysis import RunReport, build_report, connect
from critiquebench.judges import Failure, JudgeResult
from critiquebench.loop import LoopDependencies
from critiquebench.models import (
    SimParams,
    SimProvider,
    draft_state,
    true_resample_reduction,
    unit_states,
)
from critiquebench.pipeline import ResultStore, RunConfig, execute_unit, finish_run, start_run
from critiquebench.suites import Case, load_suite

RETRY_LIMIT = 3


def sim_judge(case: Case, artifact: str) -> JudgeResult:
    """Every check fails for a wrong answer, plus a syntax error for a broken one."""
    n = len(case.checks)
    if "_sim_wrong" not in artifact:
        return JudgeResult(failures=(), checks_total=n, checks_passed=n, duration_s=0.0)
    failures = [
        Failure(kind="assertion", message="wrong", origin=check.origin) for check in case.checks
    ]
    if f"def {case.entry_point}(:" in artifact:
        failures.append(Failure(kind="syntax", message="broken"))
    return JudgeResult(failures=tuple(failures), checks_total=n, checks_passed=0, duration_s=0.0)


def _run(tmp_path: Path, params: SimParams, arms: tuple[str, ...], reps: int) -> RunReport:
    config = RunConfig(
        suite="basic", arms=arms, reps=reps, model=params.spec, cache=False,
        retry_limit=RETRY_LIMIT, output=tmp_path / "runs", run_id="planted",
    )  # fmt: skip
    deps = LoopDependencies(provider=SimProvider(params), judge=sim_judge)
    plan = start_run(config)
    store = ResultStore(config.output)
    for case, unit in plan.work:
        store.write_unit(config.run_id, unit, execute_unit(case, unit, deps, config))
    assert finish_run(plan, failed=0).status == "completed"
    return build_report(connect(config.output), config.run_id, resamples=2_000)


def _within(rate: float, truth: float, n: int) -> bool:
    """``rate`` of ``n`` draws is within four standard errors of ``truth``."""
    return abs(rate - truth) <= 4 * math.sqrt(truth * (1 - truth) / n)


def test_fix_and_break_rates_per_round_recover_the_planted_ones(tmp_path: Path) -> None:
    # Without heterogeneity every fix round fixes a failing answer with `fix` and breaks a
    # passing one with `regress`; the critic nags on every answer, so arm C runs all
    # three rounds on every unit, passing answers included.
    params = SimParams(draft=0.5, fix=0.4, regress=0.3, het=0.0, noise=0.0, nag=1.0, seed=5)
    report = _run(tmp_path, params, ("C",), reps=3)
    expected: dict[int, list[int]] = {r: [0, 0, 0, 0] for r in range(1, RETRY_LIMIT + 1)}
    for case in load_suite("basic"):
        for rep in range(3):
            states = unit_states(params, case.id, rep, RETRY_LIMIT + 1)
            for r in range(1, RETRY_LIMIT + 1):
                was, now = states[r - 1] == "correct", states[r] == "correct"
                counts = expected[r]
                counts[0 if not was else 2] += 1
                counts[1 if not was else 3] += (not was and now) or (was and not now)
    rounds = [x for x in report.fix_break if x.arm == "C"]
    assert [(x.round, x.failing, x.fixed, x.passing, x.broken) for x in rounds] == [
        (r, *counts) for r, counts in expected.items()
    ]
    failing = sum(x.failing for x in rounds)
    passing = sum(x.passing for x in rounds)
    assert failing > 100 and passing > 100
    assert _within(sum(x.fixed for x in rounds) / failing, params.fix, failing)
    assert _within(sum(x.broken for x in rounds) / passing, params.regress, passing)


def test_the_loop_against_resampling_at_its_tokens_recovers_the_planted_difference(
    tmp_path: Path,
) -> None:
    # Every call costs 200 tokens, so R matched to B on a unit draws as many drafts as B
    # made calls: its first draft (B's too) and then fresh ones, each buggy with the
    # first draft's probability, where B fixes with `fix` per round.
    params = SimParams(
        draft=0.7, fix=0.5, het=0.5, noise=0.1, regress=0.1, seed=2, tokens=100,
        prompt_tokens=100,
    )  # fmt: skip
    reps = 4
    report = _run(tmp_path, params, ("A", "B", "R"), reps=reps)
    sum_b = sum_r = 0
    for case in load_suite("basic"):
        wrong = len(case.checks)
        for rep in range(reps):
            states = unit_states(params, case.id, rep, RETRY_LIMIT + 1)
            fixed_at = next((r for r, s in enumerate(states) if s == "correct"), None)
            calls = RETRY_LIMIT + 1 if fixed_at is None else fixed_at + 1
            draws = [draft_state(params, case.id, rep, k) for k in range(calls)]
            sum_b += 0 if fixed_at is not None else wrong
            sum_r += 0 if "correct" in draws else wrong
    against = {c.arm: c for c in report.against_resample}
    b = against["B"]
    assert b.n_pairs == 44 * reps and b.short == 0
    assert b.reduction.estimate == pytest.approx(1 - sum_b / sum_r)
    assert b.mean_tokens_resample <= b.mean_tokens
    truth = true_resample_reduction(params, RETRY_LIMIT)
    assert 0.2 < truth < 0.9  # a real, non-trivial planted difference
    assert b.reduction.low is not None and b.reduction.high is not None
    assert b.reduction.low <= truth <= b.reduction.high
    # R at A's tokens is A's own draft: no difference at all.
    assert against["A"].reduction.estimate == 0.0
    # R's own row spends what it needs, and is reported like any arm.
    assert {s.arm for s in report.arms} == {"A", "B", "R"}


def test_resampled_drafts_follow_the_first_drafts_planted_rate() -> None:
    params = SimParams(draft=0.3, het=0.0, noise=0.0, seed=9)
    draws = [draft_state(params, f"c{i}", 0, k) for i in range(400) for k in range(1, 6)]
    buggy = sum(state == "buggy" for state in draws)
    assert _within(buggy / len(draws), 0.3, len(draws))
    # Draw 0 is every arm's first draft; the others are new samples.
    first = [draft_state(params, f"c{i}", 0, 0) for i in range(50)]
    assert first == [unit_states(params, f"c{i}", 0, 1)[0] for i in range(50)]
    assert dataclasses.replace(params, nag=0.5).spec.endswith(",nag=0.5")
    assert "nag" not in params.spec and "prompt_tokens" not in params.spec


def test_critic_recall_and_false_alarms_recover_the_planted_rates(tmp_path: Path) -> None:
    # The sim's critic flags a wrong answer with `recall` and a right one with
    # `false_alarm`; the report measures both against the judge on first drafts.
    params = SimParams(draft=0.6, het=0.0, noise=0.0, recall=0.7, false_alarm=0.2, seed=9)
    report = _run(tmp_path, params, ("A", "C"), reps=3)
    (critic,) = report.critic_accuracy
    assert critic.arm == "C"  # arm A has no critic, so no row
    drafts = [
        draft_state(params, case.id, rep, 0) for case in load_suite("basic") for rep in range(3)
    ]
    assert critic.wrong_drafts == sum(state != "correct" for state in drafts)
    assert critic.right_drafts == sum(state == "correct" for state in drafts)
    assert critic.recall_low <= 0.7 <= critic.recall_high
    assert critic.false_alarm_low <= 0.2 <= critic.false_alarm_high
    # The rates differ, so the intervals tell a recall from a false alarm.
    assert critic.false_alarm_high < critic.recall_low
    assert report.to_json().count('"false_alarms"') == 1
