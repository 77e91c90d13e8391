"""What every judge that executes in the sandbox shares: its limits and its worker pool.

The pool is started on first use (detecting bubblewrap once), so a judge that never
judges (a dry run, a suite check) never pays for it; a pool given at construction
(tests, a proof's fresh judge) is used as is.
"""

from __future__ import annotations

from collections.abc import Callable

from critiquebench.judges.sandbox._limits import SandboxLimits
from critiquebench.judges.sandbox._pool import LazySandbox, Sandbox, SandboxExtras


class SandboxedJudge:
    """The base of a judge that runs attempts on sandbox workers (the Python and sql
    judges): ``limits`` fence each attempt, ``sandbox`` is the lazily started pool."""

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        sandbox: Sandbox | None = None,
        extras: Callable[[], SandboxExtras] | None = None,
    ) -> None:
        self.limits = limits or SandboxLimits()
        self._pool = LazySandbox(sandbox, extras)

    @property
    def sandbox(self) -> Sandbox:
        """The worker pool, started on first use (detecting bubblewrap once)."""
        return self._pool.get()

    @property
    def started_sandbox(self) -> Sandbox | None:
        """The pool if it was given or started already, else None (never starts it)."""
        return self._pool.started

    def describe(self) -> str:
        """The fences this judge applies, in words (for the runs table and the report)."""
        return self._pool.describe()

    def close(self) -> None:
        """Stop the sandbox workers (they also stop with this process)."""
        self._pool.close()
