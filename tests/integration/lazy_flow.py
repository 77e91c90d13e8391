"""The ab-matrix flow for tests, imported on first use.

Prefect reads its settings (PREFECT_HOME above all) once, when it is imported. The
test environment is set by conftest's session fixture, which runs after test modules
are collected, so no test module may import Prefect at collection time.
"""

from __future__ import annotations

from typing import Any


def run_ab_matrix(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """Call ``flows.ab_matrix.run_ab_matrix``, importing it (and Prefect) now."""
    from flows.ab_matrix import run_ab_matrix as run

    result: dict[str, Any] = run(*args, **kwargs)
    return result
