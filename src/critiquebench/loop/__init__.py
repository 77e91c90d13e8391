"""The structural self-critique loop (LangGraph).

The graph (``_graph``) is imported on first use: LangGraph takes about a second to
import, and settings, checks and reports need only the loop's types.
"""

from typing import TYPE_CHECKING

from critiquebench.loop._arms import (
    BASELINE,
    BUILTIN_ARMS,
    FEEDBACK_SOURCES,
    RESAMPLE,
    ArmSpec,
    FeedbackSource,
    OwnLoop,
)
from critiquebench.loop._extract import (
    MAX_DIFF_LINES,
    diff_summary,
    extract_code,
    line_changes,
    normalise,
)
from critiquebench.loop._nodes import LoopDependencies, provider_error, sampling_seed
from critiquebench.loop._own import RecordingProvider, run_own_loop
from critiquebench.loop._prompts import first_draft_messages, fix_messages
from critiquebench.loop._resample import DRAWS_PER_CALL, draw_seed, max_draws, run_resample
from critiquebench.loop._resolve import (
    ENTRY_POINT_GROUP,
    ArmError,
    arm_name,
    available_arms,
    check_token,
    describe_arms,
    resolve_arm,
)
from critiquebench.loop._routing import best_attempt, decide_halt, route_for
from critiquebench.loop._state import (
    ARMS,
    ESCALATING_REASONS,
    HALT_REASONS,
    INFRASTRUCTURE_ERROR_PREFIXES,
    RENAMED_HALTS,
    Attempt,
    CallRecord,
    Escalation,
    FeedbackMode,
    HaltReason,
    LoopOutcome,
    LoopSettings,
    current_halt,
    empty_attempt,
)
from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.loop._graph import build_graph, initial_state, run_loop

__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(("build_graph", "initial_state", "run_loop"), "_graph")
)

__all__ = [
    "ARMS",
    "BASELINE",
    "BUILTIN_ARMS",
    "DRAWS_PER_CALL",
    "ENTRY_POINT_GROUP",
    "ESCALATING_REASONS",
    "FEEDBACK_SOURCES",
    "HALT_REASONS",
    "INFRASTRUCTURE_ERROR_PREFIXES",
    "MAX_DIFF_LINES",
    "RENAMED_HALTS",
    "RESAMPLE",
    "ArmError",
    "ArmSpec",
    "Attempt",
    "CallRecord",
    "Escalation",
    "FeedbackMode",
    "FeedbackSource",
    "HaltReason",
    "LoopDependencies",
    "LoopOutcome",
    "LoopSettings",
    "OwnLoop",
    "RecordingProvider",
    "arm_name",
    "available_arms",
    "best_attempt",
    "build_graph",
    "check_token",
    "current_halt",
    "decide_halt",
    "describe_arms",
    "diff_summary",
    "draw_seed",
    "empty_attempt",
    "extract_code",
    "first_draft_messages",
    "fix_messages",
    "initial_state",
    "line_changes",
    "max_draws",
    "normalise",
    "provider_error",
    "resolve_arm",
    "route_for",
    "run_loop",
    "run_own_loop",
    "run_resample",
    "sampling_seed",
]
