"""Ctrl-C handling of `run`/`resume`: the first asks the run to stop, the second ends
the process at once with exit code 130 and the resume command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from critiquebench._cli._interrupt import resume_command

_TWICE = """
import os, signal, sys, time
from pathlib import Path
from critiquebench._cli._interrupt import stop_on_interrupt
out = Path(sys.argv[1])
with stop_on_interrupt(out, "r-1", "critiquebench resume r-1"):
    os.kill(os.getpid(), signal.SIGINT)
    while not (out / "r-1" / "process" / "stop").exists():
        time.sleep(0.01)
    print("asked to stop", flush=True)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(60)
print("not reached", flush=True)
"""


def test_first_ctrl_c_asks_to_stop_and_the_second_exits_at_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _TWICE, str(tmp_path)], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert done.stdout.splitlines() == ["asked to stop"]
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "interrupted; resume with: critiquebench resume r-1"
    )


def test_resume_command_names_the_output_only_when_it_is_not_the_default(tmp_path: Path) -> None:
    default = tmp_path / "data" / "runs"
    assert resume_command("r-1", default, default) == "critiquebench resume r-1"
    other = tmp_path / "my runs"
    assert resume_command("r-1", other, default) == (f"critiquebench resume r-1 --output '{other}'")
