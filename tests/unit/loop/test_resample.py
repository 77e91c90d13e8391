"""The resampling arm R: fresh, independent drafts judged by the feedback checks, the
best kept, until one is clean or the budget is spent; declared once in the registry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import Failure, JudgeResult
from critiquebench.loop import (
    BUILTIN_ARMS,
    RESAMPLE,
    ArmSpec,
    LoopDependencies,
    LoopSettings,
    build_graph,
    draw_seed,
    max_draws,
    run_loop,
    sampling_seed,
)
from critiquebench.models import (
    CachingProvider,
    CallCache,
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ScriptedProvider,
    cache_key,
)
from critiquebench.quality import check_run
from critiquebench.suites import Case
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case, run_sim_matrix

CASE = make_case()


def judge(case: Case, artifact: str) -> JudgeResult:
    """Clean for the right ``add``, every check failed otherwise; no sandbox needed."""
    n = len(case.checks)
    if artifact.strip() == GOOD_ADD:
        return JudgeResult(failures=(), checks_total=n, checks_passed=n, duration_s=0.0)
    failures = tuple(Failure(kind="assertion", message="no", origin=c.origin) for c in case.checks)
    return JudgeResult(failures=failures, checks_total=n, checks_passed=0, duration_s=0.0)


class Recorder:
    """A provider that answers from a script and keeps each call's seed and context."""

    def __init__(self, answers: Sequence[str]) -> None:
        self.inner = ScriptedProvider(answers)
        self.seen: list[tuple[int, CallContext | None, list[Message]]] = []

    @property
    def model_name(self) -> str:
        return "recorder"

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        self.seen.append((params.seed, context, list(messages)))
        return self.inner.complete(messages, params, schema, context)


def _settings(**values: Any) -> LoopSettings:
    return LoopSettings(arm=RESAMPLE, **values)


def test_r_is_declared_once_as_fresh_drafts_without_a_fixer() -> None:
    spec = BUILTIN_ARMS[RESAMPLE]
    assert spec.resamples and not spec.fixes and not spec.runs_graph
    assert spec.roles == ("actor",)
    assert spec.nodes == ("sample", "judge", "escalate")
    assert set(spec.halts) == {"visible_clean", "draw_limit", "token_budget", "error"}
    assert not spec.loops_bounded  # its extra drafts follow the budget, not retry_limit
    with pytest.raises(ValueError, match="takes no critic"):
        ArmSpec(name="X", description="x", feedback=frozenset({"critic"}), resamples=True)
    with pytest.raises(ValueError, match="not a graph's loop"):
        build_graph(LoopDependencies(ScriptedProvider(), judge), _settings())


def test_drafts_until_one_is_clean_and_keeps_it() -> None:
    provider = Recorder([fenced(WRONG_ADD), fenced(WRONG_ADD), fenced(GOOD_ADD), "unused"])
    outcome = run_loop(CASE, LoopDependencies(provider, judge), _settings(), rep=2)
    assert outcome.halt == "visible_clean" and not outcome.escalated
    assert [a.defects for a in outcome.attempts] == [3, 3, 0]
    assert outcome.final.iteration == 2 and outcome.retry_count == 2
    assert [c.role for c in outcome.calls] == ["actor"] * 3
    # Every draw is the first-draft prompt again: no fix prompt, no earlier answer in it.
    prompts = [messages for _, _, messages in provider.seen]
    assert prompts[0] == prompts[1] == prompts[2]
    contexts = [context for _, _, context in [(s, c, c) for s, c, _ in provider.seen]]
    assert [(c.attempt, c.rep, c.role) for c in contexts if c] == [
        (0, 2, "actor"), (1, 2, "actor"), (2, 2, "actor")
    ]  # fmt: skip


def test_draws_are_distinct_samples_the_cache_keeps_apart_and_reruns_find(
    tmp_path: Path,
) -> None:
    seeds = [draw_seed(CASE.id, 0, k) for k in range(6)]
    assert seeds[0] == sampling_seed(CASE.id, 0, 0)  # R's first draft is A's and B's
    assert len(set(seeds)) == 6
    assert draw_seed(CASE.id, 1, 1) != seeds[1]  # and reps differ
    ask = [Message("user", "same prompt")]
    keys = {cache_key("m", ask, GenerationParams(seed=s), None, 0) for s in seeds}
    assert len(keys) == 6

    answers = [fenced(WRONG_ADD), fenced(WRONG_ADD), fenced(GOOD_ADD)]
    cache = CallCache(tmp_path / "calls.sqlite")
    first = run_loop(
        CASE, LoopDependencies(CachingProvider(ScriptedProvider(answers), cache), judge),
        _settings(),
    )  # fmt: skip
    # A rerun is answered from the cache, draw by draw: the script is empty now.
    again = run_loop(
        CASE, LoopDependencies(CachingProvider(ScriptedProvider([]), cache), judge), _settings()
    )
    assert [c.cached for c in first.calls] == [False, False, False]
    assert [c.cached for c in again.calls] == [True, True, True]
    assert [a.artifact for a in again.attempts] == [a.artifact for a in first.attempts]
    assert (again.tokens_in, again.tokens_out) == (first.tokens_in, first.tokens_out)


def test_stops_once_its_tokens_exceed_the_budget_keeping_the_best_so_far() -> None:
    provider = ScriptedProvider([fenced(WRONG_ADD)] * 10)
    deps = LoopDependencies(provider, judge)
    one = run_loop(CASE, deps, _settings(token_budget=None, retry_limit=1), rep=0)
    per_draw = one.tokens_in + one.tokens_out
    assert len(one.attempts) == max_draws(_settings(retry_limit=1)) == 8
    assert one.halt == "draw_limit" and one.escalated
    assert one.escalation is not None and "draw_limit" in one.escalation.summary[1]
    per_draw //= len(one.attempts)
    capped = run_loop(
        CASE, LoopDependencies(ScriptedProvider([fenced(WRONG_ADD)] * 10), judge),
        _settings(token_budget=2 * per_draw),
    )  # fmt: skip
    assert capped.halt == "token_budget" and len(capped.attempts) == 3
    assert capped.final.iteration == 2  # all equal: the latest kept, as a loop keeps it


def test_a_judge_or_provider_failure_is_the_units_error_never_a_defect() -> None:
    def broken(case: Case, artifact: str) -> JudgeResult:
        return JudgeResult((), 3, 0, 0.0, infrastructure_error="sandbox did not start")

    failed = run_loop(CASE, LoopDependencies(ScriptedProvider(["x"]), broken), _settings())
    assert failed.halt == "error" and failed.error == "infrastructure: judge: sandbox did not start"
    silent = run_loop(CASE, LoopDependencies(ScriptedProvider([]), judge), _settings())
    assert silent.halt == "error" and (silent.error or "").startswith("provider: actor")


def test_r_runs_through_the_pipeline_and_passes_the_quality_checks(tmp_path: Path) -> None:
    config = run_sim_matrix(tmp_path, RESAMPLE, limit=2)
    report = check_run(config.output, config.run_id)
    assert report.passed, [r for r in report.results if not r.success]
