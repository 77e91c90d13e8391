"""The sandbox every executing judge runs in: warm workers in bubblewrap, and one attempt's
request and retry.

``_pool`` starts and talks to the workers, ``_worker`` (the worker's own source) and
``_launcher`` (bubblewrap under a user namespace, as root) run inside; ``_attempt`` is the
request a judge sends and the one retry it allows.
"""

from critiquebench.judges.sandbox._attempt import attempt_request, judge_attempt
from critiquebench.judges.sandbox._pool import (
    FALLBACK_AS_ROOT,
    SANDBOX_VARIABLE,
    LazySandbox,
    RawAttempt,
    Sandbox,
    SandboxExtras,
    SandboxMode,
    SandboxUnavailable,
    detect_mode,
    fallback_refusal,
    is_full_sandbox,
)

__all__ = [
    "FALLBACK_AS_ROOT",
    "SANDBOX_VARIABLE",
    "LazySandbox",
    "RawAttempt",
    "Sandbox",
    "SandboxExtras",
    "SandboxMode",
    "SandboxUnavailable",
    "attempt_request",
    "detect_mode",
    "fallback_refusal",
    "is_full_sandbox",
    "judge_attempt",
]
