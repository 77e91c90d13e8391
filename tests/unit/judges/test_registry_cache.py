"""Judges by name are looked up without rescanning every installed distribution."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from critiquebench.judges import _registry
from critiquebench.judges._registry import artifact_format, judge_factory


def _register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install a distribution that registers ``python2`` in the judges' entry-point group."""
    dist = tmp_path / "other_judge-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: other-judge\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[critiquebench.judges]\npython2 = critiquebench.judges:PythonJudge\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))


def test_the_registered_judges_are_read_once_per_search_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop asks for a case's artifact format at every prompt and reply; scanning
    # every installed distribution's metadata each time was a third of a replay run.
    scans: list[str] = []
    from importlib.metadata import entry_points as real

    def counted(group: str) -> Any:
        scans.append(group)
        return real(group=group)

    monkeypatch.setattr(_registry, "entry_points", counted)
    _registry._registered.cache_clear()
    _registry._factory.cache_clear()
    for _ in range(50):
        assert judge_factory("python") is _registry._builtin("python")
        artifact_format("python")
    assert scans == ["critiquebench.judges"]
    _register(tmp_path, monkeypatch)  # a new search path is read again, and finds it
    from critiquebench.judges import PythonJudge

    assert judge_factory("python2") is PythonJudge and len(scans) == 2
    _registry._registered.cache_clear()
    _registry._factory.cache_clear()


def test_a_bundled_judge_is_imported_only_when_asked_for() -> None:
    # A Python run must not pay for the json judge's jsonschema or the markdown parser.
    script = """
import sys
from critiquebench.judges import _registry
python = _registry._builtin("python")
others = sorted({"jsonschema", "markdown_it", "spellchecker"} & set(sys.modules))
print(python.__name__, others, _registry._builtin("json").__name__, "jsonschema" in sys.modules)
print(_registry._builtin("nope"), sorted(_registry._BUILTIN) == _registry.judge_names())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["PythonJudge [] JsonJudge True", "None True"]
