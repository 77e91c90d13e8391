"""Suites of cases: bundled (``basic``, ``humaneval``) or user JSONL files."""

from critiquebench.judges import Case, Check, CheckOrigin
from critiquebench.suites._canary import (
    CANARY_PREFIX,
    CanaryCheck,
    CanaryError,
    canary_cases,
    canary_check,
    is_canary,
    make_canary,
    with_canaries,
)
from critiquebench.suites._humaneval import (
    LENT_TAG_PREFIX,
    HumanEvalUnavailableError,
    load_humaneval,
)
from critiquebench.suites._informative import (
    candidate_names,
    check_is_informative,
    feedback_cannot_fail,
    uninformative_reason,
)
from critiquebench.suites._jsonl import (
    SuiteFormatError,
    SuiteScan,
    load_jsonl_suite,
    scan_jsonl_suite,
)
from critiquebench.suites._registry import BUNDLED_JSONL, BUNDLED_SUITES, load_suite
from critiquebench.suites._selection import CaseSelection, SelectionError, select_cases
from critiquebench.suites._validate import (
    SuiteProblem,
    SuiteValidation,
    failing_references,
    uninformative_feedback,
    validate_suite,
)

__all__ = [
    "BUNDLED_JSONL",
    "BUNDLED_SUITES",
    "CANARY_PREFIX",
    "LENT_TAG_PREFIX",
    "CanaryCheck",
    "CanaryError",
    "Case",
    "CaseSelection",
    "Check",
    "CheckOrigin",
    "HumanEvalUnavailableError",
    "SelectionError",
    "SuiteFormatError",
    "SuiteProblem",
    "SuiteScan",
    "SuiteValidation",
    "canary_cases",
    "canary_check",
    "candidate_names",
    "check_is_informative",
    "failing_references",
    "feedback_cannot_fail",
    "is_canary",
    "load_humaneval",
    "load_jsonl_suite",
    "load_suite",
    "make_canary",
    "scan_jsonl_suite",
    "select_cases",
    "uninformative_feedback",
    "uninformative_reason",
    "validate_suite",
    "with_canaries",
]
