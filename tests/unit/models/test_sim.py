"""The simulated model: spec parsing, determinism, real code, and its planted truth."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from critiquebench.judges import PythonJudge
from critiquebench.models import (
    CallContext,
    GenerationParams,
    Message,
    ModelError,
    SimParams,
    SimProvider,
    SimSpecError,
    provider_from_spec,
    true_reduction,
    unit_states,
)
from critiquebench.models._sim import sim_code
from critiquebench.suites import CANARY_PREFIX, canary_cases, load_suite

_ASK = [Message("user", "write it")]


def _answer(
    provider: SimProvider, case_id: str, rep: int, attempt: int, role: str = "actor"
) -> str:
    context = CallContext(case_id=case_id, rep=rep, attempt=attempt, role=role)  # type: ignore[arg-type]
    return provider.complete(_ASK, GenerationParams(), context=context).text


def test_spec_parses_every_setting_and_names_the_model_canonically() -> None:
    provider = provider_from_spec("sim:fix=0.6,het=0.5,noise=0.1,regress=0.05,tokens=200,seed=3")
    assert isinstance(provider, SimProvider)
    assert provider.params == SimParams(fix=0.6, het=0.5, noise=0.1, regress=0.05, seed=3)
    assert provider.model_name.startswith("sim:draft=0.7,fix=0.6,het=0.5,noise=0.1,")
    assert SimParams.parse(provider.params.spec.removeprefix("sim:")) == provider.params
    assert isinstance(provider_from_spec("sim"), SimProvider)


@pytest.mark.parametrize(
    ("argument", "message"),
    [("fix=2", "fix must be in"), ("bogus=1", "key one of"), ("fix=high", "not a float"),
     ("het", "key=value"), ("tokens=-1", "tokens must be")],
)  # fmt: skip
def test_bad_specs_say_which_setting(argument: str, message: str) -> None:
    with pytest.raises(SimSpecError, match=message):
        SimParams.parse(argument)


def test_answers_are_deterministic_equal_across_arms_and_differ_across_reps() -> None:
    provider = SimProvider(SimParams(draft=0.5, het=0.0, noise=0.0, seed=1))
    case = "basic/001_add_two"
    assert _answer(provider, case, 0, 0) == _answer(SimProvider(provider.params), case, 0, 0)
    drafts = {_answer(provider, case, rep, 0) for rep in range(30)}
    assert len(drafts) == 2  # correct and buggy both occur across reps
    assert _answer(provider, case, 0, 1) != _answer(provider, case, 0, 2)  # tagged per attempt
    assert _answer(provider, case, 0, 0, role="critic") == "NO_DEFECTS"


def test_the_real_judge_scores_correct_buggy_and_broken_answers() -> None:
    judge = PythonJudge()
    for case in load_suite("basic", limit=6):
        scores = [
            judge(case, sim_code(case.reference_solution, case.entry_point, state, 1)).defects()
            for state in ("correct", "buggy", "broken")
        ]
        assert scores[0] == 0, case.id
        assert 0 < scores[1] < scores[2], (case.id, scores)


def test_unknown_case_or_missing_context_is_a_model_error() -> None:
    provider = SimProvider(SimParams())
    with pytest.raises(ModelError, match="no reference_solution"):
        _answer(provider, "nope/1", 0, 0)
    with pytest.raises(ModelError, match="case id"):
        provider.complete(_ASK, GenerationParams())


def test_states_follow_the_planted_probabilities() -> None:
    # No heterogeneity: draft buggy with 0.7, fixed per round with 0.6, never regressing.
    params = SimParams(draft=0.7, fix=0.6, het=0.0, noise=0.0, regress=0.0, seed=5)
    chains = [unit_states(params, f"c{i}", rep, 3) for i in range(400) for rep in range(5)]
    first_buggy = np.mean([chain[0] == "buggy" for chain in chains])
    still_buggy = np.mean([chain[2] == "buggy" for chain in chains])
    assert first_buggy == pytest.approx(0.7, abs=0.03)
    assert still_buggy == pytest.approx(0.7 * 0.4**2, abs=0.03)
    assert true_reduction(params, 2) == pytest.approx(1 - 0.4**2)


def test_true_reduction_matches_a_monte_carlo_of_the_generative_model() -> None:
    params = SimParams(draft=0.6, fix=0.5, het=1.2, noise=0.4)
    rng = np.random.default_rng(0)
    effect = rng.normal(0, 1.2, 400_000) + rng.normal(0, 0.4, 400_000)
    buggy = 1 / (1 + np.exp(-(np.log(0.6 / 0.4) + effect)))
    fix = 1 / (1 + np.exp(-(0.0 - effect)))
    monte_carlo = 1 - np.mean(buggy * (1 - fix) ** 3) / np.mean(buggy)
    assert true_reduction(params, 3) == pytest.approx(monte_carlo, abs=0.003)
    # Heterogeneity matters: hard cases are buggier and harder to fix.
    assert true_reduction(params, 3) < true_reduction(dataclasses.replace(params, het=0.0), 3)


def _critic_flags(provider: SimProvider, case_id: str, rep: int, attempt: int) -> bool:
    return _answer(provider, case_id, rep, attempt, role="critic") != "NO_DEFECTS"


def test_the_critic_flags_wrong_and_right_answers_at_the_planted_rates() -> None:
    params = SimParams(draft=0.5, fix=0.5, het=0.0, noise=0.0, recall=0.8, false_alarm=0.1)
    provider = SimProvider(params)
    counts = {True: [0, 0], False: [0, 0]}  # wrong?: [flagged, reviews]
    for case in load_suite("basic"):
        for rep in range(10):
            for attempt in range(3):
                wrong = unit_states(params, case.id, rep, attempt + 1)[-1] != "correct"
                counts[wrong][0] += _critic_flags(provider, case.id, rep, attempt)
                counts[wrong][1] += 1
    for wrong, planted in ((True, 0.8), (False, 0.1)):
        flagged, reviews = counts[wrong]
        assert reviews > 300
        assert abs(flagged / reviews - planted) < 4 * (planted * (1 - planted) / reviews) ** 0.5


def test_without_critic_settings_the_critic_never_flags_and_nag_is_both_rates() -> None:
    case = "basic/001_add_two"
    silent = SimProvider(SimParams(draft=0.5))
    assert not any(_critic_flags(silent, case, rep, 0) for rep in range(40))
    # nag=q flags the same reviews as recall=q,false_alarm=q: one draw per review.
    nag = SimProvider(SimParams(draft=0.5, nag=0.4))
    both = SimProvider(SimParams(draft=0.5, recall=0.4, false_alarm=0.4))
    reviews = [(rep, attempt) for rep in range(40) for attempt in range(3)]
    assert [_critic_flags(nag, case, r, a) for r, a in reviews] == [
        _critic_flags(both, case, r, a) for r, a in reviews
    ]
    with pytest.raises(SimSpecError, match="nag and recall/false_alarm contradict"):
        SimParams.parse("nag=0.4,recall=0.5")
    with pytest.raises(SimSpecError, match="false_alarm must be in"):
        SimParams.parse("false_alarm=1.5")
    # Unset, the new settings stay out of the spec (older caches keep their keys).
    assert "recall" not in SimParams().spec and "recall=0.5" in SimParams(recall=0.5).spec


def test_the_suite_is_read_when_the_model_is_built_not_by_its_first_call(
    tmp_path: Path,
) -> None:
    # A run builds its model while it starts: a suite it cannot read fails the start,
    # not every unit, and no unit waits for the suite to load.
    with pytest.raises(FileNotFoundError, match="neither a bundled suite"):
        SimProvider(SimParams(suite=str(tmp_path / "missing.jsonl")))


def test_a_canary_is_answered_from_the_case_it_was_made_from() -> None:
    canary = canary_cases(load_suite("basic"))[0]
    provider = SimProvider(SimParams(draft=0.0, suite="basic"))
    source = canary.id.removeprefix(CANARY_PREFIX)
    assert _answer(provider, canary.id, 0, 0) == _answer(provider, source, 0, 0)
    with pytest.raises(ModelError, match="has no reference_solution"):
        _answer(provider, CANARY_PREFIX + "no-such-case", 0, 0)
