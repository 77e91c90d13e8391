"""The run's process reads tables and reports without loading charts, statistics or templates."""

from __future__ import annotations

import subprocess
import sys

import critiquebench.analysis as analysis


def test_connecting_and_reading_a_report_load_no_charts_statistics_or_templates() -> None:
    script = """
import sys
from critiquebench.analysis import RunReport, connect, read_report
print(sorted({"altair", "scipy", "jinja2", "vl_convert"} & set(sys.modules)))
from critiquebench.analysis import cluster_bootstrap_mean, mcnemar_exact
cluster_bootstrap_mean([[1.0, 2.0], [3.0, 4.0]], resamples=50, seed=1)
mcnemar_exact([True, False, True], [False, True, True])
print("scipy" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    # Nor do the statistics load scipy: their exact parts are ours (stats/_exact.py).
    assert done.stdout.split("\n")[:2] == ["[]", "False"]


def test_the_report_and_the_quality_suites_load_no_langgraph() -> None:
    # `report` and `check` name units and run statuses; the loop's graph is for running.
    script = """
import sys
from critiquebench.analysis import build_report, write_reports
import critiquebench.quality._suites
print(sorted(m for m in ("langgraph", "langchain_core") if m in sys.modules))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_public_name_resolves_to_its_module_s_object() -> None:
    for name in analysis.__all__:
        value = getattr(analysis, name)
        assert getattr(value, "__name__", name) == name or not callable(value), name
    assert set(analysis.__all__) == set(dir(analysis)) & set(analysis.__all__)
