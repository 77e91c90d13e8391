"""Deterministic, tool-grounded judges that count an artifact's defects."""

from critiquebench.judges._failure import (
    FAILURE_KINDS,
    Failure,
    FailureKind,
    JudgeResult,
)
from critiquebench.judges._python import PythonJudge, SandboxLimits, probe_sandbox

__all__ = [
    "FAILURE_KINDS",
    "Failure",
    "FailureKind",
    "JudgeResult",
    "PythonJudge",
    "SandboxLimits",
    "probe_sandbox",
]
