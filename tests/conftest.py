"""Shared fixtures. Prefect is pointed at a throwaway home before any test imports it.

Nothing happens at import time, and the environment changes only through the
``prefect_home`` session fixture (undone at the end of the session). Prefect reads
its settings once, when imported, so no test module may import Prefect (or flows/,
tasks/) at collection time: ``pytest_collection_finish`` refuses a session where one
did, since its state would land in the user's home folder.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from critiquebench.runtime.prefect_env import PREFECT_DEFAULTS

if TYPE_CHECKING:
    from critiquebench.judges import PythonJudge


def pytest_collection_finish(session: pytest.Session) -> None:
    if "prefect" in sys.modules:
        raise pytest.UsageError(
            "a test module imported Prefect while being collected, before the prefect_home "
            "fixture could set PREFECT_HOME: import it inside the test (see "
            "tests/integration/lazy_flow.py)"
        )


@pytest.fixture(scope="session", autouse=True)
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A throwaway Prefect home and quiet, local-only Prefect settings for the session."""
    home = tmp_path_factory.mktemp("prefect-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PREFECT_HOME", str(home))
        # The judge's mypy cache goes to the session's throwaway folder, not the project's.
        patch.setenv("CRITIQUEBENCH_MYPY_CACHE", str(home / "mypy-cache"))
        for name, value in PREFECT_DEFAULTS.items():
            if name not in os.environ:  # a setting the user chose wins, as in the CLI
                patch.setenv(name, value)
        yield home


@pytest.fixture(scope="session")
def prefect_harness(prefect_home: Path) -> Iterator[None]:
    """A temporary Prefect API for flow tests (takes ~10 s to start, so one per session).

    Its start may wait up to 5 minutes: on a machine shared with other work (load ~25 on
    2 cores) it took more than the 2 minutes allowed before, and every flow test of the
    worker then failed at setup, though nothing was wrong but the wait.
    """
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=300):
        yield


@pytest.fixture(scope="session")
def prefect_api_url(prefect_harness: None) -> str:
    """The session's Prefect API, for CLI subprocesses (``PREFECT_API_URL`` in their env).

    A CLI given an API starts no temporary server of its own: the tests whose subject is
    not that server save its start-up and migrations (~10 s of CPU) per run.
    """
    from prefect.settings import PREFECT_API_URL

    url: str | None = PREFECT_API_URL.value()
    assert url, "the Prefect test harness set no API URL"
    return url


@pytest.fixture(scope="module")
def judge() -> Iterator[PythonJudge]:
    """One default ``PythonJudge`` for a test module, closed after it, as a run shares one.

    A judge starts sandbox workers and the ruff and mypy daemons on first use: a new one
    in each test cost ~1-2 s of CPU per test (most of test_loop_routing's time). Tests
    about a judge's own start, limits or close build their own. (tests/sandbox keeps its
    own ``judge``, with tighter limits and its bubblewrap assertion.)
    """
    from critiquebench.judges import PythonJudge

    instance = PythonJudge()
    try:
        yield instance
    finally:
        instance.close()
