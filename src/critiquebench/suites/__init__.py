"""Suites of cases: bundled (``basic``, ``humaneval``) or user JSONL files."""

from critiquebench.suites._case import Case, Check, CheckOrigin
from critiquebench.suites._humaneval import load_humaneval
from critiquebench.suites._jsonl import SuiteFormatError, load_jsonl_suite
from critiquebench.suites._registry import BUNDLED_SUITES, load_suite

__all__ = [
    "BUNDLED_SUITES",
    "Case",
    "Check",
    "CheckOrigin",
    "SuiteFormatError",
    "load_humaneval",
    "load_jsonl_suite",
    "load_suite",
]
