"""Deterministic, tool-grounded judges that count an artifact's defects."""

from critiquebench.judges._artifact import PYTHON_FORMAT, ArtifactFormat, PythonFormat
from critiquebench.judges._failure import (
    ARTIFACT_KINDS,
    DEFECT_GROUPS,
    FAILURE_KINDS,
    STATIC_KINDS,
    TEST_KINDS,
    Failure,
    FailureKind,
    JudgeResult,
    defect_group,
)
from critiquebench.judges._plain import (
    MAX_SAME_HASH,
    inert_text,
    markdown_code_span,
    markdown_fence,
    markdown_text,
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
    artifact_format,
    case_problems,
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
    "ARTIFACT_KINDS",
    "DEFAULT_JUDGE",
    "DEFAULT_STATIC",
    "DEFECT_GROUPS",
    "ENTRY_POINT_GROUP",
    "FAILURE_KINDS",
    "MAX_SAME_HASH",
    "MYPY_FLAGS",
    "PYTHON_FORMAT",
    "RUFF_RULES",
    "STATIC_KINDS",
    "TEST_KINDS",
    "ArtifactFormat",
    "Failure",
    "FailureKind",
    "Judge",
    "JudgeFactory",
    "JudgeResult",
    "JudgeSet",
    "PlannedCheck",
    "PythonFormat",
    "PythonJudge",
    "SandboxLimits",
    "SandboxMode",
    "StaticChecker",
    "StaticReport",
    "StaticSettings",
    "UnknownJudgeError",
    "artifact_format",
    "case_problems",
    "defect_group",
    "detect_mode",
    "inert_text",
    "is_full_sandbox",
    "judge_factory",
    "judge_names",
    "markdown_code_span",
    "markdown_fence",
    "markdown_text",
    "plan_check",
    "plan_checks",
    "probe_sandbox",
]
