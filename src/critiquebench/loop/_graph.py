"""The critique loop as a compiled LangGraph graph, and a function to run it."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from critiquebench.loop._nodes import (
    LoopDependencies,
    escalate,
    fix,
    make_generate,
    make_judge,
)
from critiquebench.loop._prompts import first_draft_messages
from critiquebench.loop._routing import Route, route_for
from critiquebench.loop._state import Attempt, LoopOutcome, LoopSettings, LoopState
from critiquebench.suites import Case


def _after_generate(state: LoopState) -> str:
    return "escalate" if state["error"] else "judge"


def _after_judge(state: LoopState) -> Route:
    return route_for(state["halt"])


def build_graph(deps: LoopDependencies, settings: LoopSettings) -> Any:
    """Compile the loop for an arm.

    Arm B: ``generate -> judge -> (END | fix -> generate | escalate)``.
    Arm A: ``generate -> judge -> END`` (judged once, for measurement only).
    """
    feedback_edge = settings.arm != "A"
    graph = StateGraph(LoopState)
    graph.add_node("generate", make_generate(deps))
    graph.add_node("judge", make_judge(deps, feedback_edge=feedback_edge))
    graph.add_node("escalate", escalate)
    graph.add_edge(START, "generate")
    graph.add_conditional_edges("generate", _after_generate, ["judge", "escalate"])
    if feedback_edge:
        graph.add_node("fix", fix)
        graph.add_conditional_edges(
            "judge", _after_judge, {"end": END, "fix": "fix", "escalate": "escalate"}
        )
        graph.add_edge("fix", "generate")
    else:
        graph.add_edge("judge", END)
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

    ``graph`` may be passed to reuse a compiled graph across cases.
    """
    compiled = graph if graph is not None else build_graph(deps, settings)
    final: LoopState = compiled.invoke(
        initial_state(case, settings, rep), {"recursion_limit": settings.recursion_limit()}
    )
    history = final["history"]
    best = final["best"]
    if best is None:
        # The first call failed: measure "no answer" so the unit still counts against its arm.
        result = deps.judge(case, "")
        best = Attempt(0, "", result, result.visible_to(settings.feedback_origins()), "")
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
    )
