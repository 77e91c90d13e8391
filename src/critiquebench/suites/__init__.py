"""Suites of cases: bundled (``basic``, ``humaneval``) or user JSONL files."""

from critiquebench.suites._case import Case, Check, CheckOrigin
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
from critiquebench.suites._registry import BUNDLED_SUITES, load_suite

__all__ = [
    "BUNDLED_SUITES",
    "LENT_TAG_PREFIX",
    "Case",
    "Check",
    "CheckOrigin",
    "HumanEvalUnavailableError",
    "SuiteFormatError",
    "SuiteScan",
    "candidate_names",
    "check_is_informative",
    "feedback_cannot_fail",
    "load_humaneval",
    "load_jsonl_suite",
    "load_suite",
    "scan_jsonl_suite",
    "uninformative_reason",
]
