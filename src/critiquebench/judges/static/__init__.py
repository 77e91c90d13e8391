"""Lint (ruff) and type (mypy) findings of a Python artifact, on warm servers.

``_checker`` is the :class:`StaticChecker` the Python judge uses; ``_ruff_server`` and
mypy's update loop (``_mypy_loop``) run under ``_dmypy_keeper`` (a process that makes
them die with their starter); ``_evasion`` finds code hidden from the checkers, ``_calibration`` the
findings that are not the answer's; both walk the tree with ``_tree``'s ``child_nodes``.
"""

from critiquebench.judges.static._checker import (
    MYPY_FLAGS,
    RUFF_IGNORED,
    RUFF_RULES,
    StaticChecker,
    StaticReport,
    StaticSettings,
)

__all__ = [
    "MYPY_FLAGS",
    "RUFF_IGNORED",
    "RUFF_RULES",
    "StaticChecker",
    "StaticReport",
    "StaticSettings",
]
