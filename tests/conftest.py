"""Shared fixtures. Prefect is pointed at a throwaway home before anything imports it."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.prefect_env import configure_prefect_environment

_PREFECT_HOME = Path(tempfile.mkdtemp(prefix="cb-test-prefect-"))


def pytest_configure(config: pytest.Config) -> None:
    # Test modules import Prefect at collection time, before any fixture could run,
    # so the environment is set in this hook; the folder is removed at the end.
    os.environ["PREFECT_HOME"] = str(_PREFECT_HOME)
    configure_prefect_environment(_PREFECT_HOME)
    # The judge's mypy cache goes to the same throwaway folder, not the project's.
    os.environ["CRITIQUEBENCH_MYPY_CACHE"] = str(_PREFECT_HOME / "mypy-cache")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_PREFECT_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """A temporary Prefect API for flow tests (takes ~10 s to start, so one per session)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
