"""tests/conftest.py does no work at import and sets the environment only in a fixture."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
    "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
}


def test_importing_conftest_changes_nothing(tmp_path: Path) -> None:
    probe = (
        "import os, sys\n"
        "before = dict(os.environ)\n"
        "import tests.conftest\n"
        "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())\n"
        "assert 'prefect' not in sys.modules\n"
    )
    env = {**_ENV, "TMPDIR": str(tmp_path)}  # anything made in the temp folder lands here
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_session_runs_with_a_throwaway_prefect_home(prefect_home: Path) -> None:
    assert os.environ["PREFECT_HOME"] == str(prefect_home)
    assert prefect_home.name.startswith("prefect-home")
    assert not prefect_home.is_relative_to(Path.home())
    assert os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"


def test_a_module_importing_prefect_at_collection_is_refused(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import prefect_home, pytest_collection_finish  # noqa: F401\n"
    )
    (tmp_path / "test_eager.py").write_text("import prefect\n\n\ndef test_x():\n    pass\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, env=_ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 4, output  # pytest's usage error
    assert "imported Prefect while being collected" in output


def test_the_slowest_files_are_collected_first_keeping_each_files_order() -> None:
    from types import SimpleNamespace

    from tests.conftest import FILE_COST_S, pytest_collection_modifyitems

    slowest = max(FILE_COST_S, key=FILE_COST_S.__getitem__)
    names = ["tests/a.py::one", f"{slowest}::first", "tests/a.py::two", f"{slowest}::second"]
    items = [SimpleNamespace(nodeid=name) for name in names]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [names[1], names[3], names[0], names[2]]
