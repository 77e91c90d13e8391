"""Great Expectations is imported with the libraries no suite calls left unexecuted."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SUITES_SCRIPT = """
import sys, types
import critiquebench.quality._suites
from critiquebench.quality._gx import OPTIONAL_BACKENDS
lazy = {name: type(sys.modules[name]) is not types.ModuleType for name in ("scipy.stats", "altair")}
print(sorted(name for name, deferred in lazy.items() if deferred))
print(sorted(name for name in OPTIONAL_BACKENDS if name in sys.modules))
import scipy.stats
print(round(float(scipy.stats.entropy([1, 1])), 4), type(sys.modules["scipy.stats"]).__name__)
import altair
print(altair.Chart.__name__)
import sqlalchemy
print(sqlalchemy.__name__)
"""


@pytest.fixture(scope="module")
def after_the_suites() -> list[str]:
    """What a fresh process that imported the suites printed (one process for the
    tests that read it: the import costs ~3 CPU-s)."""
    done = subprocess.run(
        [sys.executable, "-c", _SUITES_SCRIPT],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")


def test_the_suites_leave_scipy_stats_and_altair_unexecuted_until_used(
    after_the_suites: list[str],
) -> None:
    # Deferred while Great Expectations was imported; whole once something uses them.
    assert after_the_suites[0] == "['altair', 'scipy.stats']"
    assert after_the_suites[2:4] == ["0.6931 module", "Chart"]


def test_the_suites_leave_gx_s_optional_backends_out_and_importable_after(
    after_the_suites: list[str],
) -> None:
    assert after_the_suites[1] == "[]"
    assert after_the_suites[4] == "sqlalchemy"


def test_a_module_imported_before_is_left_as_it_is() -> None:
    script = """
import sys, types
import altair
from critiquebench.quality._gx import lazily_loaded
print("pyclbr" in sys.modules)
with lazily_loaded(("altair", "pyclbr")):
    import altair as again, pyclbr
print(again is altair, type(altair) is types.ModuleType, type(pyclbr) is types.ModuleType)
print(pyclbr.readmodule.__name__, type(pyclbr) is types.ModuleType)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["False", "True True False", "readmodule True"]


def test_a_package_imported_before_stays_importable_whole() -> None:
    script = """
import sys
import email
from critiquebench.quality._gx import without
with without(("email", "pyclbr")):
    import email.mime.text
    try:
        import pyclbr
    except ModuleNotFoundError as error:
        print("absent", error.name)
import pyclbr
print(email.mime.text.__name__, pyclbr.__name__)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["absent pyclbr", "email.mime.text pyclbr"]
