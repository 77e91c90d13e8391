"""The resampling arm (R): fresh first drafts instead of fixes, the best one kept.

Olausson et al. (ICLR 2024) showed that once tokens are counted, repair often gains
little over drawing more samples; this arm is that comparison. Each draw sends the
first-draft prompt again and judges the answer; the loop sees only what a test-fed
arm's fixer would see (the feedback checks and run errors), and keeps the draft with
the fewest of those failures (the latest on ties, as ``best_attempt`` keeps a loop's).
It stops at the first draft clean on the feedback checks (``visible_clean``), once its tokens
exceed the unit's token budget (``token_budget``, the loops' own rule), or after
:data:`DRAWS_PER_CALL` times the calls a loop may make (``draw_limit``).

Draws are independent samples, not cache hits of one prompt: draw ``k`` has a seed of
its own, so the call cache (keyed by model, messages, parameters and rep) holds each
draw apart, and a rerun gets the same draws back. Draw 0 uses the first-draft seed of
every arm, so R's first draft is A's and B's (the comparison stays paired).

Drawing past a loop's spend costs tokens but no fairness: a stopping rule that looks
only at each draft's own cleanliness makes the run at budget ``T`` exactly the draws
whose running tokens fit in ``T``, so the report matches R to each loop per unit
afterwards (``analysis/report/_resample.py``) at that loop's tokens on the same unit.
"""

from __future__ import annotations

import zlib

from critiquebench.loop._extract import diff_summary, extract_code
from critiquebench.loop._nodes import LoopDependencies, provider_error, sampling_seed
from critiquebench.loop._prompts import first_draft_messages
from critiquebench.loop._routing import best_attempt
from critiquebench.loop._state import (
    Attempt,
    CallRecord,
    Escalation,
    HaltReason,
    LoopOutcome,
    LoopSettings,
    empty_attempt,
)
from critiquebench.loop._summary import request_line
from critiquebench.models import CallContext, GenerationParams, ModelError
from critiquebench.suites import Case

DRAWS_PER_CALL = 4
"""At most this many draws per call a loop of the run may make (``1 + retry_limit``):
a fix round's prompt holds the first-draft prompt and more, so it costs at least a
draw, and four times a loop's calls cover its spend unless its rounds cost four
draws each (the report counts units where a loop outspent R)."""


def draw_seed(case_id: str, rep: int, draw: int) -> int:
    """The sampling seed of draw ``draw``: draw 0 is every arm's first draft, the others
    have seeds of their own (so the cache keys differ) that a rerun finds again."""
    if draw == 0:
        return sampling_seed(case_id, rep, 0)
    return zlib.crc32(f"{case_id}|{rep}|draw {draw}".encode())


def max_draws(settings: LoopSettings) -> int:
    """The most drafts one unit draws."""
    return DRAWS_PER_CALL * (1 + settings.retry_limit)


def run_resample(
    case: Case, deps: LoopDependencies, settings: LoopSettings, rep: int
) -> LoopOutcome:
    """Draw, judge and keep the best draft of one case, as the module docstring says."""
    prompt = first_draft_messages(case)
    history: list[Attempt] = []
    calls: list[CallRecord] = []
    tokens_in = tokens_out = 0
    halt: HaltReason = "draw_limit"
    error: str | None = None
    for draw in range(max_draws(settings)):
        params = GenerationParams(
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            seed=draw_seed(case.id, rep, draw),
        )
        context = CallContext(case_id=case.id, attempt=draw, rep=rep, role="actor")
        try:
            completion = deps.provider.complete(prompt, params, context=context)
        except ModelError as exc:
            calls.append(CallRecord.failed(draw, "actor", deps.provider.model_name, str(exc)))
            halt, error = "error", provider_error("actor", str(exc))
            break
        record = CallRecord.of(draw, "actor", completion)
        calls.append(record)
        tokens_in += record.experiment_tokens_in
        tokens_out += record.experiment_tokens_out
        artifact = extract_code(case, completion.text)
        result = deps.judge(case, artifact)
        previous = history[-1].artifact if history else None
        attempt = Attempt(
            iteration=draw,
            artifact=artifact,
            result=result,
            feedback_failures=settings.visible_failures(result),
            diff_summary=diff_summary(previous, artifact),
        )
        history.append(attempt)
        if result.infrastructure_error is not None:
            halt, error = "error", f"infrastructure: judge: {result.infrastructure_error}"
            break
        if attempt.feedback_defects == 0:
            halt = "visible_clean"
            break
        budget = settings.token_budget
        if budget is not None and tokens_in + tokens_out > budget:
            halt = "token_budget"
            break
    final = best_attempt(history) if history else empty_attempt(case)
    escalation = None
    if halt != "visible_clean":
        detail = error or f"after {len(history)} draft(s)"
        summary = (
            f"asked: {request_line(case)}",
            f"stopped: {halt} ({detail})",
            f"best draft: #{final.iteration} with {final.defects} defect(s) "
            f"({final.feedback_defects} visible to the loop)",
        )
        escalation = Escalation(reason=halt, summary=summary)
    return LoopOutcome(
        case_id=case.id,
        final=final,
        attempts=tuple(history),
        calls=tuple(calls),
        halt=halt,
        retry_count=max(0, len(history) - 1),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        error=error,
        escalation=escalation,
    )
