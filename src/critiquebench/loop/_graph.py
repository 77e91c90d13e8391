"""The critique loop as a compiled LangGraph graph, and a function to run it."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from critiquebench.loop._nodes import (
    LoopDependencies,
    escalate,
    fix,
    make_critique,
    make_generate,
    make_judge,
)
from critiquebench.loop._own import run_own_loop
from critiquebench.loop._prompts import first_draft_messages
from critiquebench.loop._resample import run_resample
from critiquebench.loop._routing import Route, route_for
from critiquebench.loop._state import LoopOutcome, LoopSettings, LoopState, empty_attempt
from critiquebench.suites import Case


def _after_generate(state: LoopState) -> str:
    return "escalate" if state["error"] else "judge"


def _after_judge(state: LoopState) -> Route:
    return route_for(state["halt"])


def _after_measure(state: LoopState) -> str:
    """Where a judge that does not decide hands over: escalate on an infrastructure error."""
    return "escalate" if state["error"] else "next"


def build_graph(deps: LoopDependencies, settings: LoopSettings) -> Any:
    """Compile the loop for an arm, wired as its spec says (``settings.spec``).

    Nothing feeds back (A): ``generate -> judge -> END`` (judged once, for measurement).
    Tests (B): ``generate -> judge -> (END | fix -> generate | escalate)``.
    A critic (C, D, E): ``generate -> judge -> critique -> (END | fix -> generate |
    escalate)``; the judge still measures every arm, the critic decides what the
    fixer sees. An infrastructure error (a failed model call, a judge that could not
    judge) goes to ``escalate`` from any node, with ``halt = error``.
    """
    spec = settings.spec
    if not spec.runs_graph:
        raise ValueError(f"arm {spec.name} is not a graph's loop: run it with run_loop")
    graph = StateGraph(LoopState)
    graph.add_node("generate", make_generate(deps))
    graph.add_node("judge", make_judge(deps, decides=spec.fixes and not spec.critic))
    graph.add_node("escalate", escalate)
    graph.add_edge(START, "generate")
    graph.add_conditional_edges("generate", _after_generate, ["judge", "escalate"])
    if not spec.fixes:
        graph.add_conditional_edges("judge", _after_measure, {"next": END, "escalate": "escalate"})
    else:
        decider = "judge"
        if spec.critic:
            graph.add_node("critique", make_critique(deps))
            graph.add_conditional_edges(
                "judge", _after_measure, {"next": "critique", "escalate": "escalate"}
            )
            decider = "critique"
        graph.add_node("fix", fix)
        graph.add_conditional_edges(
            decider, _after_judge, {"end": END, "fix": "fix", "escalate": "escalate"}
        )
        graph.add_edge("fix", "generate")
    graph.add_edge("escalate", END)
    return graph.compile()


def initial_state(case: Case, settings: LoopSettings, rep: int) -> LoopState:
    """The state a loop starts from."""
    return LoopState(
        case=case,
        settings=settings,
        rep=rep,
        prompt=first_draft_messages(case),
        artifact="",
        retry_count=0,
        failures=(),
        history=[],
        calls=[],
        tokens_in=0,
        tokens_out=0,
        latency_s=0.0,
        best=None,
        halt=None,
        error=None,
        escalation=None,
        verifier_errors=0,
        findings_killed=0,
    )


def run_loop(
    case: Case,
    deps: LoopDependencies,
    settings: LoopSettings,
    *,
    rep: int = 0,
    graph: Any | None = None,
) -> LoopOutcome:
    """Run the loop on one case and return its outcome.

    ``graph`` may be passed to reuse a compiled graph across cases. An arm with a loop
    of its own (``ArmSpec.loop``) runs that loop instead of the graph, a resampling
    arm (``ArmSpec.resamples``) draws its fresh drafts.
    """
    if settings.spec.own_loop:
        return run_own_loop(case, deps, settings.spec, rep, settings.feedback)
    if settings.spec.resamples:
        return run_resample(case, deps, settings, rep)
    compiled = graph if graph is not None else build_graph(deps, settings)
    final: LoopState = compiled.invoke(
        initial_state(case, settings, rep), {"recursion_limit": settings.recursion_limit()}
    )
    history = final["history"]
    best = final["best"]
    if best is None:
        # The first call failed: there is nothing to measure. The unit carries its error
        # and is excluded from the statistics; an empty placeholder fills the row.
        best = empty_attempt(case)
    return LoopOutcome(
        case_id=case.id,
        final=best,
        attempts=tuple(history),
        calls=tuple(final["calls"]),
        halt=final["halt"] or "error",
        retry_count=final["retry_count"],
        tokens_in=final["tokens_in"],
        tokens_out=final["tokens_out"],
        error=final["error"],
        escalation=final["escalation"],
        verifier_errors=final["verifier_errors"],
        findings_killed=final["findings_killed"],
    )
