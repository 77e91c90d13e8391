"""Running a user's own loop as an arm: its attempts are judged and recorded like ours.

The loop gets the case as a built-in fixer would see it (the prompt and the visible
checks; no held-out check, no reference solution), and a provider that records every
call it makes (role,
tokens, latency, cache hits) and fills in the case and rep, so caches and replay
files keep reps apart. Its attempts are judged by the same judge as every arm; its
answer is its last attempt (the loop decided to stop there, so the measurement never
picks for it), and the unit halts as ``own_loop``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from critiquebench.loop._arms import ArmSpec
from critiquebench.loop._extract import diff_summary, extract_code
from critiquebench.loop._nodes import LoopDependencies, provider_error
from critiquebench.loop._state import (
    Attempt,
    CallRecord,
    FeedbackMode,
    LoopOutcome,
    empty_attempt,
)
from critiquebench.models import (
    CallContext,
    Completion,
    GenerationParams,
    Message,
    ModelError,
    ModelProvider,
)
from critiquebench.suites import Case


class RecordingProvider:
    """The provider a user's loop sees: the run's provider, with every call recorded."""

    def __init__(self, inner: ModelProvider, case: Case, rep: int) -> None:
        self._inner = inner
        self._case = case
        self._rep = rep
        self.calls: list[CallRecord] = []

    @property
    def model_name(self) -> str:
        """The run's model."""
        return self._inner.model_name

    def complete(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        schema: dict[str, Any] | None = None,
        context: CallContext | None = None,
    ) -> Completion:
        """Call the model. Without a context, call n is attempt n (actor first, then
        fixer); the case and rep are always the unit's."""
        if context is None:
            made = len(self.calls)
            context = CallContext(attempt=made, role="actor" if made == 0 else "fixer")
        context = dataclasses.replace(context, case_id=self._case.id, rep=self._rep)
        try:
            completion = self._inner.complete(messages, params, schema, context)
        except ModelError as exc:
            record = CallRecord.failed(
                context.attempt, context.role, self.model_name, str(exc), messages
            )
            self.calls.append(record)
            raise
        record = CallRecord.of(context.attempt, context.role, completion, messages=messages)
        self.calls.append(record)
        return completion


def _attempt_texts(returned: object) -> list[str]:
    """The attempts a loop returned, or a ``TypeError`` saying what it returned instead."""
    if isinstance(returned, str | bytes) or not isinstance(returned, Sequence):
        raise TypeError(
            f"returned {type(returned).__name__}; an arm's loop returns a list of attempts "
            "(code strings, first draft first)"
        )
    wrong = [type(item).__name__ for item in returned if not isinstance(item, str)]
    if wrong:
        raise TypeError(f"returned a list holding {', '.join(sorted(set(wrong)))}, not str")
    if not returned:
        raise TypeError("returned no attempt; return at least the first draft")
    return list(returned)


def case_for_loop(case: Case, feedback: FeedbackMode) -> Case:
    """What a user's loop is given of ``case``: the prompt and only the checks a built-in
    arm's fixer may see (feedback checks; every check with ``feedback="all"``), never the
    reference solution. The judge still measures the answer on every check."""
    visible = {"feedback", "heldout"} if feedback == "all" else {"feedback"}
    checks = tuple(check for check in case.checks if check.origin in visible)
    return case.model_copy(update={"checks": checks, "reference_solution": ""})


def run_own_loop(
    case: Case, deps: LoopDependencies, spec: ArmSpec, rep: int, feedback: FeedbackMode
) -> LoopOutcome:
    """Run a user's loop on what it may see of one case; judge each attempt it returns
    on the whole case."""
    assert spec.loop is not None
    provider = RecordingProvider(deps.provider, case, rep)
    error: str | None = None
    texts: list[str] = []
    try:
        texts = _attempt_texts(spec.loop(case_for_loop(case, feedback), provider))
    except ModelError as exc:
        role = provider.calls[-1].role if provider.calls else "actor"
        error = provider_error(role, str(exc))
    except Exception as exc:  # the user's code: its failure is the unit's, never a defect
        error = f"infrastructure: arm {spec.name}: {type(exc).__name__}: {exc}"
    history: list[Attempt] = []
    for text in texts:
        artifact = extract_code(case, text)
        result = deps.judge(case, artifact)
        previous = history[-1].artifact if history else None
        history.append(
            Attempt(
                iteration=len(history),
                artifact=artifact,
                result=result,
                feedback_failures=(),
                diff_summary=diff_summary(previous, artifact),
            )
        )
        if result.infrastructure_error is not None:
            error = f"infrastructure: judge: {result.infrastructure_error}"
            break
    final = history[-1] if history else None
    return LoopOutcome(
        case_id=case.id,
        final=final or empty_attempt(case),
        attempts=tuple(history),
        calls=tuple(provider.calls),
        halt="error" if error else "own_loop",
        retry_count=max(0, len(history) - 1),
        tokens_in=sum(call.experiment_tokens_in for call in provider.calls),
        tokens_out=sum(call.experiment_tokens_out for call in provider.calls),
        error=error,
    )
