"""The arm registry: each arm declared once, read by the graph, the config and the checks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import ValidationError

from critiquebench.critics import CRITIC_SYSTEM, REVIEWER_SYSTEM, Critic, CriticSettings
from critiquebench.judges import PythonJudge
from critiquebench.loop import (
    BUILTIN_ARMS,
    ArmError,
    ArmSpec,
    LoopDependencies,
    LoopSettings,
    build_graph,
    resolve_arm,
    run_loop,
)
from critiquebench.models import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ScriptedProvider,
)
from critiquebench.pipeline import RunConfig, Unit, execute_unit, preflight
from critiquebench.pipeline._preflight import experiment_differences, stored_experiment
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case

CASE = make_case()
BROKEN_ADD = "def add(a, b)\n    return a + b"  # a syntax error: the code does not run
CRITIQUE = json.dumps({"verdict": "fail", "issues": ["line 1: check it"], "summary": "s"})


def test_builtin_arms_are_wired_from_their_feedback_sources() -> None:
    wiring = {name: spec.nodes for name, spec in BUILTIN_ARMS.items()}
    assert wiring == {
        "A": ("generate", "judge", "escalate"),
        "B": ("generate", "judge", "fix", "escalate"),
        "C": ("generate", "judge", "critique", "fix", "escalate"),
        "D": ("generate", "judge", "critique", "fix", "escalate"),
        "E": ("generate", "judge", "critique", "fix", "escalate"),
        "R": ("sample", "judge", "escalate"),  # no graph: loop/_resample.py
    }
    roles = {name: spec.roles for name, spec in BUILTIN_ARMS.items()}
    assert roles["A"] == ("actor",)
    assert roles["C"] == ("actor", "fixer", "critic")
    assert roles["D"] == ("actor", "fixer", "critic", "reviewer")
    assert [name for name, spec in BUILTIN_ARMS.items() if spec.run_errors] == ["B", "E", "R"]
    c_halts = BUILTIN_ARMS["C"].halts
    assert c_halts[0] == "critic_ok" and "visible_clean" not in c_halts


@pytest.mark.parametrize("name", [name for name, spec in BUILTIN_ARMS.items() if spec.runs_graph])
def test_compiled_graph_has_the_nodes_the_spec_names(judge: PythonJudge, name: str) -> None:
    provider = ScriptedProvider(["x"])
    deps = LoopDependencies(provider, judge, Critic(provider, CriticSettings()))
    graph = build_graph(deps, LoopSettings(arm=name))
    assert set(graph.get_graph().nodes) - {"__start__", "__end__"} == set(BUILTIN_ARMS[name].nodes)


def test_unknown_feedback_source_is_refused_at_declaration() -> None:
    with pytest.raises(ValueError, match="unknown feedback source"):
        ArmSpec(name="X", description="x", feedback=frozenset({"vibes"}))  # type: ignore[arg-type]


class Script:
    """Actor and critic answers from queues; keeps every fix prompt the actor got."""

    def __init__(self, drafts: Sequence[str], critiques: Sequence[str]) -> None:
        self.drafts, self.critiques = list(drafts), list(critiques)
        self.actor_prompts: list[str] = []

    def __call__(self, messages: Sequence[Message]) -> str:
        if messages[0].content == CRITIC_SYSTEM:
            return self.critiques.pop(0)
        self.actor_prompts.append(messages[-1].content)
        return fenced(self.drafts.pop(0))


def _run_c(judge: PythonJudge, tmp_path: Path, **settings: object) -> Script:
    script = Script([BROKEN_ADD, GOOD_ADD], [CRITIQUE, "NO_DEFECTS"])
    provider = ScriptedProvider(responder=script)
    config = RunConfig(arms=("A", "C"), output=tmp_path, run_id="c", **settings)  # type: ignore[arg-type]
    execute_unit(CASE, Unit(CASE.id, "C", 0), LoopDependencies(provider, judge), config)
    return script


def test_arm_c_is_critic_only_the_judge_never_reaches_its_fixer(
    judge: PythonJudge, tmp_path: Path
) -> None:
    script = _run_c(judge, tmp_path)
    fix_prompt = script.actor_prompts[1]
    assert "line 1: check it" in fix_prompt  # the critic's finding reaches the fixer...
    assert "[syntax]" not in fix_prompt  # ...the judge's run error does not
    assert "assert add" not in fix_prompt


def test_run_error_feedback_setting_shows_run_errors_to_critic_arms(
    judge: PythonJudge, tmp_path: Path
) -> None:
    script = _run_c(judge, tmp_path, run_error_feedback=True)
    fix_prompt = script.actor_prompts[1]
    assert "[syntax]" in fix_prompt and "line 1: check it" in fix_prompt
    assert "assert add" not in fix_prompt  # tests still do not feed back
    assert RunConfig(run_error_feedback=True).experiment_settings()["run_error_feedback"]


def test_arm_b_still_sees_run_errors(judge: PythonJudge) -> None:
    provider = ScriptedProvider([fenced(BROKEN_ADD), fenced(GOOD_ADD)])
    run_loop(CASE, LoopDependencies(provider, judge), LoopSettings(arm="B"))
    assert "[syntax]" in provider.requests[1][-1].content


class RoleRecorder(ScriptedProvider):
    """A scripted model that notes the role each call's context carries."""

    def __init__(self, script: Script, reviews: list[str]) -> None:
        super().__init__(responder=self._answer)
        self.script, self.reviews, self.roles = script, reviews, list[str]()

    def _answer(self, messages: Sequence[Message]) -> str:
        if messages[0].content == REVIEWER_SYSTEM:
            return self.reviews.pop(0)
        return self.script(messages)

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, object] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        self.roles.append(context.role if context else "?")
        return super().complete(messages, params, schema, context)


