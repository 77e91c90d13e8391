"""Shared fixtures. Prefect is pointed at a throwaway home before any test imports it.

Nothing happens at import time, and the environment changes only through the
``prefect_home`` session fixture and, in the xdist controller, ``pytest_configure``
(which names the session's Prefect API to the workers); both are undone when the
session ends. Prefect reads
its settings once, when imported, so no test module may import Prefect (or flows/,
tasks/) at collection time: ``pytest_collection_finish`` refuses a session where one
did, since its state would land in the user's home folder.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from critiquebench.runtime.prefect_env import PREFECT_DEFAULTS
from critiquebench.runtime.project import CHART_BUNDLE_VARIABLE
from tests.prefect_state import migrated_state, save_migrated_state

if TYPE_CHECKING:
    from critiquebench.judges import PythonJudge


FILE_COST_S: dict[str, int] = {
    # measured
    "tests/integration/test_dask_runner.py": 1073,
    "tests/integration/test_quality.py": 574,
    "tests/unit/cli/test_project.py": 530,
    "tests/integration/test_planted_rates.py": 407,
    "tests/integration/test_ab_matrix_flow.py": 327,
    "tests/integration/test_object_store.py": 301,
    "tests/integration/test_progress_cli.py": 214,
    "tests/unit/analysis/test_canary_rate.py": 195,
    "tests/integration/test_html_report.py": 164,
    "tests/integration/test_humaneval_feedback.py": 155,
    "tests/integration/test_notebook.py": 118,
    "tests/unit/judges/test_static_life.py": 115,
    "tests/unit/cli/test_machine_output.py": 112,
    "tests/integration/test_run_views.py": 111,
    "tests/integration/test_selftest.py": 78,
    "tests/integration/test_import_arms.py": 71,
    "tests/integration/test_prefect_server.py": 68,
    "tests/unit/judges/test_static_speed.py": 64,
    "tests/unit/analysis/test_power.py": 56,
    "tests/unit/analysis/test_one_meaning.py": 47,
    "tests/sandbox/test_correctness.py": 40,
    "tests/unit/cli/test_cli_preflight.py": 39,
    "tests/unit/loop/test_loop_routing.py": 37,
    "tests/unit/loop/test_critic_arms.py": 36,
    "tests/unit/pipeline/test_warm_child.py": 36,
    "tests/unit/analysis/test_paired.py": 35,
    "tests/unit/analysis/test_bounded_report.py": 34,
    "tests/unit/loop/test_resample.py": 34,
    "tests/unit/cli/test_find_runs.py": 33,
    "tests/test_conftest.py": 33,
    "tests/sandbox/test_load.py": 31,
    "tests/unit/judges/test_sql_judge.py": 30,
    "tests/unit/loop/test_own_loop.py": 25,
    "tests/unit/loop/test_arms.py": 16,
    "tests/unit/pipeline/test_escalation_records.py": 15,
    # ran last in that run, at load ~10-15 (the load had fallen): measured
    "tests/integration/test_deployment.py": 262,
    "tests/integration/test_incomplete_run.py": 206,
    "tests/integration/test_json_suite_run.py": 150,
    "tests/integration/test_local_critic.py": 134,
    "tests/integration/test_interrupt_resume.py": 128,
    "tests/integration/test_resume_after_kill.py": 123,
    "tests/integration/test_markdown_run.py": 86,
    "tests/integration/test_run_like.py": 83,
    "tests/integration/test_local_model.py": 83,
    # not measured (the run was cut off): estimated from what they start (a Ray cluster;
    # a CLI run with its own temporary Prefect server)
    "tests/integration/test_ray_runner.py": 250,
    "tests/integration/test_secrets.py": 150,
}
"""Seconds one xdist worker spent in each slow file (module set-up included), measured in
a full run on a 2-core machine at load ~20, so only their order matters. Unlisted files
cost less and keep their collection order after these."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the slowest files first (longest-first scheduling).

    With ``--dist loadfile --no-loadscope-reorder`` (pyproject's addopts) xdist hands out
    files in this order; by default it orders them by their number of tests, which
    started the slow one- or two-test files (a CLI run, a Prefect flow, a real model)
    last, so one worker ran the final of them while the other sat idle. The sort is
    stable: tests keep their order within a file.
    """
    items.sort(key=lambda item: -FILE_COST_S.get(item.nodeid.split("::", 1)[0], 0))


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
        # The report's chart library too (one bundle per worker, ~2.4 CPU-s): else each
        # test's CLI run bundles it again in the cache folder of its own temporary folder.
        patch.setenv(CHART_BUNDLE_VARIABLE, str(home / "chart-bundle"))
        for name, value in PREFECT_DEFAULTS.items():
            if name not in os.environ:  # a setting the user chose wins, as in the CLI
                patch.setenv(name, value)
        yield home


SESSION_API_VARIABLE = "CRITIQUEBENCH_TEST_PREFECT_API"
"""Where the xdist controller tells its workers the session's Prefect API (see
``pytest_configure``). Not ``PREFECT_API_URL``: the CLI subprocesses of tests inherit the
environment, and those whose subject is the temporary server must not find an API."""
SESSION_STATE_VARIABLE = "CRITIQUEBENCH_TEST_PREFECT_STATE"
"""Where the controller leaves a copy of its server's migrated Prefect home (see
``tests/prefect_state.py``)."""


def pytest_configure(config: pytest.Config) -> None:
    """In the xdist controller, before any worker starts: one temporary Prefect API for
    the session's flow tests, on the product's own launcher (``start_temporary_server``).

    Each worker had started its own (``prefect_test_harness``): a migrated database and
    an idle server more per worker, ~30 CPU-s each over a suite, most of it spent while
    the workers started together. The server dies with this process (``spawn_tied``),
    after the workers, which may still be delivering their last records to it.
    """
    workers = getattr(config.option, "numprocesses", None)
    if hasattr(config, "workerinput") or not workers or SESSION_API_VARIABLE in os.environ:
        return
    from critiquebench.runtime.prefect_server import start_temporary_server

    home = Path(tempfile.mkdtemp(prefix="critiquebench-test-prefect-"))
    server = start_temporary_server({**PREFECT_DEFAULTS, **os.environ, "PREFECT_HOME": str(home)})
    os.environ[SESSION_API_VARIABLE] = server.api_url
    config.add_cleanup(partial(shutil.rmtree, home, ignore_errors=True))
    config.add_cleanup(server.stop)
    config.add_cleanup(partial(os.environ.pop, SESSION_API_VARIABLE, None))
    state = Path(tempfile.mkdtemp(prefix="critiquebench-test-prefect-state-"))
    os.environ[SESSION_STATE_VARIABLE] = str(state)
    config.add_cleanup(partial(shutil.rmtree, state, ignore_errors=True))
    config.add_cleanup(partial(os.environ.pop, SESSION_STATE_VARIABLE, None))
    copier = partial(save_migrated_state, home, state, partial(server.wait_ready, 300))
    threading.Thread(target=copier, name="prefect-state-copy", daemon=True).start()


@pytest.fixture(scope="session")
def prefect_harness(prefect_home: Path) -> Iterator[None]:
    """The session's Prefect API for flow tests: the controller's (``pytest_configure``),
    else one this process starts for its session (a run without xdist workers).

    Its start may be waited for up to 5 minutes: on a machine shared with other work
    (load ~25 on 2 cores) a start took more than 2 minutes, and every flow test then
    failed at set-up though nothing was wrong but the wait.
    """
    from prefect.context import _temporary_global_settings_context, get_settings_context
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from critiquebench.runtime.prefect_server import _become_ready, start_temporary_server

    with ExitStack() as stack:
        url = os.environ.get(SESSION_API_VARIABLE)
        process = None  # the controller's server is its child, not this process's
        if url is None:
            server = start_temporary_server(os.environ)  # its database in prefect_home
            stack.callback(server.stop)
            url, process = server.api_url, server.process
        _become_ready(url, process, timeout_s=300)
        stack.enter_context(temporary_settings(updates={PREFECT_API_URL: url}))
        # As Prefect's own test harness does: threads and contexts copied before this
        # point (which see the process-global settings, not this context's) use it too.
        stack.enter_context(_temporary_global_settings_context(get_settings_context()))
        _load_the_checks_and_reports_modules()
        yield


def _load_the_checks_and_reports_modules() -> None:
    """Load here what a run's check and report children would import (see
    ``critiquebench.runtime.warm_child``): this worker runs flows in itself, one after
    the other, and a process that has loaded them checks and reports in itself instead
    of importing them again in two children per run. Measured: a 12-unit run's check and
    report took 2.6 CPU-s here instead of 9.7 with children (median of 5 interleaved
    pairs, load 3-6), for ~5 CPU-s once. The children's path stays proven by the runs
    made in CLI subprocesses and by test_warm_child / test_quality."""
    import critiquebench.quality._suites  # noqa: F401
    from critiquebench.pipeline._report_child import LOADED_MODULES, warm_up
    from critiquebench.quality._isolated import _HEAVY
    from critiquebench.runtime.warm_child import imported

    warm_up()
    assert imported(_HEAVY) and imported(LOADED_MODULES), "a module the children load moved"


@pytest.fixture(scope="session")
def migrated_prefect_state() -> Path | None:
    """A Prefect home whose database is migrated (no run in it), to copy into the home of
    a test that starts a server of its own (``tests.prefect_state.seed_home``); None
    without xdist (no session server to copy) or when no copy could be taken."""
    state = os.environ.get(SESSION_STATE_VARIABLE)
    return migrated_state(Path(state), timeout_s=300) if state else None


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
