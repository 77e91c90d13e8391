"""Where a project's files live, and the defaults every command shares.

The *project root* is, in this order:

1. the folder named by ``CRITIQUEBENCH_HOME`` (deployments set it, see prefect.yaml);
2. the nearest folder, from the current one upwards, that holds a ``.critiquebench``
   marker or a ``pyproject.toml`` with a ``[tool.critiquebench]`` table;
3. otherwise the current folder.

Results (``data/runs``), the call cache (``data/cache``) and the price table
(``data/prices.json``) resolve against it, so a command run from a subfolder of a
project reads and writes the project's files. Each is settable by option or by
environment variable (``CRITIQUEBENCH_OUTPUT``, ``CRITIQUEBENCH_CACHE_DIR``,
``CRITIQUEBENCH_PRICES``). Without a project price table the one shipped inside the
package is used. Prefect's state goes to ``<root>/.prefect`` inside a project and to
a per-user state folder outside one, so no command leaves a ``.prefect/`` behind in
an arbitrary folder (``PREFECT_HOME`` overrides both).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

DEFAULT_TARGET = 0.80
"""The acceptance target: the defect reduction (a fraction) an arm must reach."""

RUNS_DIR = Path("data/runs")
CACHE_DIR = Path("data/cache")
PRICES_FILE = Path("data/prices.json")
PREFECT_DIR = Path(".prefect")
PACKAGED_PRICES = Path(__file__).parent.parent / "data" / "prices.json"
"""The default price table shipped inside the package (used when a project has none)."""

HOME_VARIABLE = "CRITIQUEBENCH_HOME"
OUTPUT_VARIABLE = "CRITIQUEBENCH_OUTPUT"
CACHE_VARIABLE = "CRITIQUEBENCH_CACHE_DIR"
PRICES_VARIABLE = "CRITIQUEBENCH_PRICES"
CHART_BUNDLE_VARIABLE = "CRITIQUEBENCH_CHART_BUNDLE_DIR"
"""The folder of report.html's chart bundle (see ``analysis.render._charts.bundle_path``)."""
MARKER = ".critiquebench"


def _declares_project(pyproject: Path) -> bool:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False  # an unreadable pyproject.toml marks nothing
    tool = data.get("tool")
    return isinstance(tool, dict) and "critiquebench" in tool


def find_project_root(start: Path) -> Path | None:
    """The nearest folder from ``start`` upwards marked as a critiquebench project."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / MARKER).exists():
            return folder
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _declares_project(pyproject):
            return folder
    return None


def project_root(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """The project root (see the module docstring); the current folder when none is found."""
    env = os.environ if environ is None else environ
    if env.get(HOME_VARIABLE):
        return Path(env[HOME_VARIABLE]).resolve()
    here = Path.cwd() if cwd is None else cwd
    return find_project_root(here) or here.resolve()


def _setting(variable: str, default: Path, environ: Mapping[str, str] | None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(variable):
        return Path(env[variable])
    return project_root(env) / default


def _store_setting(variable: str, default: Path, environ: Mapping[str, str] | None) -> Path | str:
    env = os.environ if environ is None else environ
    if "://" in env.get(variable, ""):
        return env[variable]  # a URL stays text: Path would make s3://b/p into s3:/b/p
    return _setting(variable, default, environ)


def default_output(environ: Mapping[str, str] | None = None) -> Path | str:
    """``$CRITIQUEBENCH_OUTPUT`` (a folder, or an fsspec URL such as ``s3://bucket/runs``,
    returned as text), else ``data/runs`` under the project root."""
    return _store_setting(OUTPUT_VARIABLE, RUNS_DIR, environ)


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path | str:
    """``$CRITIQUEBENCH_CACHE_DIR`` (a folder or an fsspec URL, as text), else
    ``data/cache`` under the project root."""
    return _store_setting(CACHE_VARIABLE, CACHE_DIR, environ)


def local_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The cache folder on this machine's disk, for caches only a local process uses
    (the judge's mypy cache, report.html's chart bundle): ``$CRITIQUEBENCH_CACHE_DIR``
    unless it names an object store, else ``data/cache`` under the project root."""
    chosen = default_cache_dir(environ)
    env = os.environ if environ is None else environ
    return chosen if isinstance(chosen, Path) else project_root(env) / CACHE_DIR


def default_prices(environ: Mapping[str, str] | None = None) -> Path:
    """``$CRITIQUEBENCH_PRICES``, else the project's ``data/prices.json`` if it exists,
    else the price table shipped with critiquebench."""
    path = _setting(PRICES_VARIABLE, PRICES_FILE, environ)
    env = os.environ if environ is None else environ
    if env.get(PRICES_VARIABLE) or path.exists():
        return path
    return PACKAGED_PRICES


def default_prefect_home(environ: Mapping[str, str] | None = None) -> Path:
    """``<root>/.prefect`` inside a project, else a per-user state folder.

    Outside a project the current folder is nobody's: Prefect's database then goes
    to ``$XDG_STATE_HOME/critiquebench/prefect`` (``~/.local/state/...`` by default).
    """
    env = os.environ if environ is None else environ
    if env.get(HOME_VARIABLE):
        return Path(env[HOME_VARIABLE]).resolve() / PREFECT_DIR
    found = find_project_root(Path.cwd())
    if found is not None:
        return found / PREFECT_DIR
    state = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "critiquebench" / "prefect"
