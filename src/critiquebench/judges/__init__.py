"""Deterministic, tool-grounded judges that count an artifact's defects."""

from critiquebench.judges._failure import (
    FAILURE_KINDS,
    STATIC_KINDS,
    TEST_KINDS,
    Failure,
    FailureKind,
    JudgeResult,
)
from critiquebench.judges._plan import PlannedCheck, plan_check, plan_checks
from critiquebench.judges._python import DEFAULT_STATIC, PythonJudge, SandboxLimits, probe_sandbox
from critiquebench.judges._registry import (
    DEFAULT_JUDGE,
    ENTRY_POINT_GROUP,
    Judge,
    JudgeFactory,
    JudgeSet,
    UnknownJudgeError,
    judge_factory,
    judge_names,
)
from critiquebench.judges._sandbox import SandboxMode, detect_mode, is_full_sandbox
from critiquebench.judges._static import (
    MYPY_FLAGS,
    RUFF_RULES,
    StaticChecker,
    StaticReport,
    StaticSettings,
)

__all__ = [
    "DEFAULT_JUDGE",
    "DEFAULT_STATIC",
    "ENTRY_POINT_GROUP",
    "FAILURE_KINDS",
    "MYPY_FLAGS",
    "RUFF_RULES",
    "STATIC_KINDS",
    "TEST_KINDS",
    "Failure",
    "FailureKind",
    "Judge",
    "JudgeFactory",
    "JudgeResult",
    "JudgeSet",
    "PlannedCheck",
    "PythonJudge",
    "SandboxLimits",
    "SandboxMode",
    "StaticChecker",
    "StaticReport",
    "StaticSettings",
    "UnknownJudgeError",
    "detect_mode",
    "is_full_sandbox",
    "judge_factory",
    "judge_names",
    "plan_check",
    "plan_checks",
    "probe_sandbox",
]
