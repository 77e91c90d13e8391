"""The graph's nodes: small functions from state to a state update."""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from critiquebench.critics import Critic, CriticCall
from critiquebench.judges import Failure, JudgeResult, artifact_format
from critiquebench.loop._extract import diff_summary, extract_code
from critiquebench.loop._prompts import fix_messages, task_prompt
from critiquebench.loop._routing import best_attempt, decide_halt
from critiquebench.loop._state import (
    Attempt,
    CallRecord,
    Escalation,
    HaltReason,
    LoopState,
)
from critiquebench.loop._summary import request_line
from critiquebench.models import CallContext, GenerationParams, ModelError, ModelProvider, Role
from critiquebench.suites import Case

Judge = Callable[[Case, str], JudgeResult]
Update = dict[str, Any]


class Node(Protocol):
    """A graph node: reads the state, returns the keys it changes."""

    def __call__(self, state: LoopState) -> Update: ...


@dataclass(frozen=True)
class LoopDependencies:
    """The model, judge and (for arms C-E) critic a loop calls; built once per process."""

    provider: ModelProvider
    judge: Judge
    critic: Critic | None = None


def sampling_seed(case_id: str, rep: int, iteration: int) -> int:
    """A stable seed per (case, rep, iteration).

    Arms share it, so every arm's first draft of a (case, rep) is the same sample:
    the comparison between arms is paired, not confounded by draft luck.
    """
    return zlib.crc32(f"{case_id}|{rep}|{iteration}".encode())


def make_generate(deps: LoopDependencies) -> Node:
    """Node: ask the model for the next artifact."""

    def generate(state: LoopState) -> Update:
        case, settings = state["case"], state["settings"]
        iteration = len(state["history"])
        params = GenerationParams(
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            seed=sampling_seed(case.id, state["rep"], iteration),
        )
        role: Role = "actor" if iteration == 0 else "fixer"
        context = CallContext(case_id=case.id, attempt=iteration, rep=state["rep"], role=role)
        try:
            completion = deps.provider.complete(state["prompt"], params, context=context)
        except ModelError as exc:
            record = CallRecord.failed(
                iteration, role, deps.provider.model_name, str(exc), state["prompt"]
            )
            error = provider_error(role, str(exc))
            return {"calls": [*state["calls"], record], "error": error, "halt": "error"}
        # Counters use the call's experiment cost, so a cache hit changes neither
        # the token budget's decisions nor the arm's reported cost.
        record = CallRecord.of(iteration, role, completion, messages=state["prompt"])
        return {
            "artifact": extract_code(case, completion.text),
            "calls": [*state["calls"], record],
            "tokens_in": state["tokens_in"] + record.experiment_tokens_in,
            "tokens_out": state["tokens_out"] + record.experiment_tokens_out,
            "latency_s": state["latency_s"] + completion.experiment_latency_s,
        }

    return generate


def make_judge(deps: LoopDependencies, *, decides: bool) -> Node:
    """Node: judge the artifact on every check, keep the failures the loop may see.

    ``decides``: this node makes the halt decision (an arm fixing without a critic); an
    arm that does not fix never loops, and critic arms decide after the critique node.
    """

    def judge(state: LoopState) -> Update:
        case, settings, history = state["case"], state["settings"], state["history"]
        result = deps.judge(case, state["artifact"])
        previous = history[-1].artifact if history else None
        attempt = Attempt(
            iteration=len(history),
            artifact=state["artifact"],
            result=result,
            feedback_failures=settings.visible_failures(result),
            diff_summary=diff_summary(previous, state["artifact"]),
        )
        new_history = [*history, attempt]
        if result.infrastructure_error is not None:
            # The failures say nothing about the artifact: stop, and let the unit be retried.
            return {
                "history": new_history,
                "failures": (),
                "best": best_attempt(new_history),
                "halt": "error",
                "error": f"infrastructure: judge: {result.infrastructure_error}",
            }
        halt: HaltReason | None = None if settings.spec.fixes else "single_draft"
        if decides:
            tokens = state["tokens_in"] + state["tokens_out"]
            halt = decide_halt(new_history, state["retry_count"], tokens, settings)
        return {
            "history": new_history,
            "failures": attempt.feedback_failures,
            "best": best_attempt(new_history),
            "halt": halt,
        }

    return judge


