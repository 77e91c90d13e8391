"""A critic's and its reviewers' calls keep what they were asked and what was read."""

from __future__ import annotations

import json

from critiquebench.critics import Critic, CriticSettings
from critiquebench.models import CallContext, ScriptedProvider

VERDICT = '{"verdict": "fail", "issues": ["line 2: off by one"], "summary": "wrong"}'
VOTE = "```verdict\nagent: reviewer\nfinding: F1 action: KEEP\n```"


def test_critic_and_reviewer_calls_carry_their_messages_and_parsed_replies() -> None:
    provider = ScriptedProvider([VERDICT, VOTE, "no block at all"])
    critic = Critic(provider, CriticSettings(reviewers=2, threshold=1))
    result = critic("add two numbers", "def f(a, b):\n    return a - b\n", CallContext())
    first, vote, empty = result.calls
    assert [m.role for m in first.messages] == ["system", "user"]
    assert "return a - b" in first.messages[1].content
    assert json.loads(str(first.parsed)) == {
        "verdict": "fail", "issues": ["line 2: off by one"], "summary": "wrong"
    }  # fmt: skip
    assert "Findings:\nF1: line 2: off by one" in vote.messages[1].content
    assert json.loads(str(vote.parsed))["actions"] == {"F1": "KEEP"}
    assert json.loads(str(empty.parsed))["is_verdict_block"] is False
    assert empty.verifier_error == "no verdict block in the reviewer's reply"
