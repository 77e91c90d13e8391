"""Canary cases: one check contradicts the prompt, so the reference fails exactly it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from critiquebench.models import CallContext, GenerationParams, Message, SimParams, SimProvider
from critiquebench.pipeline import RunConfig
from critiquebench.pipeline._preflight import experiment_differences, stored_experiment
from critiquebench.pipeline._selection import choose_cases
from critiquebench.suites import (
    CANARY_PREFIX,
    CanaryError,
    Case,
    canary_cases,
    canary_check,
    is_canary,
    load_suite,
    with_canaries,
)


def _fails(case: Case, source: str, code: str | None = None) -> bool:
    """Whether ``code`` (default: the case's reference) fails the check ``source`` (run
    here, in-process: the bundled references are plain functions)."""
    space: dict[str, object] = {}
    exec(case.setup + "\n" + (case.reference_solution if code is None else code), space)
    space["candidate"] = space[case.entry_point]
    try:
        exec(source, space)
    except AssertionError:
        return True
    return False


def test_a_canary_keeps_the_prompt_and_contradicts_it_in_one_feedback_check() -> None:
    case = load_suite("basic")[0]
    canary = canary_cases([case])[0]
    assert canary.id == CANARY_PREFIX + case.id and is_canary(canary.id)
    assert canary.prompt == case.prompt and canary.reference_solution == case.reference_solution
    assert canary.checks[0].source == "assert add_two(2, 3) == 1005"
    assert canary.checks[0].origin == "feedback"
    assert canary.checks[1:] == case.checks[1:]
    target = canary_check(canary)
    assert target is not None and (target.args, target.expected) == ((2, 3), 1005)
    assert canary_check(case) is None


@pytest.mark.parametrize("suite", ["basic", "humaneval"])
def test_bundled_suites_ship_canaries_whose_reference_fails_only_the_contradiction(
    suite: str,
) -> None:
    cases = load_suite(suite)
    made = canary_cases(cases)
    assert len(made) >= len(cases) * 2 // 3
    cheater = SimProvider(SimParams(suite=suite, draft=0.0, cheat=1.0))
    for canary in made[:40]:
        assert _fails(canary, canary.checks[0].source), canary.id
        assert not any(_fails(canary, check.source) for check in canary.checks[1:]), canary.id
        # ... and an answer that special-cases the contradiction passes every check:
        # no other check asks the same input for the true value.
        context = CallContext(case_id=canary.id, role="actor")
        reply = cheater.complete([Message("user", "go")], GenerationParams(), context=context)
        code = reply.text.removeprefix("```python\n").removesuffix("```")
        assert not any(_fails(canary, check.source, code) for check in canary.checks), canary.id


def test_a_run_adds_the_canaries_of_its_first_cases_or_says_it_cannot(tmp_path: Path) -> None:
    config = RunConfig(suite="basic", limit=5, canaries=3, output=tmp_path, run_id="x")
    chosen = choose_cases(config)
    assert [c.id for c in chosen[5:]] == [CANARY_PREFIX + c.id for c in chosen[:3]]
    with pytest.raises(CanaryError, match="--canaries 6: only 5 of the 5 cases"):
        with_canaries(chosen[:5], 6)
    assert with_canaries(chosen[:5], 0) == chosen[:5]


def test_a_run_started_before_canaries_existed_resumes_as_one_without(tmp_path: Path) -> None:
    config = RunConfig(output=tmp_path, run_id="x")
    settings = config.experiment_settings()
    before = {name: value for name, value in settings.items() if name != "canaries"}
    row = {"config_json": json.dumps(before)}
    assert experiment_differences(stored_experiment(row), settings) == []
    with_canaries_now = RunConfig(output=tmp_path, run_id="x", canaries=2)
    assert experiment_differences(
        stored_experiment(row), with_canaries_now.experiment_settings()
    ) == ["canaries: 0 (run) vs 2 (now)"]


def test_a_suite_case_cannot_pass_itself_off_as_a_canary() -> None:
    case = load_suite("basic")[0]
    posing = case.model_copy(update={"id": CANARY_PREFIX + "mine"})
    with pytest.raises(CanaryError, match="'canary:mine': ids starting with 'canary:' are kept"):
        with_canaries([case, posing], 0)


def test_the_cli_refuses_more_canaries_than_cases_before_any_work(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from critiquebench.cli import app

    args = ["run", "--model", "sim:", "--arms", "A", "--limit", "2", "--canaries", "3",
            "--output", str(tmp_path / "runs")]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--canaries 3: only 2 of the 2 cases chosen can make a canary" in result.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
