"""The run command's process: what it loads ahead of the flow run, and how it ends."""

from __future__ import annotations

import subprocess
import sys


def test_the_flow_module_loads_what_creating_a_flow_run_would_import_later() -> None:
    # Loaded while the temporary Prefect API starts, not after it answered.
    script = "import sys, flows.ab_matrix; print('fastapi.encoders' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "True", done.stderr


def test_the_script_ends_without_a_final_garbage_collection() -> None:
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "from critiquebench.cli import main\n"
        "sys.argv = ['critiquebench', '--help']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("frozen True")
