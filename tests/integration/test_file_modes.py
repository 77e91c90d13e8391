"""Written files honour the umask: a shared results folder stays readable to the group.

Every file of a run (Parquet tables, escalation records, report.json, report.html,
lessons.md) is written through a temporary file renamed into place; it must end
with the mode any new file gets, 0666 less the umask, not the temporary's 0600.
The run is built in a child process so the umask is that process's own.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
_BUILD = """
import sys
from pathlib import Path
from critiquebench.analysis import write_reports
from tests.integration.replay_run import build_replay_run
output = Path(sys.argv[1])
build_replay_run(output, "modes", limit=4, reps=1)
write_reports(output, "modes")
"""


@pytest.mark.parametrize("umask", [0o022, 0o027], ids=["umask-022", "umask-027"])
def test_every_written_file_gets_0666_less_the_umask(tmp_path: Path, umask: int) -> None:
    output = tmp_path / "runs"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_ROOT / "src"), str(_ROOT)])}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(output)], cwd=_ROOT, env=env, umask=umask,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = output / "modes"
    files = sorted(path for path in run.rglob("*") if path.is_file())
    names = {path.relative_to(run).parts[0] for path in files}
    assert {"runs", "cases", "attempts", "calls", "escalations"} <= names
    assert {"report.json", "report.html", "lessons.md", "report_units"} <= names
    modes = {str(path.relative_to(run)): stat.S_IMODE(path.stat().st_mode) for path in files}
    assert set(modes.values()) == {0o666 & ~umask}, modes
    assert not [path for path in files if path.name.startswith(".")]  # no temporaries left
