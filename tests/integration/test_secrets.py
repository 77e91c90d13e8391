"""API keys never reach logs, Parquet, reports, escalation records, caches or Prefect state."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from critiquebench.suites import load_suite
from critiquebench.testing import StubModelServer, solver_responder
from tests.prefect_state import seed_home

pytestmark = pytest.mark.slow
FAKE_KEY = "sk-critiquebench-FAKE-9f3a1c77"
# Every Prefect log line is written, so a key in any of them would show. Lines are
# shipped in batches a minute apart, so every line the run logs is still queued when
# it ends: they must reach the API before its temporary server stops, not be retried
# against a stopped server for ~60 s with "Error logging to API" tracebacks.
_LOUDEST_LOGS = {"PREFECT_LOGGING_LEVEL": "DEBUG", "PREFECT_LOGGING_TO_API_BATCH_INTERVAL": "60"}


def test_a_recognisable_key_appears_in_no_output(
    tmp_path: Path, migrated_prefect_state: Path | None
) -> None:
    cases = load_suite("basic", limit=3)
    env = dict(os.environ)
    env.update(
        PREFECT_HOME=str(seed_home(tmp_path / "prefect", migrated_prefect_state)),
        OPENAI_API_KEY=FAKE_KEY,
        GEMINI_API_KEY=FAKE_KEY,
        GOOGLE_API_KEY=FAKE_KEY,
    )
    with StubModelServer(solver_responder(cases)) as stub:
        completed = subprocess.run(
            [
                str(Path(sys.executable).with_name("critiquebench")), "run", "--limit", "3",
                "--model", f"openai:stub@{stub.url}", "--output", "out", "--cache-dir", "cache",
                "--run-id", "secret-1",
            ],
            cwd=tmp_path, env={**env, **_LOUDEST_LOGS},
            capture_output=True, timeout=300,
        )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert b"Error logging to API" not in completed.stderr, completed.stderr[-2000:]
    needle = FAKE_KEY.encode()
    assert needle not in completed.stdout and needle not in completed.stderr
    scanned = 0
    for path in tmp_path.rglob("*"):
        if path.is_file():
            scanned += 1
            assert needle not in path.read_bytes(), f"the key leaked into {path}"
    assert scanned > 10  # Parquet tables, cache, Prefect database and logs were all read