def make_critique(deps: LoopDependencies) -> Node:
    """Node: a separate-context critic (and quorum) reviews the artifact; then decide."""

    def critique(state: LoopState) -> Update:
        if deps.critic is None:
            name = state["settings"].spec.name
            raise RuntimeError(f"arm {name} needs a critic in LoopDependencies")
        case, settings, history = state["case"], state["settings"], state["history"]
        latest = history[-1]
        context = CallContext(case_id=case.id, attempt=latest.iteration, rep=state["rep"])
        form = artifact_format(case.judge)
        review = deps.critic(task_prompt(case), latest.artifact, context, form=form)
        records = [_critic_record(latest.iteration, call) for call in review.calls]
        failed = next((call for call in review.calls if call.completion is None), None)
        if failed is not None:
            # A call that failed after its retries is no reply the verifier policy could
            # judge: the unit stops as an infrastructure failure, to be retried.
            error = provider_error(failed.role, failed.verifier_error or "call failed")
            return {"calls": [*state["calls"], *records], "halt": "error", "error": error}
        findings = tuple(Failure(kind="critic", message=text) for text in review.findings)
        reviewed = dataclasses.replace(
            latest,
            feedback_failures=latest.feedback_failures + findings,
            critic_verdict=review.verdict.verdict,
            findings_killed=review.killed,
        )
        new_history = [*history[:-1], reviewed]
        tokens_in = state["tokens_in"] + sum(r.experiment_tokens_in for r in records)
        tokens_out = state["tokens_out"] + sum(r.experiment_tokens_out for r in records)
        tokens, success = tokens_in + tokens_out, settings.spec.success
        halt = decide_halt(new_history, state["retry_count"], tokens, settings, success)
        return {
            "history": new_history,
            "failures": reviewed.feedback_failures,
            "best": best_attempt(new_history),
            "halt": halt,
            "calls": [*state["calls"], *records],
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "verifier_errors": state["verifier_errors"] + review.verifier_errors,
            "findings_killed": state["findings_killed"] + review.killed,
        }

    return critique


def provider_error(role: str, detail: str) -> str:
    """The ``LoopOutcome.error`` of a model call that failed after its retries."""
    return f"provider: {role} call failed: {detail.removeprefix('call failed: ')}"


def _critic_record(iteration: int, call: CriticCall) -> CallRecord:
    completion = call.completion
    if completion is None:
        return dataclasses.replace(
            CallRecord.failed(iteration, call.role, "", call.verifier_error, call.messages),
            verifier_error=call.verifier_error,
            parse_method=call.parse_method,
        )
    return CallRecord.of(
        iteration,
        call.role,
        completion,
        messages=call.messages,
        verifier_error=call.verifier_error,
        parse_method=call.parse_method,
        parsed=call.parsed,
    )


def fix(state: LoopState) -> Update:
    """Node: turn the latest failures into the next prompt."""
    return {
        "prompt": fix_messages(state["case"], state["history"]),
        "retry_count": state["retry_count"] + 1,
    }


def escalate(state: LoopState) -> Update:
    """Node: record why the loop gave up, in three lines a human can scan."""
    reason = state["halt"] or "error"
    best = state["best"]
    best_text = (
        f"best attempt: #{best.iteration} with {best.defects} defect(s) "
        f"({best.feedback_defects} visible to the loop)"
        if best
        else "no attempt was produced"
    )
    asked = request_line(state["case"])
    detail = state["error"] or f"after {len(state['history'])} attempt(s)"
    summary = (f"asked: {asked}", f"stopped: {reason} ({detail})", best_text)
    return {"escalation": Escalation(reason=reason, summary=summary)}
