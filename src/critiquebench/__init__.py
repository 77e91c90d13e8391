"""critiquebench: does a self-critique loop remove defects, at what cost, and when
does it stop paying?

The names below are imported on first use, so ``import critiquebench`` (and every
command line start) stays fast: the loop pulls in LangGraph, the store pyarrow.
"""

from typing import TYPE_CHECKING

from critiquebench.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from critiquebench.judges import Failure, JudgeResult, PythonJudge, SandboxLimits
    from critiquebench.loop import (
        LoopDependencies,
        LoopOutcome,
        LoopSettings,
        build_graph,
        run_loop,
    )
    from critiquebench.models import GenerationParams, Message, ModelProvider, provider_from_spec
    from critiquebench.pipeline import ResultStore, RunConfig
    from critiquebench.suites import Case, Check, load_suite

_LAZY = {
    **dict.fromkeys(("Failure", "JudgeResult", "PythonJudge", "SandboxLimits"), "judges"),
    **dict.fromkeys(
        ("LoopDependencies", "LoopOutcome", "LoopSettings", "build_graph", "run_loop"), "loop"
    ),
    **dict.fromkeys(
        ("GenerationParams", "Message", "ModelProvider", "provider_from_spec"), "models"
    ),
    **dict.fromkeys(("ResultStore", "RunConfig"), "pipeline"),
    **dict.fromkeys(("Case", "Check", "load_suite"), "suites"),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "Case",
    "Check",
    "Failure",
    "GenerationParams",
    "JudgeResult",
    "LoopDependencies",
    "LoopOutcome",
    "LoopSettings",
    "Message",
    "ModelProvider",
    "PythonJudge",
    "ResultStore",
    "RunConfig",
    "SandboxLimits",
    "build_graph",
    "load_suite",
    "provider_from_spec",
    "run_loop",
]
