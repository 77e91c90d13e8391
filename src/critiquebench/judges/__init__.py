"""Deterministic, tool-grounded judges that count an artifact's defects."""

from critiquebench.judges._failure import (
    FAILURE_KINDS,
    Failure,
    FailureKind,
    JudgeResult,
)
from critiquebench.judges._plan import PlannedCheck, plan_check, plan_checks
from critiquebench.judges._python import PythonJudge, SandboxLimits, probe_sandbox
from critiquebench.judges._sandbox import SandboxMode, detect_mode, is_full_sandbox

__all__ = [
    "FAILURE_KINDS",
    "Failure",
    "FailureKind",
    "JudgeResult",
    "PlannedCheck",
    "PythonJudge",
    "SandboxLimits",
    "SandboxMode",
    "detect_mode",
    "is_full_sandbox",
    "plan_check",
    "plan_checks",
    "probe_sandbox",
]
