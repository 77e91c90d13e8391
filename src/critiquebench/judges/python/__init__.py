"""The Python judge: a candidate's checks planned in the parent (``_plan``), run in the
sandbox, read back as hostile bytes (``_interpret``), then ruff and mypy (``judges.static``).
"""

from critiquebench.judges.python._judge import (
    DEFAULT_STATIC,
    PythonJudge,
    probe_sandbox,
)
from critiquebench.judges.python._plan import PlannedCheck, plan_check, plan_checks, trusted_code

__all__ = [
    "DEFAULT_STATIC",
    "PlannedCheck",
    "PythonJudge",
    "plan_check",
    "plan_checks",
    "probe_sandbox",
    "trusted_code",
]
