"""The sandbox every executing judge runs in, and what such a judge shares.

``_pool`` starts and talks to the warm workers; ``_worker`` (the worker's own source)
and ``_launcher`` (bubblewrap under a user namespace, as root) run inside. A judge
builds on :class:`SandboxedJudge` (its limits and its lazily started pool), sends
:func:`attempt_request` through :func:`judge_attempt` (the one retry), and reads the
hostile output back with :func:`read_events`, :func:`stalled` and
:func:`unfinished_failure`.
"""

from critiquebench.judges.sandbox._attempt import (
    CandidateCall,
    CheckRequest,
    ValueCheck,
    attempt_request,
    judge_attempt,
)
from critiquebench.judges.sandbox._judge import SandboxedJudge
from critiquebench.judges.sandbox._limits import SandboxLimits
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
from critiquebench.judges.sandbox._reading import read_events, stalled, unfinished_failure

__all__ = [
    "FALLBACK_AS_ROOT",
    "SANDBOX_VARIABLE",
    "CandidateCall",
    "CheckRequest",
    "LazySandbox",
    "RawAttempt",
    "Sandbox",
    "SandboxExtras",
    "SandboxLimits",
    "SandboxMode",
    "SandboxUnavailable",
    "SandboxedJudge",
    "ValueCheck",
    "attempt_request",
    "detect_mode",
    "fallback_refusal",
    "is_full_sandbox",
    "judge_attempt",
    "read_events",
    "stalled",
    "unfinished_failure",
]
