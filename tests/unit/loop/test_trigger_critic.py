"""The critic arms review a trigger decision: the critic sees the decision and is told
what it reviews; the fixer gets the decision and the finding, and answers a decision."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from critiquebench.critics import (
    CRITIC_SYSTEM,
    REVIEWER_SYSTEM,
    Critic,
    CriticSettings,
    critic_system,
)
from critiquebench.judges import PythonJudge
from critiquebench.judges.trigger._decision import TRIGGER_FORMAT
from critiquebench.judges.trigger._judge import TriggerJudge
from critiquebench.loop import LoopDependencies, LoopOutcome, LoopSettings, run_loop
from critiquebench.models import Message, ScriptedProvider
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case
from tests.unit.judges.test_trigger_judge import trigger_case

FINDING = "the query asks to convert a PDF, not to fill in its form: the skill must not be used"


class DecisionScript:
    """A router that triggers on the near miss, then takes the critic's point."""

    def __init__(self) -> None:
        self.decisions = ["TRIGGER", "NO_TRIGGER\nA conversion is not form filling."]
        self.critiques = [
            json.dumps({"verdict": "fail", "issues": [FINDING], "summary": "wrong route"}),
            "NO_DEFECTS",
        ]
        self.critic_prompts: list[str] = []
        self.actor_prompts: list[str] = []

    def __call__(self, messages: Sequence[Message]) -> str:
        system, user = messages[0].content, messages[-1].content
        if system == critic_system(TRIGGER_FORMAT.review):
            self.critic_prompts.append(user)
            return self.critiques.pop(0)
        if system == REVIEWER_SYSTEM:
            return "```verdict\nagent: reviewer\nfinding: F1 action: KEEP\n```"
        assert system == TRIGGER_FORMAT.system, system
        self.actor_prompts.append(user)
        return self.decisions.pop(0)


def run(arm: str, script: DecisionScript) -> LoopOutcome:
    critic = CriticSettings(reviewers=1, threshold=1) if arm == "D" else CriticSettings()
    settings = LoopSettings(arm=arm, critic=critic)
    provider = ScriptedProvider(responder=script)
    deps = LoopDependencies(provider, TriggerJudge(), Critic(provider, settings.critic))
    return run_loop(trigger_case("near_miss"), deps, settings)


@pytest.mark.parametrize("arm", ["C", "D", "E"])
def test_a_critic_arm_turns_a_false_trigger_into_a_right_decision(arm: str) -> None:
    script = DecisionScript()
    outcome = run(arm, script)
    first, last = outcome.attempts[0], outcome.attempts[-1]
    assert (first.artifact, first.defects) == ("trigger", 1)
    assert first.result.failures[0].code == "false_trigger"
    assert (last.artifact, last.defects) == ("no_trigger", 0)
    assert outcome.final.defects == 0 and outcome.halt in ("critic_ok", "visible_clean")
    # The critic saw the decision plainly, with the skill and the query, and was told
    # it reviews a routing decision, not code.
    seen = script.critic_prompts[0]
    assert seen.endswith("Candidate:\nTRIGGER") and "Convert this PDF" in seen
    assert "routing decision" in critic_system(TRIGGER_FORMAT.review)
    assert critic_system(TRIGGER_FORMAT.review) != CRITIC_SYSTEM
    # The fixer got its decision and the finding, not the held-out label.
    fix = script.actor_prompts[1]
    assert "Your previous answer:\nTRIGGER\n" in fix and FINDING in fix
    assert "expected" not in fix and "```" not in fix
    roles = [call.role for call in outcome.calls]
    assert roles.count("critic") == 2 and roles.count("fixer") == 1


def test_a_python_critic_prompt_is_unchanged(judge: PythonJudge) -> None:
    prompts: list[tuple[str, str]] = []
    drafts, critiques = (
        [WRONG_ADD, GOOD_ADD],
        ['{"verdict": "fail", "issues": ["x"]}', "NO_DEFECTS"],
    )

    def respond(messages: Sequence[Message]) -> str:
        if messages[0].content == CRITIC_SYSTEM:
            prompts.append((messages[0].content, messages[-1].content))
            return critiques.pop(0)
        return fenced(drafts.pop(0))

    settings = LoopSettings(arm="C")
    provider = ScriptedProvider(responder=respond)
    deps = LoopDependencies(provider, judge, Critic(provider, settings.critic))
    case = make_case()
    outcome = run_loop(case, deps, settings)
    assert outcome.final.defects == 0
    # As before artifact formats existed: the extracted code, its final newline kept.
    code = WRONG_ADD.strip("\n") + "\n"
    expected = f"Task:\n{case.prompt}\n\nCandidate:\n```python\n{code}\n```"
    assert prompts[0][1] == expected
    assert CRITIC_SYSTEM.startswith("You review a candidate answer to a programming task.")
