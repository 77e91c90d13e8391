"""Units of work: one (case, arm, rep), and running one into table rows."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from critiquebench.critics import Critic
from critiquebench.judges import STATIC_KINDS, Failure, FailureKind, JudgeResult
from critiquebench.loop import ArmSpec, Attempt, LoopDependencies, LoopOutcome, LoopSettings
from critiquebench.pipeline._config import RunConfig
from critiquebench.pipeline._escalation import escalation_markdown
from critiquebench.pipeline._transcripts import transcript_rows
from critiquebench.pipeline._unit import Unit
from critiquebench.suites import Case

Row = dict[str, Any]


@dataclass(frozen=True)
class UnitRows:
    """The rows one unit adds to the cases, attempts and calls tables."""

    case: Row
    attempts: list[Row]
    calls: list[Row]
    escalation_record: str | None = None
    transcripts: list[Row] = dataclasses.field(default_factory=list)
    """Rows of the ``transcripts`` side table (what each call was asked and answered)."""


def expand_matrix(cases: list[Case], config: RunConfig) -> list[tuple[Case, Unit]]:
    """Cases x arms x reps, rep-major so early results already cover every arm."""
    return [
        (case, Unit(case.id, arm, rep))
        for rep in range(config.reps)
        for case in cases
        for arm in config.arm_names
    ]


def import_loop() -> None:
    """Import the loop's graph (LangGraph) now, ahead of the first ``execute_unit``.

    Not imported with this module: a run's start imports it while the sandbox probe
    waits on the judge's children (see ``prepare_start``, and what it took off a 2-unit
    library run), instead of before the probe begins; ``critiquebench run`` imports it
    after its head start (``warm_start``) began those children, before it waits for
    Prefect's server.
    """
    from critiquebench.loop import run_loop

    del run_loop  # the import is the point: the graph module and LangGraph loaded


def execute_unit(case: Case, unit: Unit, deps: LoopDependencies, config: RunConfig) -> UnitRows:
    """Run the loop for one unit and turn its outcome into rows."""
    from critiquebench.loop import run_loop  # LangGraph: loaded once, see ``import_loop``

    settings = config.loop_settings(unit.arm)
    graph = None
    if settings.spec.critic:  # a critic of its own per unit, so a graph of its own too
        deps = dataclasses.replace(deps, critic=Critic(deps.provider, settings.critic))
    elif settings.spec.runs_graph:
        graph = _compiled(deps, settings.spec)
    started = time.perf_counter()
    outcome = run_loop(case, deps, settings, rep=unit.rep, graph=graph)
    elapsed = time.perf_counter() - started
    return outcome_rows(case, unit, outcome, config, elapsed, deps.provider.model_name)


@functools.lru_cache(maxsize=16)
def _compiled(deps: LoopDependencies, spec: ArmSpec) -> Any:
    """The loop's graph for an arm, compiled once per process and dependencies.

    Compiling took about a tenth of a unit's CPU on an instant model (544cd1b); a compiled
    graph keeps no state between invocations, so units and threads share it.
    """
    from critiquebench.loop import build_graph

    return build_graph(deps, LoopSettings(arm=spec))


def _identity(config: RunConfig, unit: Unit) -> Row:
    return {"run_id": config.run_id, "case_id": unit.case_id, "arm": unit.arm, "rep": unit.rep}


_FAILURE_FIELDS = tuple(field.name for field in dataclasses.fields(Failure))


def _failure_json(failures: tuple[Failure, ...]) -> str:
    # The fields are plain values: read one level deep, the same dicts as ``asdict``,
    # whose deep copy was a sixth of the run process's CPU of building a unit's rows.
    return json.dumps([{name: getattr(f, name) for name in _FAILURE_FIELDS} for f in failures])


def _findings_json(result: JudgeResult, kind: FailureKind) -> str:
    return json.dumps(
        [
            {"file": f.file, "line": f.line, "code": f.code, "message": f.message}
            for f in result.of_kind(kind)
        ]
    )


def _raw_json(result: JudgeResult) -> str:
    # Only the kinds the bounding rule lowered: "{}" for nearly every attempt.
    return json.dumps(result.bounded_kinds(), sort_keys=True)


def _attempt_row(identity: Row, attempt: Attempt) -> Row:
    result = attempt.result
    return {
        **identity,
        "iteration": attempt.iteration,
        "defects": attempt.defects,
        "defects_feedback": attempt.feedback_defects,
        "defects_total": attempt.defects_total,
        "defects_total_raw": result.defects_total_raw(),
        "defects_raw_by_kind": _raw_json(result),
        **{f"defects_{kind}": n for kind, n in result.defects_by_kind().items()},
        **{f"{kind}_findings": _findings_json(result, kind) for kind in STATIC_KINDS},
        "checks_passed": result.checks_passed,
        "checks_total": result.checks_total,
        "checks_inside": result.checks_inside,
        "judge_infrastructure_error": result.infrastructure_error,
        "artifact_hash": hashlib.sha256(attempt.artifact.encode()).hexdigest()[:16],
        "artifact": attempt.artifact,
        "failures": _failure_json(result.failures),
        "diff_summary": attempt.diff_summary,
        "critic_verdict": attempt.critic_verdict,
        "critic_findings": json.dumps(
            [f.message for f in attempt.feedback_failures if f.kind == "critic"]
        ),
        "findings_killed": attempt.findings_killed,
        "judge_latency_s": result.duration_s,
    }


def outcome_rows(
    case: Case,
    unit: Unit,
    outcome: LoopOutcome,
    config: RunConfig,
    elapsed_s: float,
    model: str,
) -> UnitRows:
    """The table rows of one finished unit."""
    identity = _identity(config, unit)
    final = outcome.final
    first = outcome.attempts[0] if outcome.attempts else final
    calls = [
        {
            **identity,
            "call_index": index,
            "iteration": call.iteration,
            "role": call.role,
            "model": call.model,
            "paid_tokens_in": call.tokens_in,
            "paid_tokens_out": call.tokens_out,
            "latency_s": call.latency_s,
            "cached": call.cached,
            "experiment_tokens_in": call.experiment_tokens_in,
            "experiment_tokens_out": call.experiment_tokens_out,
            "original_latency_s": call.experiment_latency_s,
            "error": call.error,
            "verifier_error": call.verifier_error,
            "parse_method": call.parse_method,
        }
        for index, call in enumerate(outcome.calls)
    ]
    model_latency_s = sum(call.experiment_latency_s for call in outcome.calls)
    paid_latency_s = sum(call.latency_s for call in outcome.calls)
    case_row: Row = {
        **identity,
        "suite": config.suite,
        "judge": case.judge,
        "judge_data": json.dumps(case.judge_data, sort_keys=True),
        "model": model,
        "defects_initial": first.defects,
        "defects_final": final.defects,
        "defects_feedback_final": final.feedback_defects,
        "defects_total_initial": first.defects_total,
        "defects_total_final": final.defects_total,
        "defects_total_initial_raw": first.result.defects_total_raw(),
        "defects_total_final_raw": final.result.defects_total_raw(),
        "final_raw_by_kind": _raw_json(final.result),
        **{f"final_{kind}": n for kind, n in final.result.defects_by_kind().items()},
        **{f"final_{kind}_findings": _findings_json(final.result, kind) for kind in STATIC_KINDS},
        "checks_total": len(case.checks),
        "passed": final.defects_total == 0 and outcome.error is None,
        "tests_passed": final.defects == 0 and outcome.error is None,
        "loops": outcome.retry_count,
        "attempts": len(outcome.attempts),
        "final_iteration": final.iteration,
        "halt_reason": outcome.halt,
        "escalated": outcome.escalated,
        # A cache hit takes microseconds; latency reports what the unit costs as an
        # experiment (the call's original latency), wall_s what this run took.
        "latency_s": elapsed_s - paid_latency_s + model_latency_s,
        "wall_s": elapsed_s,
        "model_latency_s": model_latency_s,
        "judge_latency_s": sum(a.result.duration_s for a in outcome.attempts),
        "tokens_in": outcome.tokens_in,
        "tokens_out": outcome.tokens_out,
        "calls": len(outcome.calls),
        "cached_calls": sum(1 for call in outcome.calls if call.cached),
        "verifier_errors": outcome.verifier_errors,
        "verifier_policy": config.verifier_policy,
        "findings_killed": outcome.findings_killed,
        "error": outcome.error,
        "final_artifact": final.artifact,
        "finished_at": dt.datetime.now(dt.UTC),
    }
    attempts = [_attempt_row(identity, attempt) for attempt in outcome.attempts]
    title = f"{unit.case_id} (arm {unit.arm}, rep {unit.rep})"
    record = escalation_markdown(title, outcome) if outcome.escalated else None
    transcripts = transcript_rows(identity, outcome.calls, outcome.attempts)
    return UnitRows(
        case=case_row,
        attempts=attempts,
        calls=calls,
        escalation_record=record,
        transcripts=transcripts,
    )
