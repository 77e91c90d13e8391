"""The structural self-critique loop (LangGraph).

The graph (``_graph``) is imported on first use: LangGraph takes about a second to
import, and settings, checks and reports need only the loop's types.
"""

from typing import TYPE_CHECKING

from critiquebench._lazy import lazy_exports
from critiquebench.loop._extract import diff_summary, extract_code, normalise
from critiquebench.loop._nodes import LoopDependencies, provider_error, sampling_seed
from critiquebench.loop._prompts import first_draft_messages, fix_messages
from critiquebench.loop._routing import best_attempt, decide_halt, route_for
from critiquebench.loop._state import (
    ARM_DESCRIPTIONS,
    ARMS,
    CRITIC_ARMS,
    ESCALATING_REASONS,
    HALT_REASONS,
    INFRASTRUCTURE_ERROR_PREFIXES,
    Arm,
    Attempt,
    CallRecord,
    Escalation,
    FeedbackMode,
    HaltReason,
    LoopOutcome,
    LoopSettings,
)

if TYPE_CHECKING:
    from critiquebench.loop._graph import build_graph, initial_state, run_loop

__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(("build_graph", "initial_state", "run_loop"), "_graph")
)

__all__ = [
    "ARMS",
    "ARM_DESCRIPTIONS",
    "CRITIC_ARMS",
    "ESCALATING_REASONS",
    "HALT_REASONS",
    "INFRASTRUCTURE_ERROR_PREFIXES",
    "Arm",
    "Attempt",
    "CallRecord",
    "Escalation",
    "FeedbackMode",
    "HaltReason",
    "LoopDependencies",
    "LoopOutcome",
    "LoopSettings",
    "best_attempt",
    "build_graph",
    "decide_halt",
    "diff_summary",
    "extract_code",
    "first_draft_messages",
    "fix_messages",
    "initial_state",
    "normalise",
    "provider_error",
    "route_for",
    "run_loop",
    "sampling_seed",
]
