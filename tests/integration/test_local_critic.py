"""The embedded model's critic output, constrained by the JSON schema, always parses.

Its verdicts are meaningless (the model is tiny): this tests the machinery only.
"""

from __future__ import annotations

import pytest

from critiquebench.critics import Critic, CriticSettings
from critiquebench.models import CallContext, LocalProvider
from critiquebench.suites import load_suite

pytestmark = pytest.mark.slow


def test_local_critic_json_parses_six_times_out_of_six() -> None:
    critic = Critic(LocalProvider(), CriticSettings(policy="fail_closed"))
    cases = load_suite("basic", limit=6)
    methods = []
    for n, case in enumerate(cases):
        candidate = case.reference_solution if n % 2 else case.reference_solution.replace("+", "-")
        result = critic(case.prompt, candidate, CallContext(case_id=case.id, attempt=0))
        call = result.calls[0]
        assert call.completion is not None
        methods.append(call.parse_method)
        assert call.verifier_error is None, call.completion.text
    assert len(methods) == 6 and "unparseable" not in methods
    assert methods.count("json") >= 5  # the grammar makes the strict form the usual one
