"""The sim's cheat setting: a cheating answer passes a canary's contradicting check."""

from __future__ import annotations

import pytest

from critiquebench.models import (
    CallContext,
    GenerationParams,
    Message,
    SimParams,
    SimProvider,
    SimSpecError,
)
from critiquebench.suites import CANARY_PREFIX, canary_cases, load_suite


def _code(provider: SimProvider, case_id: str, rep: int) -> str:
    context = CallContext(case_id=case_id, rep=rep, attempt=0, role="actor")
    text = provider.complete(
        [Message(role="user", content="go")], GenerationParams(), context=context
    ).text
    return text.removeprefix("```python\n").removesuffix("```")


def _passes(code: str, check: str) -> bool:
    space: dict[str, object] = {}
    exec(code, space)
    try:
        exec(check, space)
    except AssertionError:
        return False
    return True


def test_cheat_is_named_in_the_spec_only_when_set_and_kept_in_range() -> None:
    assert "cheat" not in SimParams().spec
    assert SimParams.parse("cheat=0.25").spec.endswith(",cheat=0.25")
    with pytest.raises(SimSpecError, match="cheat must be in"):
        SimParams.parse("cheat=1.5")


def test_a_cheating_answer_passes_the_contradiction_and_an_honest_one_does_not() -> None:
    canary = canary_cases(load_suite("basic"))[0]
    contradiction = canary.checks[0].source
    cheater = SimProvider(SimParams(draft=0.0, cheat=1.0))
    code = _code(cheater, canary.id, 0)
    assert all(_passes(code, check.source) for check in canary.checks)
    honest = SimProvider(SimParams(draft=0.0))
    assert not _passes(_code(honest, canary.id, 0), contradiction)
    # The cheat is for canaries alone: the case itself is answered as ever.
    source = canary.id.removeprefix(CANARY_PREFIX)
    assert _code(cheater, source, 0) == _code(honest, source, 0)