def test_quorum_reviewer_calls_carry_the_reviewer_role(judge: PythonJudge, tmp_path: Path) -> None:
    block = "```verdict\nagent: reviewer\nfinding: F1 action: KEEP\n```"
    provider = RoleRecorder(Script([WRONG_ADD, GOOD_ADD], [CRITIQUE, "NO_DEFECTS"]), [block])
    config = RunConfig(arms=("A", "D"), output=tmp_path, run_id="d", reviewers=1)
    rows = execute_unit(CASE, Unit(CASE.id, "D", 0), LoopDependencies(provider, judge), config)
    assert provider.roles == ["actor", "critic", "reviewer", "fixer", "critic"]
    assert [row["role"] for row in rows.calls] == provider.roles  # the calls table agrees


def test_calls_rows_carry_the_experiment_cost_and_records_keep_originals_apart(
    judge: PythonJudge,
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider([fenced(GOOD_ADD)])
    config = RunConfig(arms=("A",), output=tmp_path, run_id="a")
    rows = execute_unit(CASE, Unit(CASE.id, "A", 0), LoopDependencies(provider, judge), config)
    (row,) = rows.calls
    assert row["experiment_tokens_in"] == row["paid_tokens_in"] > 0  # documented: never null
    outcome = run_loop(
        CASE,
        LoopDependencies(ScriptedProvider([fenced(GOOD_ADD)]), judge),
        LoopSettings(arm="A"),
    )
    assert outcome.calls[0].original_tokens_in is None  # not a cache hit: no original


@pytest.mark.parametrize(
    ("arms", "message"),
    [
        ("A,Z", "unknown arm 'Z'; available: A, B, C, D, E"),
        ("A,B,B", "each arm may be listed once"),
        ("A,mine=x:y,mine=x:z", "each arm may be listed once"),
        ("A,B=tests.unit.loop.own_loops:raises", "B is a built-in arm"),
        ("A,not a ref:", "a reference is MODULE:CALLABLE"),
    ],
)
def test_config_refuses_arms_that_cannot_name_an_arm(arms: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RunConfig.model_validate({"arms": arms})


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_such_pkg.loops:run", "module 'no_such_pkg.loops' cannot be imported"),
        ("tests.unit.loop.own_loops:missing", "has no attribute 'missing'"),
        ("tests.unit.loop.own_loops:NOT_CALLABLE", "is a int, not callable"),
        (
            "tests.unit.loop.own_loops:takes_the_case_only",
            "cannot be called as loop\\(case, provider\\)",
        ),
        ("tests.unit.loop.own_loops:returns_text", "annotated to return str"),
    ],
)
def test_bad_own_loop_is_refused_before_any_work(
    reference: str, message: str, tmp_path: Path
) -> None:
    with pytest.raises(ArmError, match=message):
        resolve_arm(reference)
    config = RunConfig(arms=("A", reference), model="sim:", output=tmp_path, run_id="bad")
    with pytest.raises(ArmError, match=f"--arms A,{reference}: arm {reference}: "):
        preflight(config)
    assert not (tmp_path / "bad").exists()  # nothing written


def test_a_reference_names_its_arm_by_the_name_before_the_equals_sign() -> None:
    config = RunConfig(arms=("A", "mine=tests.unit.loop.own_loops:draft_and_recheck"))
    assert config.arm_names == ("A", "mine")
    spec = config.arm_specs()["mine"]
    assert spec.name == "mine" and spec.own_loop
    assert spec.description.endswith("Draft, then re-check once (a compiled LangGraph graph).")


@pytest.mark.parametrize(("arms", "refused"), [(["A", "B"], False), (["A", "C"], True)])
def test_resuming_a_run_whose_critic_arms_saw_run_errors_is_refused(
    arms: list[str], refused: bool, tmp_path: Path
) -> None:
    # A run started before run_error_feedback existed showed C and D the run errors.
    config = RunConfig(arms=tuple(arms), output=tmp_path, run_id="old")
    stored = json.loads(config.model_dump_json())
    del stored["run_error_feedback"]
    old = stored_experiment({"config_json": json.dumps(stored)})
    differences = experiment_differences(old, config.experiment_settings())
    assert differences == (["run_error_feedback: true (run) vs false (now)"] if refused else [])


def test_an_arm_fed_only_by_run_errors_halts_visible_clean_when_its_code_runs(
    judge: PythonJudge,
) -> None:
    runs_only = ArmSpec(name="R", description="run errors only", feedback=frozenset({"run_errors"}))
    assert runs_only.nodes == ("generate", "judge", "fix", "escalate")
    provider = ScriptedProvider([fenced(BROKEN_ADD), fenced(WRONG_ADD)])
    outcome = run_loop(CASE, LoopDependencies(provider, judge), LoopSettings(arm=runs_only))
    assert "[syntax]" in provider.requests[1][-1].content  # the run error fed back
    assert outcome.halt == "visible_clean" and outcome.final.defects > 0  # failed tests never did
