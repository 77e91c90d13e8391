"""critiquebench: does a self-critique loop remove defects, at what cost, and when
does it stop paying?
"""

from critiquebench.judges import Failure, JudgeResult, PythonJudge, SandboxLimits
from critiquebench.loop import LoopDependencies, LoopOutcome, LoopSettings, build_graph, run_loop
from critiquebench.models import GenerationParams, Message, ModelProvider, provider_from_spec
from critiquebench.pipeline import ResultStore, RunConfig
from critiquebench.suites import Case, Check, load_suite

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
