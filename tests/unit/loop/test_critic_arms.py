"""Arms C (critic), D (quorum) and E (tests + critic) end to end with a scripted model."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from critiquebench.critics import CRITIC_SYSTEM, REVIEWER_SYSTEM, Critic, CriticSettings
from critiquebench.judges import PythonJudge
from critiquebench.loop import LoopDependencies, LoopOutcome, LoopSettings, run_loop
from critiquebench.models import Message, ModelError, ScriptedProvider
from tests.helpers import GOOD_ADD, WRONG_ADD, fenced, make_case

CASE = make_case()


def _verdict(verdict: str, *issues: str) -> str:
    return json.dumps({"verdict": verdict, "issues": list(issues), "summary": "review"})


def _block(*actions: str) -> str:
    lines = "\n".join(f"finding: F{n} action: {a}" for n, a in enumerate(actions, 1))
    return f"```verdict\nagent: reviewer\n{lines}\n```"


class Script:
    """Answers actor, critic and reviewer calls from three queues; records every prompt."""

    def __init__(
        self,
        drafts: Sequence[str],
        critiques: Sequence[str | Exception],
        reviews: Sequence[str] = (),
    ) -> None:
        self.drafts, self.critiques, self.reviews = list(drafts), list(critiques), list(reviews)
        self.actor_prompts: list[str] = []
        self.critic_calls = 0

    def __call__(self, messages: Sequence[Message]) -> str:
        system, user = messages[0].content, messages[-1].content
        if system == CRITIC_SYSTEM:
            self.critic_calls += 1
            answer = self.critiques.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        if system == REVIEWER_SYSTEM:
            return self.reviews.pop(0)
        self.actor_prompts.append(user)
        return fenced(self.drafts.pop(0))


def run(judge: PythonJudge, script: Script, arm: str, **critic: object) -> LoopOutcome:
    settings = LoopSettings(arm=arm, critic=CriticSettings(**critic))  # type: ignore[arg-type]
    provider = ScriptedProvider(responder=script)
    deps = LoopDependencies(provider, judge, Critic(provider, settings.critic))
    return run_loop(CASE, deps, settings)


def test_arm_c_fixes_from_critic_issues_only_and_halts_on_critic_ok(judge: PythonJudge) -> None:
    script = Script([WRONG_ADD, GOOD_ADD], [_verdict("fail", "line 2: subtracts"), "NO_DEFECTS"])
    outcome = run(judge, script, "C")
    assert outcome.halt == "critic_ok"
    fix_prompt = script.actor_prompts[1]
    assert "line 2: subtracts" in fix_prompt
    assert "assert add" not in fix_prompt  # no test results reach a critic-only loop
    assert outcome.final.defects == 0  # ...yet every arm is measured by the same judge
    roles = [call.role for call in outcome.calls]
    assert roles == ["actor", "critic", "fixer", "critic"]


def test_hollow_candidate_fails_without_asking_the_critic(judge: PythonJudge) -> None:
    script = Script(["def add(a, b):\n    pass", GOOD_ADD], ["NO_DEFECTS"])
    outcome = run(judge, script, "C")
    assert script.critic_calls == 1  # only the second attempt was sent to the model
    assert "add" in script.actor_prompts[1] and "pass" in script.actor_prompts[1]
    assert outcome.attempts[0].critic_verdict == "fail"


@pytest.mark.parametrize(
    ("policy", "halt", "attempts"), [("fail_open", "critic_ok", 1), ("fail_closed", None, 2)]
)
def test_unparseable_critic_follows_the_policy(
    judge: PythonJudge, policy: str, halt: str | None, attempts: int
) -> None:
    script = Script([WRONG_ADD, GOOD_ADD], ["I think it is fine maybe", "NO_DEFECTS"])
    outcome = run(judge, script, "C", policy=policy)
    assert outcome.verifier_errors == 1
    assert len(outcome.attempts) == attempts
    if halt:
        assert outcome.halt == halt
    else:
        assert "verifier_error" in script.actor_prompts[1]
    critic_call = next(c for c in outcome.calls if c.role == "critic")
    assert critic_call.verifier_error and critic_call.parse_method == "unparseable"


@pytest.mark.parametrize("policy", ["fail_open", "fail_closed"])
def test_critic_call_error_is_an_infrastructure_error_not_a_verdict(
    judge: PythonJudge, policy: str
) -> None:
    # A call that failed after its retries is no reply: the verifier policy (which
    # judges unusable replies) must not turn it into a pass or a fail of the artifact.
    script = Script([WRONG_ADD], [ModelError("503 from the critic")])
    outcome = run(judge, script, "C", policy=policy)
    assert outcome.halt == "error"
    assert outcome.error == "provider: critic call failed: 503 from the critic"
    assert "503" in (outcome.calls[1].verifier_error or "")
    assert len(script.actor_prompts) == 1  # no fix round after the failed critic


def test_reviewer_call_error_is_an_infrastructure_error(judge: PythonJudge) -> None:
    script = Script([WRONG_ADD], [_verdict("fail", "wrong sign")])
    provider_calls = {"n": 0}

    def reviewer_fails(messages: Sequence[Message]) -> str:
        if messages[0].content == REVIEWER_SYSTEM:
            provider_calls["n"] += 1
            raise ModelError("reviewer timed out")
        return script(messages)

    settings = LoopSettings(arm="D", critic=CriticSettings(reviewers=1, threshold=1))
    provider = ScriptedProvider(responder=reviewer_fails)
    deps = LoopDependencies(provider, judge, Critic(provider, settings.critic))
    outcome = run_loop(CASE, deps, settings)
    assert provider_calls["n"] == 1
    assert outcome.halt == "error"
    assert outcome.error == "provider: reviewer call failed: reviewer timed out"


@pytest.mark.parametrize(
    ("critic", "parse"),
    [
        ('```json\n{"verdict": "fail", "issues": ["x"], "summary": "s"}\n```', "fenced"),
        ('Sure. {"verdict": "fail", "issues": ["x"], "summary": "s"} done', "balanced"),
        ("verdict: fail", "bare_field"),
    ],
)
def test_tolerant_parsing_is_recorded(judge: PythonJudge, critic: str, parse: str) -> None:
    script = Script([WRONG_ADD, GOOD_ADD], [critic, "NO_DEFECTS"])
    outcome = run(judge, script, "C")
    assert outcome.calls[1].parse_method == parse
    assert outcome.verifier_errors == 0


def test_arm_d_quorum_kills_rejected_findings_before_the_fixer(judge: PythonJudge) -> None:
    critique = _verdict("fail", "bogus: style nit", "line 2: subtracts instead of adding")
    reviews = [_block("REJECT", "KEEP"), _block("REJECT", "KEEP"), _block("KEEP", "KEEP")]
    script = Script([WRONG_ADD, GOOD_ADD], [critique, "NO_DEFECTS"], reviews)
    outcome = run(judge, script, "D", reviewers=3, threshold=2)
    assert outcome.findings_killed == 1
    assert "subtracts instead of adding" in script.actor_prompts[1]
    assert "bogus" not in script.actor_prompts[1]
    assert [c.role for c in outcome.calls].count("reviewer") == 3


def test_arm_d_halts_as_critic_ok_when_every_finding_is_killed(judge: PythonJudge) -> None:
    critique = _verdict("fail", "bogus finding")
    script = Script([GOOD_ADD], [critique], [_block("REJECT")] * 3)
    outcome = run(judge, script, "D", reviewers=3, threshold=2)
    assert outcome.halt == "critic_ok" and outcome.findings_killed == 1


def test_arm_d_malformed_reviewers_abstain_so_findings_stay_unverified(judge: PythonJudge) -> None:
    critique = _verdict("fail", "line 2: subtracts")
    script = Script([WRONG_ADD, GOOD_ADD], [critique, "NO_DEFECTS"], ["no block here"] * 3)
    outcome = run(judge, script, "D", reviewers=3, threshold=2)
    assert outcome.findings_killed == 0
    assert "line 2: subtracts" in script.actor_prompts[1]  # UNVERIFIED never passes
    assert outcome.verifier_errors == 3


def test_arm_e_fixer_gets_failing_tests_and_critic_issues(judge: PythonJudge) -> None:
    script = Script([WRONG_ADD, GOOD_ADD], [_verdict("warn", "line 2: sign"), "NO_DEFECTS"])
    outcome = run(judge, script, "E")
    assert outcome.halt == "visible_clean"
    fix_prompt = script.actor_prompts[1]
    assert "assert add(1, 2) == 3" in fix_prompt and "line 2: sign" in fix_prompt


def test_arm_e_does_not_halt_while_the_critic_still_objects(judge: PythonJudge) -> None:
    script = Script([GOOD_ADD, GOOD_ADD + "\n"], [_verdict("fail", "name it better"), "NO_DEFECTS"])
    outcome = run(judge, script, "E")
    assert len(outcome.attempts) == 2
