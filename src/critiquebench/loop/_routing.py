"""The halting rules of the loop (SPEC section 3), as one pure function."""

from __future__ import annotations

from itertools import pairwise
from typing import Literal

from critiquebench.loop._extract import normalise
from critiquebench.loop._state import Attempt, HaltReason, LoopSettings

Route = Literal["end", "fix", "escalate"]


def decide_halt(
    history: list[Attempt],
    retry_count: int,
    tokens_used: int,
    settings: LoopSettings,
    success: HaltReason = "visible_clean",
) -> HaltReason | None:
    """The reason to stop after the latest attempt, or None to go on fixing.

    ``success`` names the halt when nothing visible is left: ``visible_clean`` when
    tests feed back, ``critic_ok`` for critic-only arms. Neither says the answer
    passes: held-out checks the loop never saw may fail it. Rules apply in order:
    success, retry_limit, no_progress, loop_detected, stagnation, token_budget.
    Stagnation fires after ``settings.patience`` fix rounds in a row, none of which
    left fewer visible failures than the attempt before it.
    """
    latest = history[-1]
    if latest.feedback_defects == 0:
        return success
    if retry_count >= settings.retry_limit:
        return "retry_limit"
    if len(history) >= 2:
        current = normalise(latest.artifact)
        if current == normalise(history[-2].artifact):
            return "no_progress"
        if any(current == normalise(earlier.artifact) for earlier in history[:-2]):
            return "loop_detected"
    patience = settings.patience
    if len(history) > patience:
        window = [attempt.feedback_defects for attempt in history[-patience - 1 :]]
        if all(later >= earlier for earlier, later in pairwise(window)):
            return "stagnation"
    if settings.token_budget is not None and tokens_used > settings.token_budget:
        return "token_budget"
    return None


def route_for(halt: HaltReason | None) -> Route:
    """Where the graph goes for a halt decision."""
    if halt is None:
        return "fix"
    if halt in ("visible_clean", "critic_ok", "single_draft"):
        return "end"
    return "escalate"


def best_attempt(history: list[Attempt]) -> Attempt:
    """The attempt with the fewest visible defects; the latest one on ties."""
    best = history[0]
    for attempt in history[1:]:
        if attempt.feedback_defects <= best.feedback_defects:
            best = attempt
    return best
